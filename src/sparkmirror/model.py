"""Frozen value objects shared across layers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
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


@dataclass(frozen=True, slots=True)
class PartitionSummary:
    """What one task wrote for one source partition in one micro-batch.

    `sync_upstream[i]`/`sync_downstream[i]` pair a record's upstream offset with the offset the target
    assigned to it (taken from delivery reports): each pair is an exact offset sync. `sync_runs[i]` says
    whether the records up to the next sync were all replicated one after the other. `next_upstream` is
    one past the last offset read, including records skipped because the target already had them.
    """

    topic: str
    partition: int
    remote_topic: str
    records: int
    skipped: int
    bytes: int
    next_upstream: int
    sync_upstream: tuple[int, ...] = ()
    sync_downstream: tuple[int, ...] = ()
    sync_runs: tuple[bool, ...] = ()  # per sync: every record up to the next sync was replicated contiguously

    @property
    def syncs(self) -> list[tuple[int, int]]:
        return list(zip(self.sync_upstream, self.sync_downstream, strict=True))


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
