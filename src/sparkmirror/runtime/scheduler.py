"""Scheduler: named periodic jobs run by one loop; one job failing never stops another."""

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
    interval_s: float | None  # None: runs once, then is dropped
    run: Callable[[], object]
    due: float


class Scheduler:
    """Jobs keyed by name; `run_due()` runs each job whose time has come and logs (not raises) its failure.

    One caller at a time runs the due jobs (the loop's thread, or a test calling `run_due`), so no two runs of
    one job ever overlap. `stats` may be shared by several schedulers (a flow's loops, one after the other).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic, stats: dict[str, JobStats] | None = None) -> None:
        self._clock = clock
        self._jobs: dict[str, _Job] = {}
        self._lock = threading.Lock()  # jobs are (re)scheduled from one thread and may run on another
        self._turn = threading.Lock()  # held while due jobs run
        self.stats: dict[str, JobStats] = {} if stats is None else stats  # by job name; entries replaced, never mutated
        self.running: str | None = None  # the job in progress, named when a stop has to abandon it

    def every(self, name: str, interval_s: float, run: Callable[[], object], first_in_s: float | None = None) -> None:
        """(Re)schedule a job; it first runs after `first_in_s` (default: one interval)."""
        delay = interval_s if first_in_s is None else first_in_s
        with self._lock:
            self._jobs[name] = _Job(name, interval_s, run, self._clock() + delay)

    def once(self, name: str, run: Callable[[], object], in_s: float = 0.0) -> None:
        """Run a job once, `in_s` from now (replacing any job of that name)."""
        with self._lock:
            self._jobs[name] = _Job(name, None, run, self._clock() + in_s)

    def scheduled(self, name: str) -> bool:
        """Whether a job of this name waits for its turn."""
        with self._lock:
            return name in self._jobs

    def cancel(self, prefix: str) -> None:
        """Drop every job whose name starts with `prefix` (a flow's jobs are named `<flow>: <job>`); a job in
        progress finishes."""
        with self._lock:
            for name in [n for n in self._jobs if n.startswith(prefix)]:
                del self._jobs[name]

    def run_until(self, stop: threading.Event, poll_s: float = 0.2) -> None:
        """Run due jobs until `stop` is set: the body of a loop on a thread of its own."""
        while not stop.is_set():
            self.run_due(stop.is_set)
            stop.wait(poll_s)

    def run_due(self, should_stop: Callable[[], bool] = lambda: False) -> None:
        """Run the jobs that are due, in the order they were scheduled, until `should_stop()`."""
        with self._turn:
            with self._lock:
                jobs = list(self._jobs.values())
            for job in jobs:
                if should_stop():
                    return
                if self._clock() < job.due or self._jobs.get(job.name) is not job:
                    continue
                self._run(job)

    def _run(self, job: _Job) -> None:
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
        if job.interval_s is None:
            with self._lock:
                if self._jobs.get(job.name) is job:
                    del self._jobs[job.name]
        else:
            job.due = self._clock() + job.interval_s
