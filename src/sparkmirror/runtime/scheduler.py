"""Scheduler: named periodic jobs run from the supervisor's loop; one job failing never stops another."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

logger = logging.getLogger(__name__)


def backoff_s(attempt: int, first_s: float, cap_s: float) -> float:
    """Wait before retry number `attempt` (1, 2, ...): `first_s`, doubling, at most `cap_s`."""
    return min(cap_s, first_s * 2 ** max(0, attempt - 1))


@dataclass
class JobStats:
    """Runs and failures of one job name since the process started (kept across reschedules)."""

    runs: int = 0
    failures: int = 0
    failures_in_a_row: int = 0
    last_error: str | None = None


@dataclass
class _Job:
    name: str
    interval_s: float
    run: Callable[[], None]
    due: float


class Scheduler:
    """Jobs keyed by name; `run_due()` runs each job whose time has come and logs (not raises) its failure."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._jobs: dict[str, _Job] = {}
        self._lock = threading.Lock()  # jobs are (re)scheduled from one thread and may run on another
        self.stats: dict[str, JobStats] = {}  # by job name; read by status snapshots (replaced, never mutated)
        self.running: str | None = None  # the job in progress, named when a stop has to abandon it

    def every(self, name: str, interval_s: float, run: Callable[[], None], first_in_s: float | None = None) -> None:
        """(Re)schedule a job; it first runs after `first_in_s` (default: one interval)."""
        delay = interval_s if first_in_s is None else first_in_s
        with self._lock:
            self._jobs[name] = _Job(name, interval_s, run, self._clock() + delay)

    def cancel(self, prefix: str) -> None:
        """Drop every job whose name starts with `prefix` (a flow's jobs are named `<flow>: <job>`)."""
        with self._lock:
            for name in [n for n in self._jobs if n.startswith(prefix)]:
                del self._jobs[name]

    def run_until(self, stop: threading.Event, poll_s: float = 0.2) -> None:
        """Run due jobs until `stop` is set: the body of a loop on a thread of its own."""
        while not stop.is_set():
            self.run_due(stop.is_set)
            stop.wait(poll_s)

    def run_due(self, should_stop: Callable[[], bool] = lambda: False) -> None:
        with self._lock:
            jobs = list(self._jobs.values())
        for job in jobs:
            if should_stop():
                return
            if self._clock() < job.due or self._jobs.get(job.name) is not job:
                continue
            self.running = job.name
            stats = self.stats.get(job.name, JobStats())
            try:
                job.run()
                self.stats[job.name] = JobStats(stats.runs + 1, stats.failures, 0, stats.last_error)
            except Exception as exc:  # noqa: BLE001 - isolation is the point: log and keep the others going
                in_a_row = stats.failures_in_a_row + 1
                self.stats[job.name] = JobStats(stats.runs + 1, stats.failures + 1, in_a_row, str(exc))
                logger.error("%s failed (%d in a row): %s", job.name, in_a_row, exc)
            finally:
                self.running = None
            job.due = self._clock() + job.interval_s
