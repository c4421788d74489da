"""FlowProgress: what each flow has written so far, fed by batch summaries (thread-safe)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from sparkmirror.model import PartitionSummary


@dataclass(frozen=True, slots=True)
class ProgressSnapshot:
    """Totals of one flow at one moment."""

    flow: str
    batches: int
    records: int
    bytes: int
    elapsed_s: float
    per_partition: dict[tuple[str, int], int]
    retries: int = 0  # restarts after a failure (with back-off), since the process started

    @property
    def records_per_s(self) -> float:
        return self.records / self.elapsed_s if self.elapsed_s > 0 else 0.0


class FlowProgress:
    """Accumulates PartitionSummary rows; elapsed time runs from the first written batch."""

    def __init__(self, flow: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.flow = flow
        self._clock = clock
        self._lock = threading.Lock()
        self._batches = 0
        self._records = 0
        self._bytes = 0
        self._per_partition: dict[tuple[str, int], int] = {}
        self._started: float | None = None
        self._last: float | None = None
        self._retries = 0

    def record_retry(self) -> None:
        with self._lock:
            self._retries += 1

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
                self._per_partition[key] = self._per_partition.get(key, 0) + s.records
            if summaries:
                self._last = now

    def snapshot(self) -> ProgressSnapshot:
        with self._lock:
            elapsed = (self._last - self._started) if self._started is not None and self._last else 0.0
            return ProgressSnapshot(self.flow, self._batches, self._records, self._bytes, elapsed,
                                    dict(self._per_partition), self._retries)
