"""FlowProgress: what each flow has written so far, fed by the writers' reports (thread-safe).

Besides totals it keeps, per source partition, MM2's per-partition metrics: cumulative record and value-byte
counts, their rates, and min/max/avg of record age and replication latency over a sliding window
(`sampled.SampledStat`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from sparkmirror.model import PartitionSummary
from sparkmirror.sampled import WINDOW_S, Distribution, SampledStat

# The recent rate's window: short, so that a copy that stopped shows 0 within seconds (the window rate keeps a
# minute's average), in 1 s slots.
RECENT_S = 5.0
RECENT_SLOT_S = 1.0

# Upper bounds (seconds) of the report-duration histogram: a micro-batch, or a Real-Time Mode report interval.
DURATION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


@dataclass(frozen=True, slots=True)
class PartitionProgress:
    """One source partition: counts since the process started, rates and distributions over the window."""

    records: int
    value_bytes: int
    records_per_s: float
    value_bytes_per_s: float
    record_age_ms: Distribution | None  # None until a record was sent
    replication_latency_ms: Distribution | None  # None until a record was acknowledged
    dropped: int = 0  # records a transform or filter dropped (not written; their offsets passed)
    failed: int = 0  # records skipped because a transform failed on them (errors.tolerance = all)


@dataclass(frozen=True, slots=True)
class Durations:
    """A histogram of report (micro-batch or Real-Time Mode interval) durations: cumulative bucket counts."""

    buckets: tuple[tuple[float, int], ...]  # (upper bound s, count of durations <= it), +Inf excluded
    count: int
    sum_s: float
    last_s: float | None


@dataclass(frozen=True, slots=True)
class ProgressSnapshot:
    """Totals of one flow at one moment."""

    flow: str
    batches: int
    records: int
    bytes: int
    elapsed_s: float
    retries: int = 0  # restarts after a failure (with back-off), since the process started
    written_again: int = 0  # records written to the target a second time (control/positions.written_again)
    partitions: Mapping[tuple[str, int], PartitionProgress] = field(default_factory=dict)
    durations: Durations | None = None
    # (source topic, partition) -> records removed at the source before they were copied (retention, DeleteRecords)
    removed: Mapping[tuple[str, int], int] = field(default_factory=dict)
    recent_records_per_s: float = 0.0  # over the last RECENT_S: 0 soon after the copy stops
    since_last_write_s: float | None = None  # since the last report that wrote records; None before the first

    @property
    def removed_records(self) -> int:
        return sum(self.removed.values())

    @property
    def per_partition(self) -> dict[tuple[str, int], int]:
        """Records replicated per source partition."""
        return {key: p.records for key, p in self.partitions.items()}

    @property
    def records_per_s(self) -> float:
        return self.records / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def window_records_per_s(self) -> float:
        """Records per second over the last window (falls to 0 when replication stops)."""
        return sum(p.records_per_s for p in self.partitions.values())

    @property
    def window_value_bytes_per_s(self) -> float:
        return sum(p.value_bytes_per_s for p in self.partitions.values())


class _Partition:
    def __init__(self) -> None:
        self.records = 0
        self.value_bytes = 0
        self.dropped = 0
        self.failed = 0
        self.flow_window = SampledStat()  # count: records, sum: value bytes
        self.age: SampledStat | None = None
        self.latency: SampledStat | None = None

    def add(self, now: float, s: PartitionSummary) -> None:
        self.records += s.records
        self.value_bytes += s.value_bytes
        self.dropped += s.dropped
        self.failed += s.failed
        if s.records or s.value_bytes:
            self.flow_window.add(now, s.records, s.value_bytes, 0, 0)
        if s.record_age_ms:
            self.age = self.age or SampledStat()
            _add_stats(self.age, now, s.record_age_ms)
        if s.replication_latency_ms:
            self.latency = self.latency or SampledStat()
            _add_stats(self.latency, now, s.replication_latency_ms)

    def snapshot(self, now: float, span_s: float) -> PartitionProgress:
        records, value_bytes = self.flow_window.totals(now)
        span = max(span_s, 1e-3)
        return PartitionProgress(self.records, self.value_bytes, records / span, value_bytes / span,
                                 _distribution(self.age, now), _distribution(self.latency, now), self.dropped,
                                 self.failed)


def _add_stats(stat: SampledStat, now: float, stats: tuple[int, ...]) -> None:
    count, total, low, high, last = stats
    stat.add(now, count, total, low, high)
    stat.last = float(last)


def _distribution(stat: SampledStat | None, now: float) -> Distribution | None:
    return None if stat is None else stat.distribution(now)


class FlowProgress:
    """Accumulates PartitionSummary rows; elapsed time runs from the first written batch."""

    def __init__(self, flow: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.flow = flow
        self._clock = clock
        self._lock = threading.Lock()
        self._batches = 0
        self._records = 0
        self._bytes = 0
        self._partitions: dict[tuple[str, int], _Partition] = {}
        self._started: float | None = None
        self._last: float | None = None
        self._retries = 0
        self._written_again = 0
        self._removed: dict[tuple[str, int], int] = {}
        self._recent = SampledStat(RECENT_S, RECENT_SLOT_S)  # count: records of the whole flow
        self._bucket_counts = [0] * len(DURATION_BUCKETS)
        self._durations = 0
        self._durations_sum = 0.0
        self._last_duration: float | None = None

    def record_retry(self) -> None:
        with self._lock:
            self._retries += 1

    def record_written_again(self, records: int) -> None:
        with self._lock:
            self._written_again += records

    def record_removed(self, topic: str, partition: int, records: int) -> None:
        """Records of a source partition removed before they were copied (control/positions.StartPlan.removed)."""
        with self._lock:
            self._removed[(topic, partition)] = self._removed.get((topic, partition), 0) + records

    def record(self, batch_id: int, summaries: list[PartitionSummary], started_at: float) -> None:
        """Add one micro-batch; `started_at` is the clock value when the batch began writing."""
        now = self._clock()
        with self._lock:
            self._batches += 1
            if summaries and self._started is None:
                self._started = started_at
            for s in summaries:
                self._records += s.records
                self._bytes += s.bytes
                key = (s.topic, s.partition)
                partition = self._partitions.get(key)
                if partition is None:
                    partition = self._partitions[key] = _Partition()
                partition.add(now, s)
            if summaries:
                self._last = now
                self._recent.add(now, sum(s.records for s in summaries), 0, 0, 0)
                self._add_duration(max(0.0, now - started_at))

    def _add_duration(self, seconds: float) -> None:
        self._durations += 1
        self._durations_sum += seconds
        self._last_duration = seconds
        for i, bound in enumerate(DURATION_BUCKETS):
            if seconds <= bound:
                self._bucket_counts[i] += 1

    def snapshot(self) -> ProgressSnapshot:
        now = self._clock()
        with self._lock:
            elapsed = (self._last - self._started) if self._started is not None and self._last else 0.0
            span = min(WINDOW_S, now - self._started) if self._started is not None else WINDOW_S
            partitions = {key: p.snapshot(now, span) for key, p in self._partitions.items()}
            durations = Durations(tuple(zip(DURATION_BUCKETS, self._bucket_counts, strict=True)), self._durations,
                                  self._durations_sum, self._last_duration)
            recent, _ = self._recent.totals(now)
            recent_span = min(RECENT_S, now - self._started) if self._started is not None else RECENT_S
            return ProgressSnapshot(self.flow, self._batches, self._records, self._bytes, elapsed,
                                    self._retries, self._written_again, partitions, durations, dict(self._removed),
                                    recent / max(recent_span, 1e-3),
                                    None if self._last is None else max(0.0, now - self._last))
