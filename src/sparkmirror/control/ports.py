"""The control plane's view of the clusters: small ports that `kafka/` implements and unit tests fake.

The jobs in this room (topic sync, config sync, ACL sync, heartbeats, checkpoints, group offset sync) observe and
act only through these, so they hold no client library and each is tested in memory; `runtime/` wires
the librdkafka implementations in (`runtime/clients.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Protocol

from sparkmirror.model import Member, NewTopicSpec, TopicAcl, TopicConfigEntry

Header = tuple[str, bytes | None]
OutgoingRecord = tuple[bytes | None, bytes | None] | tuple[bytes | None, bytes | None, Sequence[Header]]
GroupOffsets = dict[tuple[str, int], tuple[int, str]]
"""(topic, partition) -> (committed offset, commit metadata)."""


class TopicAdmin(Protocol):
    """Topics and their configs on one cluster (kafka.admin.ClusterAdmin)."""

    alias: str

    def probe(self, timeout_s: float = ...) -> None:
        """Raise unless the cluster answers a metadata request within `timeout_s`."""
        ...

    def topic_partitions(self) -> dict[str, int]: ...

    def topic_ids(self, topics: list[str]) -> dict[str, str]: ...

    def topic_configs(self, topics: list[str]) -> dict[str, list[TopicConfigEntry]]: ...

    def topic_config_values(self, topics: list[str], key: str) -> dict[str, str]: ...

    def create_topics(self, specs: list[NewTopicSpec],
                      replication_factor_key: str = ...) -> dict[str, Exception | None]: ...

    def create_partitions(self, totals: dict[str, int]) -> dict[str, Exception | None]: ...

    def alter_topic_configs(self, alterations: Mapping[str, Sequence[object]]) -> dict[str, Exception | None]: ...

    def watermarks_of(self, partitions: Mapping[str, int]) -> dict[str, dict[int, tuple[int, int]]]: ...

    def topic_acls(self) -> frozenset[TopicAcl] | None:
        """Every topic ACL (LITERAL and PREFIXED); None when the cluster has no authorizer."""
        ...

    def create_acls(self, acls: Collection[TopicAcl]) -> dict[TopicAcl, Exception | None]: ...

    def delete_acls(self, acls: Collection[TopicAcl]) -> dict[TopicAcl, Exception | None]: ...


class AclLedger(Protocol):
    """The topic ACLs sparkmirror created on a flow's target (control/acl_ledger.py keeps them in a topic there):
    ACL sync deletes only these."""

    def load(self) -> frozenset[TopicAcl]: ...

    def save(self, acls: frozenset[TopicAcl]) -> None: ...


class FormerAclLedger(Protocol):
    """Where earlier versions kept a flow's ACL ledger (runtime/state.AclLedgerFile: the state dir's
    created-acls.json), taken over once by control/acl_ledger.TopicAclLedger."""

    def load(self) -> frozenset[TopicAcl] | None:
        """What it holds; None when there is nothing to take over."""
        ...

    def retire(self) -> str:
        """Keep it from being taken over again; says what became of it, for the log."""
        ...


class GroupAdmin(Protocol):
    """Consumer groups on one cluster (kafka.groups.ConsumerGroups)."""

    def list_groups(self) -> list[str]: ...

    def committed(self, groups: list[str], partitions: Collection[tuple[str, int]]) -> dict[str, GroupOffsets]:
        """Each group's committed offsets on `partitions` ((topic, partition) pairs) only; {} for a group
        without any there."""
        ...

    def states(self, groups: Sequence[str]) -> Mapping[str, str]:
        """Each group's state (EMPTY, STABLE, ...; DEAD when the cluster does not have it)."""
        ...

    def commit(self, group: str, offsets: Mapping[tuple[str, int], tuple[int, str]], keep: bool = True) -> None:
        """Set offsets of a group without members (refused while it has some), as often as a flow reports
        (kafka.groups: a consumer's commit); `keep`: keep the consumer for the group's next commit."""
        ...

    def close(self) -> None: ...


class LogRecord(Protocol):
    """One record of an internal topic as read back."""

    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]
    timestamp_ms: int


class LogWriter(Protocol):
    """Acknowledged writes to partition 0 of internal topics (kafka.internal_log.InternalTopicWriter)."""

    def write(self, topic: str, records: Iterable[OutgoingRecord]) -> int: ...

    def close(self) -> None: ...


class LogReader(Protocol):
    """Incremental reads of partition 0 of one internal topic (kafka.internal_log.InternalTopicReader)."""

    def read_new(self) -> Sequence[LogRecord]: ...

    def close(self) -> None: ...


class Membership(Protocol):
    """This process in its file's coordination group (kafka.membership.GroupMembership): callbacks name partitions."""

    @property
    def heartbeat_interval_ms(self) -> int: ...

    def join(self, on_assigned: Callable[[set[int]], None], on_revoked: Callable[[set[int]], None],
             on_lost: Callable[[set[int]], None]) -> None: ...

    def poll(self, timeout_s: float) -> None: ...

    def member_id(self) -> str: ...

    def members(self, timeout_s: float) -> list[Member]: ...

    def close(self) -> None: ...


class Clients(Protocol):
    """Where a flow's control jobs get their clients: one factory, so tests hand in memory fakes."""

    def admin(self, alias: str, settings: Mapping[str, str]) -> TopicAdmin: ...

    def groups(self, alias: str, settings: Mapping[str, str]) -> GroupAdmin: ...

    def writer(self, alias: str, settings: Mapping[str, str]) -> LogWriter: ...

    def reader(self, alias: str, settings: Mapping[str, str], topic: str) -> LogReader: ...

    def read_all(self, alias: str, settings: Mapping[str, str], topic: str) -> Sequence[LogRecord]: ...

    def has_records(self, settings: Mapping[str, str], topic: str, partition: int, start: int, end: int) -> bool:
        """Whether offsets [start, end) of a partition hold a record (not only transaction markers)."""
        ...

    def transactions_problem(self, alias: str, settings: Mapping[str, str], transactional_id: str) -> str | None:
        """None when cluster `alias` can run a transaction for `transactional_id`, else what to fix."""
        ...

    def membership(self, alias: str, settings: Mapping[str, str], group: str, session_timeout_ms: int,
                   client_id: str) -> Membership:
        """A member of consumer group `group` on `alias`, subscribed to the topic of the same name (not joined yet)."""
        ...

    def oldest_records(self, settings: Mapping[str, str], ranges: Mapping[tuple[str, int], tuple[int, int]],
                       timeout_s: float) -> Mapping[tuple[str, int], int | None]:
        """Per (topic, partition) -> [start, end): the timestamp of the first record in the range, None when it
        holds none (only transaction markers), absent when that could not be read in time."""
        ...
