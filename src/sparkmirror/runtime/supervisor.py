"""Supervisor: checks the clusters, runs one FlowRunner per enabled flow, their periodic jobs, hot reload.

It only wires: planning lives in control/, admin I/O in kafka/, the record path in pipeline/, one flow's
life in runtime/flow_runner.py. Flows are independent: one that fails is reported and retried with back-off
(5 s, doubling up to 5 min) while the others keep replicating. The process ends with an error only when
every flow fails to start (a problem of the set-up, not of a moment).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sparkmirror.config import keys
from sparkmirror.config.client_settings import ClientSettings
from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.model import FlowConfig
from sparkmirror.control.acl_sync import AclPreview, AclSync, MemoryLedger
from sparkmirror.control.coordination import pair_unit, plan_coordination
from sparkmirror.control.ports import Clients, TopicAdmin
from sparkmirror.control.topic_sync import create_internal_topic, observe_plan
from sparkmirror.control.topics import TopicPlan
from sparkmirror.errors import ConfigError, PipelineError
from sparkmirror.pipeline import options
from sparkmirror.runtime.engine import Engine
from sparkmirror.runtime.flow_runner import FlowRunner
from sparkmirror.runtime.heartbeats import HeartbeatPairs
from sparkmirror.runtime.ownership import Ownership, SoleOwnership
from sparkmirror.runtime.scheduler import Scheduler, backoff_s
from sparkmirror.runtime.state import check_state_dir
from sparkmirror.runtime.status import JobStatus, Status
from sparkmirror.runtime.stopping import DEFAULT_STOP_TIMEOUT_S, StopDeadline

logger = logging.getLogger(__name__)

RETRY_FIRST_S = 5.0
RETRY_MAX_S = 300.0
STATUS_LOG_INTERVAL_S = 60.0


class Supervisor:
    """Runs the enabled flows of one config (optionally only those targeting `target_clusters`).

    With `config_path`, the file is watched (and SIGHUP handled by the CLI through `request_reload`): a
    valid new version is applied flow by flow, an invalid one is logged and the running config stays.
    `clients` (the Kafka clients of the control plane) and `engine` (Spark) are handed in by tests; by
    default they are the real ones.
    """

    def __init__(self, config: MirrorMakerConfig, state_dir: Path,
                 target_clusters: tuple[str, ...] | None = None, until_caught_up: bool = False,
                 config_path: Path | None = None, check_state: bool = True, clients: Clients | None = None,
                 engine: Engine | None = None, clock: Callable[[], float] = time.monotonic,
                 ownership: Ownership | SoleOwnership | None = None) -> None:
        from sparkmirror.pipeline.class_host import ensure_class_host

        ensure_class_host()  # the file's own replication policy and filters run there, if it names any
        self.config = config
        self.state_dir = Path(state_dir)
        self.target_clusters = target_clusters
        self.until_caught_up = until_caught_up
        self.config_path = config_path
        if clients is None:
            from sparkmirror.runtime.clients import KafkaClients

            clients = KafkaClients()
        if engine is None:
            from sparkmirror.runtime.engine import SparkEngine

            engine = SparkEngine(config.spark)
        self.clients = clients
        self.engine = engine
        if check_state:  # before any client: a state dir that cannot keep positions must stop us first
            check_state_dir(self.state_dir, [self._flow_dir(f) for f in config.enabled_flows(target_clusters)])
        self.flows: dict[str, FlowRunner] = {f.name: self._runner(f) for f in config.enabled_flows(target_clusters)}
        # MM2's clusterPairs that no flow beats for; a run that only catches up beats for none
        self._pairs = {} if until_caught_up else {pair_unit(p): p for p in config.heartbeat_only_pairs(target_clusters)}
        # Which flows and pairs this process runs: those its file's coordination group gives it (standby for the
        # rest); a batch that only catches up runs them all, alone.
        self.ownership = ownership or self._ownership_for(config)
        self.scheduler = Scheduler(clock)
        # Jobs that only read the source (`measure lag`) run on a loop of their own: a target that is down
        # blocks the control jobs writing to it for their timeouts, which is when lag matters most.
        self.side_scheduler = Scheduler(clock)
        self._side_thread: threading.Thread | None = None
        # MM2's clusterPairs: the pairs no running flow beats for, each target cluster on a loop of its own
        self.heartbeats = HeartbeatPairs(self.clients, clock)
        self._stop = threading.Event()
        self._reload_requested = threading.Event()
        self._watcher = None
        self._reloader = None
        self._failures_in_a_row: dict[str, int] = {}  # flow name -> failed starts/runs since it last ran well
        self._phase = "starting"  # what the control loop is doing, for a stop that has to abandon it

    # -- clients ---------------------------------------------------------------------------------------
    def admin(self, alias: str, settings: ClientSettings) -> TopicAdmin:
        """An admin client for a cluster; MM2 resolves admin settings per flow and side, so one per settings."""
        return self.clients.admin(alias, settings.rdkafka)

    def _flow_admins(self, flow: FlowConfig) -> tuple[TopicAdmin, TopicAdmin]:
        return self.admin(flow.source, flow.source_admin), self.admin(flow.target, flow.target_admin)

    def _runner(self, flow: FlowConfig) -> FlowRunner:
        source, target = self._flow_admins(flow)
        runner = FlowRunner(flow, source, target, self._flow_dir(flow), self.engine, self.clients,
                            self.until_caught_up, self._real_time_slots_in_use)
        runner.owned = False  # standing by until the ownership gives it to this process
        return runner

    def _ownership_for(self, config: MirrorMakerConfig) -> Ownership | SoleOwnership:
        units = [*self.flows, *self._pairs]
        plan = None if self.until_caught_up else plan_coordination(config, self.target_clusters)
        return SoleOwnership(units) if plan is None else Ownership(plan, self.clients)

    def _flow_dir(self, flow: FlowConfig) -> Path:
        return self.state_dir / "flows" / _safe(f"{flow.source}-to-{flow.target}")

    def _real_time_slots_in_use(self, asking: FlowRunner) -> int:
        return sum(r.real_time_partitions for r in self.flows.values() if r is not asking)

    def _real_time_slots_wanted(self) -> int:
        """Source partitions of the Real-Time Mode flows now: each needs a task slot of its own."""
        wanted = 0
        for runner in self.flows.values():
            if runner.trigger().mode == options.REAL_TIME:
                plan = runner.plan or self.plan_flow(runner.flow)
                wanted += sum(plan.source_partitions.values())
        return wanted

    def check_clusters(self, runners: list[FlowRunner] | None = None) -> None:
        """Probe every cluster the flows touch, in parallel; the first unreachable one is raised."""
        admins = {id(a): a for r in (runners or self.flows.values()) for a in (r.source, r.target)}
        with ThreadPoolExecutor(max_workers=max(1, len(admins))) as pool:
            for future in [pool.submit(a.probe) for a in admins.values()]:
                future.result()

    # -- plan (the CLI's `plan` command and tests) -------------------------------------------------------
    def plan_flow(self, flow: FlowConfig) -> TopicPlan:
        """What a flow replicates and what the target needs first; reads both clusters, changes nothing."""
        return observe_plan(flow, *self._flow_admins(flow))

    def plan_acls(self, flow: FlowConfig, topics: TopicPlan) -> AclPreview:
        """The topic ACLs a flow would sync, against what the target holds now; changes nothing."""
        source, target = self._flow_admins(flow)
        return AclSync(lambda: flow, source, target, MemoryLedger(), lambda: topics.remote_topics).preview()

    # -- run -----------------------------------------------------------------------------------------
    def start(self) -> None:
        """Check clusters, then start every flow; a flow whose start fails is reported, the others run."""
        self._phase = "checking the clusters"
        self.check_clusters()
        if self.flows:
            self.engine.prepare(self._real_time_slots_wanted)
            self._check_sql_rules()
        if not self.until_caught_up:
            self._create_heartbeats_topics()
        self._phase = "joining the coordination group"
        self.ownership.start(self._renew_leases)
        if not self.ownership.wait_joined(2 * self._session_timeout_s):
            logger.warning("coordination: no assignment from the coordination group yet; standing by for every "
                           "flow until one comes")
        owns_all = len(self.flows) == 1
        errors, started = self._apply_ownership(raise_error=owns_all)
        standby = sorted(name for name, runner in self.flows.items() if not runner.owned)
        if standby:
            logger.info("coordination: %s stands by for %s (another process of the group runs them)",
                        self.ownership.me, ", ".join(standby))
        if errors and len(errors) == started == len(self.flows):
            raise errors[0]  # this process runs every flow and none would run: the first cause is its error
        if self.config_path is not None and not self.until_caught_up:
            self._watch(self.config_path)
        if not self.until_caught_up:
            self.scheduler.every("log status", STATUS_LOG_INTERVAL_S, self._log_status)
            self._side_thread = threading.Thread(target=self.side_scheduler.run_until, args=(self._stop,),
                                                 name="sparkmirror-side-jobs", daemon=True)  # never waited for
            self._side_thread.start()
            self.heartbeats.start()

    def _check_sql_rules(self) -> None:
        """A SQL rule Spark cannot compile stops the start, as a configuration error naming its key."""
        with_rules = [r.flow for r in self.flows.values() if r.flow.sql_rules]
        if with_rules:
            self._phase = "checking the flows' SQL rules"
            problems = self.engine.check_sql_rules(with_rules)
            if problems:
                raise ConfigError(problems, self.config.source)

    @property
    def _session_timeout_s(self) -> float:
        return self.config.coordination.session_timeout_ms / 1000

    # -- ownership: which flows and pairs this process runs ------------------------------------------------
    def _apply_ownership(self, raise_error: bool = False) -> tuple[list[Exception], int]:
        """Start the units the group gave this process, stop those it took away (in the order it did);
        returns the errors of the flows that failed to start and how many flows were started."""
        errors: list[Exception] = []
        started = 0
        for change in self.ownership.take_changes():
            if change.gained:
                for unit in sorted(change.units):
                    if unit in self.flows:
                        started += 1
                        error = self._gain_flow(unit, raise_error)
                        if error is not None:
                            errors.append(error)
                    elif unit in self._pairs and self._pairs[unit].name not in self.heartbeats.names:
                        self.heartbeats.add(self._pairs[unit])
            else:
                for unit in sorted(change.units):
                    if unit in self.flows:
                        self._lose_flow(unit)
                    elif unit in self._pairs:
                        self.heartbeats.remove(self._pairs[unit].name)
                self.ownership.stopped(change.units)
        return errors, started

    def _gain_flow(self, name: str, raise_error: bool) -> Exception | None:
        runner = self.flows[name]
        if runner.owned:
            return None
        if runner.stopped:  # it ran here before: a fresh runner continues from the committed positions
            runner = self.flows[name] = self._runner(runner.flow)
        runner.owned = True
        runner.lease_ms = self.ownership.lease_ms
        return self._start_runner(runner, raise_error=raise_error)

    def _lose_flow(self, name: str) -> None:
        runner = self.flows[name]
        if not runner.owned:
            return
        self._cancel(f"{name}: ")
        self._phase = f"stopping flow {name} (another process runs it now)"
        runner.stop()
        self.flows[name] = self._runner(runner.flow)  # standing by
        self._failures_in_a_row.pop(name, None)

    def _renew_leases(self, units: frozenset[str], valid_ms: int) -> None:
        """The ownership thread's tick: the writers of the flows this process still runs may go on."""
        for unit in units:
            runner = self.flows.get(unit)
            if runner is not None and runner.owned:
                runner.renew_lease(valid_ms)

    def _create_heartbeats_topics(self) -> None:
        """Create the heartbeats topics this process writes into the flows' source clusters before any flow
        plans its topics.

        A flow replicates its source's heartbeats topic (MM2 always does), and that topic is often written by
        this very process: by the reverse heartbeat-only pair, or by the reverse flow. Created only at the first
        beat, it appeared just after the flow's first plan, so the first topic refresh restarted the query:
        measured in Real-Time Mode, every partition stalled for about a second (the latency benchmark's p99).
        Only the flows' sources (probed by check_clusters), so a down cluster that only receives heartbeats
        does not hold up the start; one that refuses is left to the flow's start or the pair's next beat.
        """
        sources = {r.flow.source for r in self.flows.values()}
        pairs = [r.flow for r in self.flows.values() if r.flow.emit_heartbeats.enabled] + list(self._pairs.values())
        for pair in pairs:  # whichever process runs them: the topic must be there before any flow plans
            if pair.target not in sources:
                continue
            try:
                create_internal_topic(self.admin(pair.target, pair.target_admin), pair.heartbeats_topic,
                                      pair.heartbeats_topic_replication_factor,
                                      keys.HEARTBEATS_TOPIC_REPLICATION_FACTOR)
            except Exception as exc:  # noqa: BLE001 - reported by the flow's start or the pair's beats
                logger.debug("heartbeats topic of %s not created before the flows: %s", pair.name, exc)

    def _cancel(self, prefix: str) -> None:
        self.scheduler.cancel(prefix)
        self.side_scheduler.cancel(prefix)

    def _start_runner(self, runner: FlowRunner, raise_error: bool = False) -> Exception | None:
        """Start one flow and its jobs; a failure is the flow's (logged, returned), not the process's,
        unless `raise_error` (the process's only flow at start-up)."""
        if self._stop.is_set():
            return None
        self._phase = f"starting flow {runner.flow.name}"
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
            self._schedule(runner)
        return None

    def _retry_later(self, runner: FlowRunner) -> None:
        """Schedule the failed flow's next start; each failure in a row doubles the wait."""
        if self.until_caught_up or self._stop.is_set():
            return
        name = runner.flow.name
        self._cancel(f"{name}: ")
        attempt = self._failures_in_a_row.get(name, 0) + 1
        self._failures_in_a_row[name] = attempt
        delay = backoff_s(attempt, RETRY_FIRST_S, RETRY_MAX_S)
        logger.info("flow %s: retry %d in %.0f s", name, attempt, delay)
        self.scheduler.every(f"{name}: retry", delay, lambda: self._retry(runner))

    def _retry(self, runner: FlowRunner) -> None:
        name = runner.flow.name
        self.scheduler.cancel(f"{name}: retry")
        if self.flows.get(name) is not runner or runner.failure is None:
            return  # replaced by a reload, or recovered meanwhile
        logger.info("flow %s: retrying after: %s", name, runner.failure)
        try:
            runner.retry()
        except Exception as exc:  # noqa: BLE001 - the flow's failure, retried again later
            runner.failure = str(exc)
            logger.error("flow %s: retry failed: %s", name, exc)
            self._retry_later(runner)
            return
        self._schedule(runner)

    def _schedule(self, runner: FlowRunner) -> None:
        """The flow's jobs: its query's topic refresh, then its control plane's (control/plane.FlowControl)."""
        name = runner.flow.name
        self._cancel(f"{name}: ")
        if runner.flow.refresh_topics.enabled:
            self.scheduler.every(f"{name}: refresh topics", runner.flow.refresh_topics.interval_s, runner.refresh)
        for job in runner.control.jobs():
            if job.schedule.enabled:
                scheduler = self.side_scheduler if job.side_loop else self.scheduler
                scheduler.every(f"{name}: {job.name}", job.schedule.interval_s, job.run,
                                first_in_s=0 if job.at_start else None)

    def wait(self, poll_s: float = 0.5) -> None:
        """Block until stop() or, with until_caught_up, until every query finished.

        A failed flow is logged and retried with back-off; with until_caught_up, its error is raised.
        """
        while not self._stop.is_set():
            self._phase = "applying the coordination group's changes"
            self._apply_ownership()
            self._phase = "checking the flows"
            try:
                active = self._check_flows()
            except PipelineError:
                if self._stop.is_set():  # the JVM got the same stop signal and went first
                    return
                raise
            if self.until_caught_up and active == 0:
                return
            if not self.until_caught_up:
                self.scheduler.run_due(self._stop.is_set)
                if self._reload_requested.is_set() and not self._stop.is_set():
                    self._reload_requested.clear()
                    self._phase = "applying a new configuration"
                    self._apply_reload()
            self._phase = "waiting"
            self._stop.wait(poll_s)

    def _check_flows(self) -> int:
        active = 0
        failed: list[FlowRunner] = []
        for runner in list(self.flows.values()):
            was_failed = runner.failure is not None
            active += runner.check()
            if runner.failure is not None:
                failed.append(runner)
                if not was_failed:
                    logger.error("flow %s failed: %s", runner.flow.name, runner.failure)
                    self._cancel(f"{runner.flow.name}: ")
                    self._retry_later(runner)
            elif runner.healthy_for(RETRY_MAX_S):
                self._failures_in_a_row.pop(runner.flow.name, None)
        if failed and self.until_caught_up:
            first = failed[0]
            raise PipelineError(f"flow {first.flow.name} failed: {first.failure}")
        lost = self.engine.lost() if failed else None
        if lost is not None:  # no retry can start a query: end the process (its supervisor restarts it)
            raise PipelineError(f"the Spark driver stopped unexpectedly: {lost}; flow {failed[0].flow.name} "
                                f"failed: {failed[0].failure}")
        return active

    # -- status ----------------------------------------------------------------------------------------
    def status(self) -> Status:
        """A snapshot of every flow; safe from any thread."""
        jobs = []
        stats_by_name = {**self.scheduler.stats.copy(), **self.side_scheduler.stats.copy()}  # copies: atomic
        for name, stats in sorted(stats_by_name.items()):
            flow, _, job = name.partition(": ")
            if flow in self.flows and job:
                jobs.append(JobStatus(flow, job, stats.runs, stats.failures, stats.failures_in_a_row,
                                      stats.last_error))
        owners = self.ownership.owners()
        return Status(tuple(runner.status(owners.get(name)) for name, runner in list(self.flows.items())), tuple(jobs),
                      tuple(self.config.clusters), self.ownership.me, self.ownership.coordinated)

    def _log_status(self) -> None:
        for line in self.status().lines():
            logger.info("%s", line)

    # -- hot reload ------------------------------------------------------------------------------------
    def request_reload(self) -> None:
        """Re-read the properties file at the next turn of the loop (SIGHUP, or the file watcher)."""
        self._reload_requested.set()

    def _watch(self, path: Path) -> None:
        from sparkmirror.runtime.reload import ConfigWatcher, Reloader

        self._reloader = Reloader(path, self.config, self.target_clusters)
        self._watcher = ConfigWatcher(path, self.request_reload)
        self._watcher.start()

    def _apply_reload(self) -> None:
        from sparkmirror.runtime.reload import Accepted

        if self._reloader is None:
            return
        result = self._reloader.check()
        if not isinstance(result, Accepted):
            return
        self.config, diff = result.config, result.diff
        if diff.spark_changed:
            logger.warning("spark.* settings changed (%s): they apply when the process restarts",
                           ", ".join(diff.spark_keys))
        try:
            self._apply_pairs(diff, result.config.heartbeat_only_pairs(self.target_clusters))
            self._apply_diff(diff, {f.name: f for f in result.config.enabled_flows(self.target_clusters)})
            if set(self.ownership.units) != {*self.flows, *self._pairs}:
                self._recoordinate()
        except Exception as exc:  # noqa: BLE001 - the flows already running must keep running
            logger.error("applying the new configuration failed: %s", exc)

    def _apply_pairs(self, diff, pairs: tuple[FlowConfig, ...]) -> None:  # config.diff.ConfigDiff
        """Heartbeat-only pairs of the new configuration: those this process runs follow their new settings."""
        self._pairs = {pair_unit(p): p for p in pairs}
        by_name = {p.name: p for p in pairs}
        for name in diff.heartbeats_removed:
            self.heartbeats.remove(name)
        for name in diff.heartbeats_changed:
            if name in self.heartbeats.names:
                self.heartbeats.replace(by_name[name])

    def _recoordinate(self) -> None:
        """Flows or pairs came or went: the file's processes share them in a new group (its name digests them).

        Everything this process runs stops, then the group of the new set assigns them afresh. Processes still on
        the old file stay in the old group meanwhile: a file changed on one host long before another can have a
        flow of both sets run twice in between (exactly once stays exactly once: transactional ids fence).
        """
        logger.info("coordination: the configuration's flows or heartbeat pairs changed; joining a new group")
        old = self.ownership
        for name, runner in list(self.flows.items()):
            if runner.owned:
                self._lose_flow(name)
        for name in self.heartbeats.names:
            self.heartbeats.remove(name)
        old.close()
        self.ownership = self._ownership_for(self.config)
        self.ownership.start(self._renew_leases)

    def _apply_diff(self, diff, new_flows: dict[str, FlowConfig]) -> None:  # config.diff.ConfigDiff
        for name in diff.removed:
            logger.info("flow %s removed by the new configuration; stopping it", name)
            self._cancel(f"{name}: ")
            removed = self.flows.pop(name)
            if removed.owned:
                removed.stop()
        for name, change in diff.changed.items():
            runner = self.flows[name]
            if not runner.owned:  # standing by: it starts with the new settings when this process gets it
                self.flows[name] = self._runner(new_flows[name])
                continue
            if change.restart:
                logger.info("flow %s restarts with its new settings", name)
                self._cancel(f"{name}: ")
                runner.stop()
                self.flows[name] = self._runner(new_flows[name])
                self.flows[name].owned, self.flows[name].lease_ms = True, self.ownership.lease_ms
                self._start_runner(self.flows[name])
            else:
                runner.flow = new_flows[name]
                if runner.failure is not None:
                    continue  # its pending retry starts it, with these settings
                self._schedule(runner)
                if runner.failure is None:
                    try:
                        runner.refresh()  # a filter change takes effect now, not at the next refresh
                    except Exception as exc:  # noqa: BLE001 - the scheduled refresh retries
                        logger.error("flow %s: applying its new topics failed: %s", name, exc)
        for name in diff.added:  # standing by until the new group gives it to a process
            self.flows[name] = self._runner(new_flows[name])
            try:
                self.check_clusters([self.flows[name]])
            except Exception as exc:  # noqa: BLE001 - a new flow's bad cluster must not stop the others
                logger.error("flow %s cannot start: %s", name, exc)

    # -- serve and stop ----------------------------------------------------------------------------------
    def serve(self, stop_requested: Callable[[], bool], stop_timeout_s: float = DEFAULT_STOP_TIMEOUT_S) -> list[str]:
        """start() and wait() on a control thread; return once `stop_requested()` or the flows end.

        The calling (main) thread only watches, so a stop never waits for a client call to a cluster that is
        down: the stop runs here against one deadline (`shutdown`). Returns the steps it had to abandon; the
        control loop's error (every flow failed to start, a cluster unreachable at start) is raised afterwards.
        """
        errors: list[BaseException] = []

        def control() -> None:
            try:
                self.start()
                self.wait()
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
        """Stop every flow (writers stop between records, acknowledged positions are saved), release clients."""
        self._stop.set()
        self.heartbeats.stop()
        if self._watcher is not None:
            self._watcher.stop()
        for runner in self.flows.values():
            runner.stop()
        self.heartbeats.close()
        self.ownership.close()

    def shutdown(self, timeout_s: float = DEFAULT_STOP_TIMEOUT_S, control: threading.Thread | None = None) -> list[str]:
        """Stop the flows, then end the Spark session this supervisor created; every step bounded by one
        deadline of `timeout_s`. Returns the steps abandoned at the deadline.

        `control` is the thread running start()/wait(): while it is still inside a job (a client call to a
        cluster that is down), the clients it uses are left to the process's exit rather than closed under it.
        """
        deadline = StopDeadline(timeout_s)
        self._stop.set()
        self.heartbeats.stop()
        if self._watcher is not None:
            deadline.run("stop watching the properties file", self._watcher.stop)
        idle = control is None or deadline.join(control, f"the control loop ({self._activity})")
        runners = list(self.flows.values())
        for runner in runners:  # queries first: their acknowledged positions are what a restart needs
            deadline.run(f"stop the query of flow {runner.flow.name}", runner.stop_replication)
        if idle:
            for runner in runners:
                deadline.run(f"close the clients of flow {runner.flow.name}", runner.close_clients)
        self.heartbeats.close(deadline)  # those of loops that are idle
        # Only now that nothing of ours writes: the others take our flows over as soon as we leave.
        deadline.run("leave the coordination group", self.ownership.close)
        deadline.run("stop the Spark session", self.engine.stop)
        for line in self.status().lines():
            logger.info("at stop: %s", line)
        return deadline.abandoned

    @property
    def _activity(self) -> str:
        job = self.scheduler.running
        return f"in job '{job}'" if job else self._phase


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name)
