"""Windowed statistics for metrics (pure): Kafka's SampledStat idea, kept small.

MM2 keeps its per-partition min/max/avg metrics in two 30 s samples. Here a window of WINDOW_S is summed
into SLOT_S slots, so recording costs a few additions and memory stays bounded however often values come.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

WINDOW_S = 60.0
SLOT_S = 5.0


@dataclass(frozen=True, slots=True)
class Distribution:
    """Min, max and average over the window, and the last value recorded (kept after the window empties, as
    MM2's last-value gauges are). min/max/avg are None when nothing fell in the window."""

    last: float
    min: float | None
    max: float | None
    avg: float | None


class SampledStat:
    """Values summed into slots: (slot, count, sum, min, max), dropped once older than the window.

    Not thread-safe: its owner holds a lock around it.
    """

    def __init__(self, window_s: float = WINDOW_S, slot_s: float = SLOT_S) -> None:
        self._window_s = window_s
        self._slot_s = slot_s
        self._slots: deque[list[float]] = deque()
        self.last = 0.0

    def record(self, now_s: float, value: float) -> None:
        self.add(now_s, 1, value, value, value)
        self.last = value

    def add(self, now_s: float, count: float, total: float, low: float, high: float) -> None:
        """Several values at once: their count, sum, min and max."""
        slot = now_s // self._slot_s
        if self._slots and self._slots[-1][0] == slot:
            s = self._slots[-1]
            s[1] += count
            s[2] += total
            s[3] = min(s[3], low)
            s[4] = max(s[4], high)
        else:
            self._slots.append([slot, count, total, low, high])
        self._prune(now_s)

    def _prune(self, now_s: float) -> None:
        oldest = (now_s - self._window_s) // self._slot_s
        while self._slots and self._slots[0][0] <= oldest:
            self._slots.popleft()

    def totals(self, now_s: float) -> tuple[float, float]:
        """Count and sum over the window."""
        self._prune(now_s)
        return sum(s[1] for s in self._slots), sum(s[2] for s in self._slots)

    def distribution(self, now_s: float) -> Distribution:
        count, total = self.totals(now_s)
        if not self._slots:
            return Distribution(self.last, None, None, None)
        return Distribution(self.last, min(s[3] for s in self._slots), max(s[4] for s in self._slots),
                            total / count if count else None)
