"""KafkaClients: the librdkafka implementations of the control plane's ports (control/ports.Clients).

One admin client per cluster and settings (MM2 resolves admin settings per flow and side, so two flows may
need different ones), shared by every flow that uses them; other clients belong to the job that made them.
"""

from __future__ import annotations

from collections.abc import Mapping

from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.groups import ConsumerGroups
from sparkmirror.kafka.internal_log import InternalRecord, InternalTopicReader, InternalTopicWriter, read_internal_topic
from sparkmirror.kafka.membership import GroupMembership
from sparkmirror.kafka.records import has_records_between, oldest_records
from sparkmirror.kafka.transactions import transactions_problem


class KafkaClients:
    def __init__(self) -> None:
        self._admins: dict[tuple, ClusterAdmin] = {}

    def admin(self, alias: str, settings: Mapping[str, str]) -> ClusterAdmin:
        key = (alias, tuple(sorted(settings.items())))
        if key not in self._admins:
            self._admins[key] = ClusterAdmin(alias, dict(settings))
        return self._admins[key]

    def groups(self, alias: str, settings: Mapping[str, str]) -> ConsumerGroups:
        return ConsumerGroups(alias, dict(settings))

    def writer(self, alias: str, settings: Mapping[str, str]) -> InternalTopicWriter:
        return InternalTopicWriter(alias, dict(settings))

    def reader(self, alias: str, settings: Mapping[str, str], topic: str) -> InternalTopicReader:
        return InternalTopicReader(alias, dict(settings), topic)

    def read_all(self, alias: str, settings: Mapping[str, str], topic: str) -> list[InternalRecord]:
        return read_internal_topic(alias, dict(settings), topic)

    def has_records(self, settings: Mapping[str, str], topic: str, partition: int, start: int, end: int) -> bool:
        """Whether offsets [start, end) of a source partition hold a record (not only transaction markers)."""
        return has_records_between(dict(settings), topic, partition, start, end)

    def transactions_problem(self, alias: str, settings: Mapping[str, str], transactional_id: str) -> str | None:
        return transactions_problem(alias, settings, transactional_id)

    def membership(self, alias: str, settings: Mapping[str, str], group: str, session_timeout_ms: int,
                   client_id: str) -> GroupMembership:
        return GroupMembership(alias, settings, group, session_timeout_ms, client_id)

    def oldest_records(self, settings: Mapping[str, str], ranges: Mapping[tuple[str, int], tuple[int, int]],
                       timeout_s: float) -> dict[tuple[str, int], int | None]:
        return oldest_records(dict(settings), ranges, timeout_s)
