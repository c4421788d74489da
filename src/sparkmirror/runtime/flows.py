"""Flows: the configuration's flows by name, each run here or standing by, and their lives in this process.

A flow run here is started (its control plane, its query), gets its jobs on loops of its own
(runtime/flow_loops.py), is checked by the control loop each turn, and is stopped for good when it is lost to
another process, removed or restarted by a reload, or the process ends. Flows are independent: one that fails
is reported and retried with back-off (5 s, doubling up to 5 min) while the others keep replicating.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable
from pathlib import Path

from sparkmirror.config.model import FlowConfig
from sparkmirror.control.plane import Job
from sparkmirror.control.ports import Clients
from sparkmirror.errors import PipelineError
from sparkmirror.runtime.engine import Engine
from sparkmirror.runtime.flow_loops import FlowLoops
from sparkmirror.runtime.flow_runner import FlowRunner
from sparkmirror.runtime.preflight import flow_admins, probe_clusters
from sparkmirror.runtime.scheduler import Scheduler, backoff_s
from sparkmirror.runtime.stopping import Activity

logger = logging.getLogger(__name__)

RETRY_FIRST_S = 5.0
RETRY_MAX_S = 300.0
RETRY_BUSY_S = 1.0  # a retry finding the flow's last job still running looks again this soon


def flow_dir(state_dir: Path, flow: FlowConfig) -> Path:
    """The flow's folder in the state dir."""
    return state_dir / "flows" / re.sub(r"[^A-Za-z0-9_.\-]", "_", f"{flow.source}-to-{flow.target}")


