"""CPU seconds and peak RSS of a whole process tree, sampled from /proc.

A replicator is several processes (sparkmirror: Python driver, Spark JVM, Python workers; MM2: one JVM),
so both figures are summed over the root process and all of its descendants.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _stat(pid: str) -> tuple[int, float, int] | None:
    """(parent pid, cpu seconds, rss bytes) of a live process."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2:].split()  # after "pid (comm) "
    ppid, utime, stime, rss_pages = int(fields[1]), int(fields[11]), int(fields[12]), int(fields[21])
    return ppid, (utime + stime) / _TICKS, rss_pages * _PAGE


def tree_snapshot(root: int) -> dict[int, tuple[float, int]]:
    """pid -> (cpu seconds, rss bytes) for root and its descendants."""
    stats = {int(p): s for p in os.listdir("/proc") if p.isdigit() and (s := _stat(p)) is not None}
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            out[pid] = (stats[pid][1], stats[pid][2])
            todo.extend(children.get(pid, ()))
    return out


@dataclass
class Usage:
    cpu_s: float = 0.0
    peak_rss_mb: float = 0.0


def idle_cpu_s_per_minute(root: int, seconds: float) -> float:
    """CPU seconds a minute the process tree under `root` uses over the next `seconds` (processes started meanwhile
    counted from zero)."""
    before = tree_snapshot(root)
    time.sleep(seconds)
    after = tree_snapshot(root)
    used = sum(cpu - before.get(pid, (0.0, 0))[0] for pid, (cpu, _) in after.items())
    return round(used / seconds * 60, 2)


class TreeSampler(threading.Thread):
    """Samples a process tree until stop(); CPU is the last value seen per pid, summed."""

    def __init__(self, root: int, interval_s: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.interval_s = interval_s
        self._stop_event = threading.Event()
        self._cpu: dict[int, float] = {}
        self._peak_rss = 0

    def run(self) -> None:
        while True:
            self.sample()
            if self._stop_event.wait(self.interval_s):
                return

    def sample(self) -> None:
        snap = tree_snapshot(self.root)
        for pid, (cpu, _) in snap.items():
            self._cpu[pid] = max(cpu, self._cpu.get(pid, 0.0))
        self._peak_rss = max(self._peak_rss, sum(rss for _, rss in snap.values()))

    def stop(self) -> Usage:
        """Take a last sample (call before the tree is killed) and stop."""
        self.sample()
        self._stop_event.set()
        self.join()
        return Usage(cpu_s=round(sum(self._cpu.values()), 2), peak_rss_mb=round(self._peak_rss / 2**20, 1))
