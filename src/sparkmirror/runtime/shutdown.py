"""Shutdown: how a process stops its flows, bounded so that a cluster that is down never keeps it alive.

`serve` runs the control loop on a thread and only watches it, so a stop asked for (a signal) never waits for a
client call: the stop runs against one deadline (runtime/stopping.StopDeadline). The order: every loop told to
end; the queries stopped (their acknowledged positions are what a restart needs); the control-plane clients
closed, of each flow only once the control loop and that flow's loops are idle (never a client under a call);
the heartbeat pairs' writers likewise; the coordination group left, only now that nothing of ours writes; the
Spark session ended. A step still running at the deadline is abandoned and named.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from sparkmirror.runtime.assignment import Assignment
from sparkmirror.runtime.engine import Engine
from sparkmirror.runtime.flows import Flows
from sparkmirror.runtime.heartbeats import HeartbeatPairs
from sparkmirror.runtime.hot_reload import HotReload
from sparkmirror.runtime.scheduler import Scheduler
from sparkmirror.runtime.status import Status
from sparkmirror.runtime.stopping import DEFAULT_STOP_TIMEOUT_S, Activity, StopDeadline

logger = logging.getLogger(__name__)

LOOP_END_WAIT_S = 1.0
"""How long a stop waits for a flow's loops to end (a job in progress that is not blocked ends well within)
before it leaves the flow's clients to the process's exit."""


class Shutdown:
    """Stops what the supervisor started; `stop` and `shutdown` may be called from any thread, once."""

    def __init__(self, stop: threading.Event, flows: Flows, heartbeats: HeartbeatPairs, hot_reload: HotReload,
                 assignment: Assignment, engine: Engine, control: Scheduler, activity: Activity,
                 status: Callable[[], Status]) -> None:
        self._stop = stop
        self._flows = flows
        self._heartbeats = heartbeats
        self._hot_reload = hot_reload
        self._assignment = assignment
        self._engine = engine
        self._control = control
        self._activity = activity
        self._status = status

    def serve(self, control_loop: Callable[[], None], stop_requested: Callable[[], bool],
              stop_timeout_s: float = DEFAULT_STOP_TIMEOUT_S) -> list[str]:
        """`control_loop` (start, then the loop) on a thread; return once `stop_requested()` or the loop ends.

        Returns the steps the stop had to abandon; the control loop's error (every flow failed to start, a
        cluster unreachable at start) is raised afterwards.
        """
        errors: list[BaseException] = []

        def control() -> None:
            try:
                control_loop()
            except BaseException as exc:  # noqa: BLE001 - raised again by the calling thread
                errors.append(exc)

        thread = threading.Thread(target=control, name="sparkmirror-control", daemon=True)
        thread.start()
        while thread.is_alive() and not stop_requested():
            thread.join(0.2)
        if thread.is_alive():
            logger.info("stopping (deadline %.0f s)", stop_timeout_s)
        abandoned = self.shutdown(stop_timeout_s, control=thread)
        if errors and stop_requested():  # e.g. the JVM got the same SIGTERM, or a start cut short
            logger.info("stopped while the control loop ended with: %s", errors[0])
        elif errors:
            raise errors[0]
        return abandoned

    def stop(self) -> None:
        """Stop every flow (writers stop between records, acknowledged positions are saved), release clients;
        not bounded, and the Spark session stays (tests, and runs that only catch up)."""
        self._tell_loops_to_end()
        self._hot_reload.stop_watching()
        runners = list(self._flows.runners.values())
        for runner in runners:
            runner.stop_replication()
        for runner in runners:
            if self._loops_ended(runner.flow.name, LOOP_END_WAIT_S):
                runner.close_clients()
        self._heartbeats.close()
        self._assignment.ownership.close()

    def shutdown(self, timeout_s: float = DEFAULT_STOP_TIMEOUT_S, control: threading.Thread | None = None) -> list[str]:
        """Stop the flows, then end the Spark session; every step bounded by one deadline of `timeout_s`.
        Returns the steps abandoned at the deadline.

        `control` is the thread running the control loop: while it is still inside a step (a client call to a
        cluster that is down), the clients it uses are left to the process's exit rather than closed under it.
        """
        deadline = StopDeadline(timeout_s)
        self._tell_loops_to_end()
        deadline.run("stop watching the properties file", self._hot_reload.stop_watching)
        idle = control is None or deadline.join(control, f"the control loop ({self.activity})")
        runners = list(self._flows.runners.values())
        for runner in runners:  # queries first: their acknowledged positions are what a restart needs
            deadline.run(f"stop the query of flow {runner.flow.name}", runner.stop_replication)
        for runner in runners:  # a flow's loops still in a job (waiting on a cluster) are named and left
            ended = self._loops_ended(runner.flow.name, min(LOOP_END_WAIT_S, deadline.remaining()), deadline)
            if idle and ended:
                deadline.run(f"close the clients of flow {runner.flow.name}", runner.close_clients)
        self._heartbeats.close(deadline)  # those of loops that are idle
        # Only now that nothing of ours writes: the others take our flows over as soon as we leave.
        deadline.run("leave the coordination group", self._assignment.ownership.close)
        deadline.run("stop the Spark session", self._engine.stop)
        for line in self._status().lines():
            logger.info("at stop: %s", line)
        return deadline.abandoned

    @property
    def activity(self) -> str:
        """What the control loop is doing, for a stop that has to abandon it."""
        job = self._control.running
        return f"in job '{job}'" if job else self._activity.now

    def _tell_loops_to_end(self) -> None:
        self._stop.set()
        self._heartbeats.stop()
        self._flows.loops.stop()

    def _loops_ended(self, flow: str, timeout_s: float, deadline: StopDeadline | None = None) -> bool:
        """Whether the flow's loops have ended; if not, the job they are in is abandoned (its clients too)."""
        if self._flows.loops.ended(flow, timeout_s):
            return True
        job = f"the job '{self._flows.loops.running(flow)}' and the clients of flow {flow}"
        if deadline is not None:
            deadline.abandon(job, "still running")
        else:
            logger.info("stop: %s left to the process's exit (still running)", job)
        return False
