"""Replication lag: how far the target is behind the source, in records and in seconds (pure).

MM2 has no such metric (KIP-971 was never merged). Here a partition's lag is the source's end offset minus
the replicated position (the next source offset to copy), except that offsets holding no record a consumer
sees (transaction markers, aborted records) do not count: a partition with only those left is caught up.
Its lag in seconds is the age of the oldest record not replicated yet, so it keeps growing while replication
stands still, and a flow's recovery point (RPO) is what its partitions would lose if the source died now.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PartitionLag:
    """One source partition's lag, measured at `measured_ms` (epoch milliseconds).

    `oldest_timestamp_ms` is the timestamp of the first record at or after the position (None when the lag
    is 0, or when that record could not be read in time: the seconds are then unknown).
    """

    topic: str
    partition: int
    end_offset: int
    position: int
    records: int
    oldest_timestamp_ms: int | None
    measured_ms: int

    def seconds(self, now_ms: int) -> float | None:
        """Age of the oldest unreplicated record at `now_ms`: 0 when caught up, None when unknown."""
        if self.records == 0:
            return 0.0
        if self.oldest_timestamp_ms is None:
            return None
        return max(0, now_ms - self.oldest_timestamp_ms) / 1000.0


def partition_lag(topic: str, partition: int, end_offset: int, position: int, oldest_timestamp_ms: int | None,
                  has_record: bool, measured_ms: int) -> PartitionLag:
    """The lag of one partition from its end offset and replicated position.

    `has_record` says whether offsets [position, end_offset) hold a record a consumer sees; when they do not
    (only transaction markers are left), the partition is caught up whatever the offsets say.
    """
    behind = max(0, end_offset - position)
    if behind == 0 or not has_record:
        return PartitionLag(topic, partition, end_offset, position, 0, None, measured_ms)
    return PartitionLag(topic, partition, end_offset, position, behind, oldest_timestamp_ms, measured_ms)


@dataclass(frozen=True, slots=True)
class RecoveryPoint:
    """What a flow would lose if its source died now: the records not replicated yet and the age of the
    oldest of them (seconds None when some lagging partition's oldest record could not be read)."""

    records: int
    seconds: float | None


def recovery_point(lags: Iterable[PartitionLag], now_ms: int) -> RecoveryPoint:
    """A flow's lag: records summed over its partitions, seconds the oldest unreplicated record's age."""
    records, seconds, unknown = 0, 0.0, False
    for lag in lags:
        records += lag.records
        age = lag.seconds(now_ms)
        if age is None:
            unknown = True
        else:
            seconds = max(seconds, age)
    return RecoveryPoint(records, None if unknown else seconds)