class Flows:
    """The runners by flow name (`runners`): those `owned` run here, the others stand by.

    Called from the control loop's thread (and from the one that runs `Supervisor.start`); the flows' jobs run
    on their loops (`loops`), their retries on the control loop's scheduler (`control`). A flow's failure is
    its own: logged, kept in its status and retried, never raised, but for the process's only flow at start-up
    and, in a run that only catches up, by `check`.
    """

    def __init__(self, flows: Iterable[FlowConfig], state_dir: Path, clients: Clients, engine: Engine,
                 control: Scheduler, loops: FlowLoops, stop: threading.Event, activity: Activity,
                 until_caught_up: bool = False) -> None:
        self._state_dir = state_dir
        self._clients = clients
        self._engine = engine
        self._control = control
        self.loops = loops
        self._stop = stop
        self._activity = activity
        self.until_caught_up = until_caught_up
        self._failures_in_a_row: dict[str, int] = {}  # flow name -> failed starts/runs since it last ran well
        self.runners: dict[str, FlowRunner] = {}
        for flow in flows:
            self.runners[flow.name] = self.standing_by(flow)

    def standing_by(self, flow: FlowConfig) -> FlowRunner:
        """A runner for `flow` that stands by until the ownership gives the flow to this process."""
        source, target = flow_admins(self._clients, flow)
        runner = FlowRunner(flow, source, target, flow_dir(self._state_dir, flow), self._engine, self._clients,
                            self.until_caught_up, self._real_time_slots_in_use)
        runner.owned = False
        return runner

    def _real_time_slots_in_use(self, asking: FlowRunner) -> int:
        return sum(r.real_time_slots for r in self.runners.values() if r is not asking)

    # -- run here, stand by ----------------------------------------------------------------------------
    def run_here(self, name: str, lease_ms: int, raise_error: bool = False) -> Exception | None:
        """Start a flow the ownership gave this process; returns its start's error (raised if `raise_error`)."""
        runner = self.runners[name]
        if runner.owned:
            return None
        if runner.stopped:  # it ran here before: a fresh runner continues from the committed positions
            runner = self.runners[name] = self.standing_by(runner.flow)
        runner.owned, runner.lease_ms = True, lease_ms
        return self.start(runner, raise_error=raise_error)

    def stand_by(self, name: str, why: str) -> None:
        """Stop a flow this process runs (another runs it now, or a new group will say who): it stands by."""
        runner = self.runners[name]
        if not runner.owned:
            return
        self._activity.now = f"stopping flow {name} ({why})"
        self._retire(runner)
        self.runners[name] = self.standing_by(runner.flow)
        self._failures_in_a_row.pop(name, None)

    def add(self, flow: FlowConfig) -> None:
        """A flow a reload added: standing by until the coordination group gives it to a process."""
        runner = self.runners[flow.name] = self.standing_by(flow)
        try:
            probe_clusters([runner])
        except Exception as exc:  # noqa: BLE001 - a new flow's bad cluster must not stop the others
            logger.error("flow %s cannot start: %s", flow.name, exc)

    def remove(self, name: str) -> None:
        """A flow a reload removed: stopped if it runs here, forgotten."""
        runner = self.runners.pop(name)
        if runner.owned:
            self._retire(runner)
        else:
            self._cancel(name)

    def replace(self, flow: FlowConfig, restart: bool, lease_ms: int) -> None:
        """A flow whose settings a reload changed: restarted on them (`restart`), or given them live."""
        name = flow.name
        runner = self.runners[name]
        if not runner.owned:  # standing by: it starts with the new settings when this process gets it
            self.runners[name] = self.standing_by(flow)
        elif restart:
            logger.info("flow %s restarts with its new settings", name)
            self._retire(runner)
            fresh = self.runners[name] = self.standing_by(flow)
            fresh.owned, fresh.lease_ms = True, lease_ms
            self.start(fresh)
        else:
            runner.flow = flow
            if runner.failure is None:  # else its pending retry starts it, with these settings
                self.schedule(runner, refresh_now=True)  # a filter change takes effect now, not at the next refresh

    def _retire(self, runner: FlowRunner) -> None:
        """Stop the flow here for good: its query now, its clients on its loop once that loop is idle."""
        name = runner.flow.name
        self._cancel(name)
        runner.stop_replication()
        self.loops.retire(name, runner.close_clients)

    def _cancel(self, name: str) -> None:
        self.loops.cancel(name)
        self._control.cancel(f"{name}: ")

    # -- start, retry, check --------------------------------------------------------------------------
    def start(self, runner: FlowRunner, raise_error: bool = False) -> Exception | None:
        """Start one flow and its jobs; a failure is the flow's (logged, returned), not the process's,
        unless `raise_error` (the process's only flow at start-up)."""
        if self._stop.is_set():
            return None
        self._activity.now = f"starting flow {runner.flow.name}"
        try:
            runner.start()
        except Exception as exc:  # one flow's failure must not stop the others
            if raise_error:
                raise
            runner.failure = str(exc)
            logger.error("flow %s failed to start: %s", runner.flow.name, exc)
            self._retry_later(runner)
            return exc
        if not self.until_caught_up:
            self.schedule(runner)
        return None

    def schedule(self, runner: FlowRunner, refresh_now: bool = False) -> None:
        """The flow's jobs on its loops: its query's topic refresh, then its control plane's
        (control/plane.FlowControl); with `refresh_now`, the refresh runs at once too."""
        flow = runner.flow
        refresh = Job("refresh topics", flow.refresh_topics, runner.refresh, at_start=refresh_now)
        self.loops.schedule(flow.name, [refresh, *runner.control.jobs()])
        if refresh_now and not flow.refresh_topics.enabled:
            self.loops.run_once(flow.name, "refresh topics", runner.refresh)

    def _retry_later(self, runner: FlowRunner) -> None:
        """Schedule the failed flow's next start; each failure in a row doubles the wait."""
        if self.until_caught_up or self._stop.is_set():
            return
        name = runner.flow.name
        self._cancel(name)
        attempt = self._failures_in_a_row.get(name, 0) + 1
        self._failures_in_a_row[name] = attempt
        delay = backoff_s(attempt, RETRY_FIRST_S, RETRY_MAX_S)
        logger.info("flow %s: retry %d in %.0f s", name, attempt, delay)
        self._control.every(f"{name}: retry", delay, lambda: self._retry(runner))

    def _retry(self, runner: FlowRunner) -> None:
        name = runner.flow.name
        if self.runners.get(name) is not runner or runner.failure is None:
            self._control.cancel(f"{name}: retry")
            return  # replaced by a reload, or recovered meanwhile
        running = self.loops.running(name) or ("refresh topics" if runner.busy else None)
        if running is not None:  # a job of the failed run still waits on a cluster: start once it returned
            logger.debug("flow %s: retry waits for its job '%s'", name, running)
            self._control.every(f"{name}: retry", RETRY_BUSY_S, lambda: self._retry(runner))
            return
        self._control.cancel(f"{name}: retry")
        logger.info("flow %s: retrying after: %s", name, runner.failure)
        try:
            runner.retry()
        except Exception as exc:  # noqa: BLE001 - the flow's failure, retried again later
            runner.failure = str(exc)
            logger.error("flow %s: retry failed: %s", name, exc)
            self._retry_later(runner)
            return
        self.schedule(runner)

    def check(self) -> int:
        """The control loop's turn: how many queries are active; a flow newly failed is retried later."""
        active = 0
        failed: list[FlowRunner] = []
        for runner in list(self.runners.values()):
            was_failed = runner.failure is not None
            active += runner.check()
            if runner.failure is not None:
                failed.append(runner)
                if not was_failed:
                    logger.error("flow %s failed: %s", runner.flow.name, runner.failure)
                    self._cancel(runner.flow.name)
                    self._retry_later(runner)
            elif runner.healthy_for(RETRY_MAX_S):
                self._failures_in_a_row.pop(runner.flow.name, None)
        if failed and self.until_caught_up:
            first = failed[0]
            raise PipelineError(f"flow {first.flow.name} failed: {first.failure}")
        lost = self._engine.lost() if failed else None
        if lost is not None:  # no retry can start a query: end the process (its supervisor restarts it)
            raise PipelineError(f"the Spark driver stopped unexpectedly: {lost}; flow {failed[0].flow.name} "
                                f"failed: {failed[0].failure}")
        return active
