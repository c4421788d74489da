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

    `first_*`/`last_*` pair each record's upstream offset with the offset the target assigned to it
    (taken from delivery reports), so both pairs are exact offset syncs.
    """

    topic: str
    partition: int
    remote_topic: str
    records: int
    bytes: int
    first_upstream: int
    last_upstream: int
    first_downstream: int
    last_downstream: int


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
