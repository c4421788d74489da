"""Scheduler: named periodic jobs run from the supervisor's loop; one job failing never stops another."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

logger = logging.getLogger(__name__)


def backoff_s(attempt: int, first_s: float, cap_s: float) -> float:
    """Wait before retry number `attempt` (1, 2, ...): `first_s`, doubling, at most `cap_s`."""
    return min(cap_s, first_s * 2 ** max(0, attempt - 1))


@dataclass
class _Job:
    name: str
    interval_s: float
    run: Callable[[], None]
    due: float
    failures: int = 0


class Scheduler:
    """Jobs keyed by name; `run_due()` runs each job whose time has come and logs (not raises) its failure."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._jobs: dict[str, _Job] = {}
        self.running: str | None = None  # the job in progress, named when a stop has to abandon it

    def every(self, name: str, interval_s: float, run: Callable[[], None], first_in_s: float | None = None) -> None:
        """(Re)schedule a job; it first runs after `first_in_s` (default: one interval)."""
        delay = interval_s if first_in_s is None else first_in_s
        self._jobs[name] = _Job(name, interval_s, run, self._clock() + delay)

    def cancel(self, prefix: str) -> None:
        """Drop every job whose name starts with `prefix` (a flow's jobs are named `<flow>: <job>`)."""
        for name in [n for n in self._jobs if n.startswith(prefix)]:
            del self._jobs[name]

    def run_due(self, should_stop: Callable[[], bool] = lambda: False) -> None:
        for job in list(self._jobs.values()):
            if should_stop():
                return
            if self._clock() < job.due or self._jobs.get(job.name) is not job:
                continue
            self.running = job.name
            try:
                job.run()
                job.failures = 0
            except Exception as exc:  # noqa: BLE001 - isolation is the point: log and keep the others going
                job.failures += 1
                logger.error("%s failed (%d in a row): %s", job.name, job.failures, exc)
            finally:
                self.running = None
            job.due = self._clock() + job.interval_s
