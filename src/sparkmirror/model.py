"""Frozen value objects shared across layers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType


@dataclass(frozen=True, slots=True)
class NewTopicSpec:
    """A topic to create: name, partition count, replication factor (-1 = broker default), topic configs."""

    name: str
    partitions: int
    replication_factor: int = -1
    configs: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class TopicConfigEntry:
    """One topic config as a broker reports it; `is_default` as Java's ConfigEntry.isDefault()."""

    name: str
    value: str
    is_default: bool


@dataclass(frozen=True, slots=True, order=True)
class TopicAcl:
    """One ACL binding on a topic resource, in Kafka's own words (what `kafka-acls.sh --list` shows).

    `pattern_type` is LITERAL (`name` is a topic, or `*` for every topic) or PREFIXED (`name` is a prefix);
    `operation` and `permission` are Kafka's names (READ, WRITE, ALL, ...; ALLOW or DENY).
    """

    pattern_type: str
    name: str
    principal: str
    host: str
    operation: str
    permission: str

    def __str__(self) -> str:
        resource = f"topic '{self.name}'" if self.pattern_type == "LITERAL" else f"topics prefixed '{self.name}'"
        return f"{self.permission} {self.principal} {self.operation} on {resource} from host {self.host}"


@dataclass(frozen=True, slots=True)
class PartitionSummary:
    """What the record path's writer reports for one source partition: the records the target acknowledged
    since its last report.

    This dataclass is the report's schema: the JVM writer (`PartitionLog.report`) sends exactly these fields
    by name, and `from_report` refuses any other set. `sync_upstream[i]`/`sync_downstream[i]` pair a
    record's upstream offset with the offset the target assigned to it: each pair is an exact offset sync
    (offsets/syncs.py). `sync_runs[i]` says whether the records up to the next sync were all replicated one
    after the other. `next_upstream` is one past the last offset read, including records skipped because
    the target already had them, a transform or filter dropped (`dropped`, counted in `skipped` too) or, with
    `errors.tolerance = all`, a transform failed on (`failed`, likewise). `value_bytes` counts values only
    (MM2's `byte-count`). `record_age_ms` (at send) and `replication_latency_ms` (at acknowledgement) are
    (count, sum, min, max, last) of now minus the source timestamp over the records sent or acknowledged since
    the last report; empty when there were none.
    """

    topic: str
    partition: int
    records: int
    skipped: int
    bytes: int
    next_upstream: int
    sync_upstream: tuple[int, ...] = ()
    sync_downstream: tuple[int, ...] = ()
    sync_runs: tuple[bool, ...] = ()  # per sync: every record up to the next sync was replicated contiguously
    value_bytes: int = 0
    record_age_ms: tuple[int, ...] = ()  # (count, sum, min, max, last) or ()
    replication_latency_ms: tuple[int, ...] = ()
    dropped: int = 0
    failed: int = 0

    @property
    def syncs(self) -> list[tuple[int, int]]:
        return list(zip(self.sync_upstream, self.sync_downstream, strict=True))

    @classmethod
    def from_report(cls, row: Mapping[str, object]) -> PartitionSummary:
        """One partition of a writer report (decoded JSON); a report with other fields is a version mismatch
        between the JVM writer and this package, so it fails loudly rather than being half read."""
        names = [f.name for f in fields(cls)]
        if set(row) != set(names):
            raise ValueError(f"writer report fields {sorted(row)} differ from {names}: the record path's JVM "
                             f"classes and this package are from different versions; run `sparkmirror setup`")
        return cls(**{name: tuple(value) if isinstance(value, list) else value  # type: ignore[arg-type]
                      for name, value in row.items()})


@dataclass(frozen=True, slots=True)
class KafkaRecord:
    """A record as read back from a cluster (tests, demo, verification)."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    timestamp_type: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class Member:
    """A process of a coordination group (control/coordination.py) as Kafka describes it: its member id, its
    client id (host and pid), its partitions."""

    member_id: str
    client_id: str
    host: str
    partitions: tuple[int, ...]
