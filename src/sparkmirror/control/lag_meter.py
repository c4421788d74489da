"""LagMeter: sparkmirror's `measure lag` job: how far a flow's target is behind its source.

Every `sparkmirror.measure.lag.interval.seconds` (5 s by default) it reads the source's end offsets of the
partitions the flow's query reads, compares them with the replicated positions, and for the partitions
behind reads the first record not replicated yet, whose timestamp dates the lag (offsets/lag.py). MM2 has no
such metric; `sparkmirror status` computes the same from the clusters alone (mirror_status.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from sparkmirror.config.model import FlowConfig
from sparkmirror.control.ports import Clients, TopicAdmin
from sparkmirror.offsets.lag import PartitionLag, partition_lag

PROBE_TIMEOUT_S = 2.0

# (assignment: source topic -> partitions read, positions: (topic, partition) -> next offset to replicate)
Positions = Callable[[], tuple[Mapping[str, int], Mapping[tuple[str, int], int]]]


class LagMeter:
    """Runs on its flow's side loop; `latest` is replaced whole, so any thread may read it.

    It reads only the flow's client settings, which no live change touches (a change restarts the flow with
    a new LagMeter), so it keeps the FlowConfig it was made with.
    """

    def __init__(self, flow: FlowConfig, source: TopicAdmin, clients: Clients, positions: Positions,
                 clock_ms: Callable[[], int] = lambda: int(time.time() * 1000)) -> None:
        self.flow = flow
        self._source = source
        self._clients = clients
        self._positions = positions
        self._clock_ms = clock_ms
        self.latest: tuple[PartitionLag, ...] | None = None  # None until measured

    def measure(self) -> tuple[PartitionLag, ...]:
        assignment, positions = self._positions()
        if not assignment:
            self.latest = ()
            return self.latest
        marks = self._source.watermarks_of(assignment)
        now = self._clock_ms()
        ends = {(t, p): high for t, parts in marks.items() for p, (_low, high) in parts.items()}
        starts = {key: positions.get(key, _low_of(marks, key)) for key in ends}
        behind = {key: (starts[key], end) for key, end in ends.items() if end > starts[key]}
        oldest = self._clients.oldest_records(self.flow.source_consumer.rdkafka, behind,
                                              PROBE_TIMEOUT_S) if behind else {}
        lags = []
        for (topic, partition), end in sorted(ends.items()):
            key = (topic, partition)
            # Absent: not read in time, so count it as behind with an unknown age; None: only markers left.
            has_record = key not in oldest or oldest[key] is not None
            lags.append(partition_lag(topic, partition, end, starts[key], oldest.get(key), has_record, now))
        self.latest = tuple(lags)
        return self.latest


def _low_of(marks: Mapping[str, Mapping[int, tuple[int, int]]], key: tuple[str, int]) -> int:
    """A partition with no position yet starts at its low watermark (the flow's reset policy decides later)."""
    return marks[key[0]][key[1]][0]
