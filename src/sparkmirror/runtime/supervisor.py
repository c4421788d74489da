"""Supervisor: runs the enabled flows of one configuration; it wires the parts of a running process and turns
its control loop.

Each part has its home: the checks and previews before the flows run (runtime/preflight.py), the flows' lives,
retries and checks (runtime/flows.py), their jobs on loops of their own (runtime/flow_loops.py), the heartbeats
of the pairs no flow covers (runtime/heartbeats.py), whether each cluster answers (runtime/reachability.py),
which units this process runs (runtime/assignment.py, after runtime/ownership.py), hot reload
(runtime/hot_reload.py, after runtime/reload.py) and the bounded stop (runtime/shutdown.py). The control loop,
on a thread of its own, applies the coordination group's changes, checks the queries, runs the retries and
applies reloads; no flow's job runs on it, so a cluster that is down delays none of that. The process ends with
an error only when every flow fails to start (a problem of the set-up, not of a moment).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from sparkmirror.config.client_settings import ClientSettings
from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.model import FlowConfig
from sparkmirror.control.acl_sync import AclPreview
from sparkmirror.control.ports import Clients, TopicAdmin
from sparkmirror.control.topics import TopicPlan
from sparkmirror.errors import PipelineError
from sparkmirror.policy.subjects import SubjectCopy
from sparkmirror.runtime import preflight
from sparkmirror.runtime.assignment import Assignment
from sparkmirror.runtime.engine import Engine
from sparkmirror.runtime.flow_loops import FlowLoops
from sparkmirror.runtime.flow_runner import FlowRunner
from sparkmirror.runtime.flows import Flows, flow_dir
from sparkmirror.runtime.heartbeats import HeartbeatPairs
from sparkmirror.runtime.hot_reload import HotReload
from sparkmirror.runtime.ownership import Ownership, SoleOwnership
from sparkmirror.runtime.reachability import ClusterProbes
from sparkmirror.runtime.scheduler import Scheduler
from sparkmirror.runtime.shutdown import Shutdown
from sparkmirror.runtime.state import check_state_dir
from sparkmirror.runtime.status import JobStatus, Status
from sparkmirror.runtime.stopping import DEFAULT_STOP_TIMEOUT_S, Activity

logger = logging.getLogger(__name__)

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
        enabled = config.enabled_flows(target_clusters)
        if check_state:  # before any client: a state dir that cannot keep positions must stop us first
            check_state_dir(self.state_dir, [flow_dir(self.state_dir, f) for f in enabled])
        self._stop = threading.Event()
        self._activity = Activity()  # what the control loop is doing, for a stop that has to abandon it
        self.scheduler = Scheduler(clock)  # the control loop's own jobs: retries of failed flows, the status log
        self.loops = FlowLoops(clock)  # every flow's jobs, each flow on loops of its own
        self._flows = Flows(enabled, self.state_dir, clients, engine, self.scheduler, self.loops, self._stop,
                            self._activity, until_caught_up)
        # MM2's clusterPairs: the pairs no running flow beats for, each target cluster on a loop of its own
        self.heartbeats = HeartbeatPairs(self.clients, clock)
        # whether each cluster answers, each probed on a loop of its own (ends with the process's stop)
        self.probes = ClusterProbes(self.clients, self._stop, clock)
        self.assignment = Assignment(config, self._flows, self.heartbeats, clients, target_clusters, ownership)
        self.hot_reload = HotReload(self._flows, self.assignment, self.heartbeats, target_clusters)
        self._shutdown = Shutdown(self._stop, self._flows, self.heartbeats, self.hot_reload, self.assignment, engine,
                                  self.scheduler, self._activity, self.status)

    @property
    def flows(self) -> dict[str, FlowRunner]:
        """The runners by flow name: those `owned` run here, the others stand by."""
        return self._flows.runners

    @property
    def ownership(self) -> Ownership | SoleOwnership:
        return self.assignment.ownership

    # -- clients, checks and previews (the CLI's `plan` command and tests) --------------------------------
    def admin(self, alias: str, settings: ClientSettings) -> TopicAdmin:
        """An admin client for a cluster; MM2 resolves admin settings per flow and side, so one per settings."""
        return preflight.admin(self.clients, alias, settings)

    def check_clusters(self, runners: list[FlowRunner] | None = None) -> None:
        """Probe every cluster the flows touch, in parallel; the first unreachable one is raised."""
        preflight.probe_clusters(runners or self.flows.values())

    def plan_flow(self, flow: FlowConfig) -> TopicPlan:
        """What a flow replicates and what the target needs first; reads both clusters, changes nothing."""
        return preflight.plan_flow(self.clients, flow)

    def plan_acls(self, flow: FlowConfig, topics: TopicPlan) -> AclPreview:
        """The topic ACLs a flow would sync, against what the target holds now; changes nothing."""
        return preflight.plan_acls(self.clients, flow, topics)

    def plan_subjects(self, flow: FlowConfig, topics: TopicPlan) -> list[SubjectCopy]:
        """The registry subjects a flow that rewrites schema ids copies, against what the target holds now."""
        return preflight.plan_subjects(flow, topics)

    # -- run -----------------------------------------------------------------------------------------
    def start(self) -> None:
        """Check clusters, then start every flow; a flow whose start fails is reported, the others run."""
        self._activity.now = "checking the clusters"
        self.check_clusters()
        if not self.until_caught_up:  # from now on the status says which clusters answer
            self.probes.watch(self.config.clusters)
            self.probes.start()
        if self.flows:
            self.engine.prepare(lambda: preflight.real_time_slots_wanted(self.clients, self.flows.values()))
            self._activity.now = "checking the flows' SQL rules"
            preflight.check_sql_rules(self.engine, [r.flow for r in self.flows.values()], self.config.source)
        if not self.until_caught_up:
            preflight.create_heartbeats_topics(self.clients, [r.flow for r in self.flows.values()],
                                               self.assignment.pairs)
        self._activity.now = "joining the coordination group"
        self.assignment.start()
        if not self.ownership.wait_joined(2 * self.config.coordination.session_timeout_ms / 1000):
            logger.warning("coordination: no assignment from the coordination group yet; standing by for every "
                           "flow until one comes")
        errors, started = self.assignment.apply(raise_error=len(self.flows) == 1)
        standby = sorted(name for name, runner in self.flows.items() if not runner.owned)
        if standby:
            logger.info("coordination: %s stands by for %s (another process of the group runs them)",
                        self.ownership.me, ", ".join(standby))
        if errors and len(errors) == started == len(self.flows):
            raise errors[0]  # this process runs every flow and none would run: the first cause is its error
        if self.config_path is not None and not self.until_caught_up:
            self.hot_reload.watch(self.config_path, self.config)
        if not self.until_caught_up:
            self.scheduler.every("log status", STATUS_LOG_INTERVAL_S, self._log_status)
            self.loops.start()
            self.heartbeats.start()

    def wait(self, poll_s: float = 0.5) -> None:
        """The control loop: block until stop() or, with until_caught_up, until every query finished.

        A failed flow is logged and retried with back-off; with until_caught_up, its error is raised.
        """
        while not self._stop.is_set():
            self._activity.now = "applying the coordination group's changes"
            self.assignment.apply()
            self._activity.now = "checking the flows"
            try:
                active = self._flows.check()
            except PipelineError:
                if self._stop.is_set():  # the JVM got the same stop signal and went first
                    return
                raise
            if self.until_caught_up and active == 0:
                return
            if not self.until_caught_up:
                self.scheduler.run_due(self._stop.is_set)
                if self.hot_reload.requested and not self._stop.is_set():
                    self._activity.now = "applying a new configuration"
                    self.config = self.hot_reload.apply_reload(self.config)
                    self.probes.watch(self.config.clusters)
            self._activity.now = "waiting"
            self._stop.wait(poll_s)

    def run_due(self) -> None:
        """Run every loop's due jobs on the calling thread: the control loop's, each flow's and the heartbeat
        pairs' (tests, with a clock of their own)."""
        self.scheduler.run_due(self._stop.is_set)
        self.loops.run_due()
        self.heartbeats.run_due()
        self.probes.run_due()

    # -- status ----------------------------------------------------------------------------------------
    def status(self) -> Status:
        """A snapshot of every flow; safe from any thread."""
        jobs = []
        stats_by_name = {**self.scheduler.stats.copy(), **self.loops.stats.copy()}  # copies: atomic
        flows = self.flows
        for name, stats in sorted(stats_by_name.items()):
            flow, _, job = name.partition(": ")
            if flow in flows and job:
                jobs.append(JobStatus(flow, job, stats.runs, stats.failures, stats.failures_in_a_row,
                                      stats.last_error))
        owners = self.ownership.owners()
        return Status(tuple(runner.status(owners.get(name)) for name, runner in list(flows.items())), tuple(jobs),
                      tuple(self.config.clusters), self.ownership.me, self.ownership.coordinated,
                      self.probes.health(), self.heartbeats.status())

    def _log_status(self) -> None:
        for line in self.status().lines():
            logger.info("%s", line)

    # -- reload and stop -------------------------------------------------------------------------------
    def request_reload(self) -> None:
        """Re-read the properties file at the next turn of the loop (SIGHUP, or the file watcher)."""
        self.hot_reload.request()

    def serve(self, stop_requested: Callable[[], bool], stop_timeout_s: float = DEFAULT_STOP_TIMEOUT_S) -> list[str]:
        """start() and wait() on a control thread; return once `stop_requested()` or the flows end.

        The calling (main) thread only watches, so a stop never waits for a client call to a cluster that is
        down: the stop runs here against one deadline (`shutdown`). Returns the steps it had to abandon; the
        control loop's error (every flow failed to start, a cluster unreachable at start) is raised afterwards.
        """
        def control_loop() -> None:
            self.start()
            self.wait()

        return self._shutdown.serve(control_loop, stop_requested, stop_timeout_s)

    def stop(self) -> None:
        """Stop every flow (writers stop between records, acknowledged positions are saved), release clients."""
        self._shutdown.stop()

    def shutdown(self, timeout_s: float = DEFAULT_STOP_TIMEOUT_S, control: threading.Thread | None = None) -> list[str]:
        """Stop the flows, then end the Spark session this supervisor created; every step bounded by one
        deadline of `timeout_s`. Returns the steps abandoned at the deadline (see runtime/shutdown.py)."""
        return self._shutdown.shutdown(timeout_s, control)
