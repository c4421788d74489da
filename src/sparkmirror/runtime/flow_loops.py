"""FlowLoops: each flow's periodic jobs on loops of its own, so a job blocked on one cluster delays only its flow.

A write to a cluster that is down waits out its acknowledgement timeout (30 s), an admin call its own. So each
flow this process runs has two loops, each a Scheduler on a daemon thread: its jobs (the query's topic refresh
and its control plane's, control/plane.FlowControl.jobs) and its side jobs (those that only read the source,
`measure lag`). A cluster that is down then delays neither another flow's checkpoints and heartbeats, nor the
control loop (its checks of the queries, the coordination group's changes, reloads), nor the lag measurements
of the flow writing to it. MM2 gives each connector a scheduler of its own for the same reason.

A flow's loops last as long as its runner runs here. Its failure only cancels their jobs: the retry schedules
them again on the same threads, so two runs of one job never overlap. Its stop retires them: the jobs are
cancelled, then the loop closes the flow's clients itself once the job in progress (maybe blocked on that
cluster) has returned, and its threads end; a client is never closed under a call. Only `start` starts
threads; tests run the loops on their own thread with `run_due`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable

from sparkmirror.control.plane import Job
from sparkmirror.runtime.scheduler import JobStats, Scheduler

logger = logging.getLogger(__name__)


class FlowLoop:
    """The two loops of one flow: `jobs` and `side`. Retired (`retire`), it runs a last step on the jobs loop's
    thread once that loop is idle, and both threads end."""

    def __init__(self, flow: str, clock: Callable[[], float], stats: dict[str, JobStats]) -> None:
        self.flow = flow
        self.jobs = Scheduler(clock, stats)
        self.side = Scheduler(clock, stats)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._last: Callable[[], object] | None = None
        self._threads: list[threading.Thread] = []

    @property
    def running(self) -> str | None:
        """The job one of its loops is in, if any."""
        return self.jobs.running or self.side.running

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def cancel(self) -> None:
        """Drop every job; one in progress finishes."""
        self.jobs.cancel("")
        self.side.cancel("")

    def start(self) -> None:
        if self._threads:
            return
        for loop, suffix in ((self.jobs, ""), (self.side, " (side jobs)")):
            thread = threading.Thread(target=self._run, args=(loop,), name=f"sparkmirror-flow {self.flow}{suffix}",
                                      daemon=True)  # never waited for but at a stop, and then within its deadline
            self._threads.append(thread)
            thread.start()

    def stop(self) -> None:
        """End the loops at their next turn (a job in progress finishes first)."""
        self._stop.set()

    def retire(self, last: Callable[[], object]) -> None:
        """Cancel the jobs, end the loops and run `last` (closing the flow's clients) once the jobs loop is idle."""
        self.cancel()
        with self._lock:
            self._last = last
        self._stop.set()

    def run_due(self) -> None:
        """Run both loops' due jobs on the calling thread (tests); a retired loop without threads finishes here."""
        self.jobs.run_due(self._stop.is_set)
        self.side.run_due(self._stop.is_set)
        if self._stop.is_set() and not self._threads:
            self._finish()

    @property
    def finished(self) -> bool:
        """Retired, its last step run and its threads ended."""
        return self._last is None and self.ended(0)

    def ended(self, timeout_s: float) -> bool:
        """Whether its threads have ended (waiting at most `timeout_s`); a loop never started has none."""
        deadline = time.monotonic() + timeout_s
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return not any(thread.is_alive() for thread in self._threads)

    def _run(self, loop: Scheduler) -> None:
        loop.run_until(self._stop)
        if loop is self.jobs:
            self._finish()

    def _finish(self) -> None:
        with self._lock:
            last, self._last = self._last, None
        if last is None:
            return
        try:
            last()
        except Exception as exc:  # noqa: BLE001 - the flow is gone: nothing to retry, only to report
            logger.warning("flow %s: closing its clients failed: %s", self.flow, exc)


class FlowLoops:
    """The loops of every flow this process runs, by flow name, and those retired but not yet ended.

    Scheduled, cancelled and retired from one thread (the control loop's); `stats` (every flow's jobs, named
    `<flow>: <job>`, kept across a flow's loops) and `running` may be read from any.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.stats: dict[str, JobStats] = {}
        self._loops: dict[str, FlowLoop] = {}
        self._retired: list[FlowLoop] = []
        self._started = False

    @property
    def names(self) -> tuple[str, ...]:
        """The flows that have loops (running or idle after a failure)."""
        return tuple(self._loops)

    def schedule(self, flow: str, jobs: Iterable[Job]) -> None:
        """Run `jobs` (enabled ones; `side_loop` ones on the side loop) on the flow's loops, replacing what they ran."""
        loop = self._loops.get(flow)
        if loop is None:
            loop = self._loops[flow] = FlowLoop(flow, self._clock, self.stats)
            if self._started:
                loop.start()
        loop.cancel()
        for job in jobs:
            if job.schedule.enabled:
                (loop.side if job.side_loop else loop.jobs).every(f"{flow}: {job.name}", job.schedule.interval_s,
                                                                   job.run, first_in_s=0 if job.at_start else None)

    def run_once(self, flow: str, job: str, run: Callable[[], object]) -> None:
        """Run a job once, as soon as the flow's jobs loop is free (the flow must have loops)."""
        self._loops[flow].jobs.once(f"{flow}: {job}", run)

    def cancel(self, flow: str) -> None:
        """Drop the flow's jobs (a failure: its retry schedules them again); its threads stay, idle."""
        loop = self._loops.get(flow)
        if loop is not None:
            loop.cancel()

    def retire(self, flow: str, last: Callable[[], object]) -> None:
        """The flow stops here: its jobs are dropped, its loops end, and `last` runs once the jobs loop is idle
        (on that loop's thread: a job blocked on a cluster that is down never holds the caller). Without loops,
        `last` runs at once."""
        loop = self._loops.pop(flow, None)
        if loop is None:
            last()
            return
        loop.retire(last)
        self._retired = [r for r in self._retired if not r.finished] + [loop]

    def start(self) -> None:
        """Start the threads of every flow's loops, and from now on those of flows scheduled later."""
        self._started = True
        for loop in self._loops.values():
            loop.start()

    def stop(self) -> None:
        """End every loop at its next turn; retired ones still run their last step."""
        for loop in self._loops.values():
            loop.stop()

    def run_due(self) -> None:
        """Run every loop's due jobs on the calling thread (tests), retired loops' last steps included."""
        for loop in [*self._loops.values(), *self._retired]:
            loop.run_due()

    def running(self, flow: str) -> str | None:
        """The job the flow's loops are in, if any."""
        loop = self._loops.get(flow)
        return loop.running if loop is not None else None

    def ended(self, flow: str, timeout_s: float) -> bool:
        """Whether the flow's loops have ended after `stop` (waiting at most `timeout_s`): only then are its
        clients free to close."""
        loop = self._loops.get(flow)
        return loop is None or loop.ended(timeout_s)
