"""Supervisor: checks the clusters, runs one FlowRunner per enabled flow, their periodic jobs, hot reload.

It only wires: planning lives in control/, admin I/O in kafka/, the record path in pipeline/, one flow's
life in runtime/flow_runner.py. Flows are independent: one that fails is reported and left stopped while
the others keep replicating; the process ends with an error only when no flow is left running.
"""

from __future__ import annotations

import logging
import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from sparkmirror.config.mm2 import ClientSettings, FlowConfig, MirrorMakerConfig
from sparkmirror.control.topics import TopicPlan
from sparkmirror.errors import PipelineError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.clients import librdkafka_settings
from sparkmirror.pipeline import options
from sparkmirror.runtime.flow_runner import FlowRunner, observe_plan
from sparkmirror.runtime.scheduler import Scheduler

logger = logging.getLogger(__name__)


class Supervisor:
    """Runs the enabled flows of one config (optionally only those targeting `target_clusters`).

    With `config_path`, the file is watched (and SIGHUP handled by the CLI through `request_reload`): a
    valid new version is applied flow by flow, an invalid one is logged and the running config stays.
    """

    def __init__(self, config: MirrorMakerConfig, state_dir: Path,
                 target_clusters: tuple[str, ...] | None = None, until_caught_up: bool = False,
                 config_path: Path | None = None) -> None:
        self.config = config
        self.state_dir = Path(state_dir)
        self.target_clusters = target_clusters
        self.until_caught_up = until_caught_up
        self.config_path = config_path
        self._admins: dict[tuple, ClusterAdmin] = {}
        self.flows: dict[str, FlowRunner] = {f.name: self._runner(f) for f in config.enabled_flows(target_clusters)}
        self.scheduler = Scheduler()
        self._stop = threading.Event()
        self._reload_requested = threading.Event()
        self._spark = None
        self._spark_starting: Future | None = None
        self._watcher = None
        self._reloader = None

    # -- clients -------------------------------------------------------------------------------------
    def admin(self, alias: str, settings: ClientSettings) -> ClusterAdmin:
        """An admin client for a cluster; MM2 resolves admin settings per flow and side, so one per settings."""
        cache_key = (alias, tuple(sorted(settings.items())))
        if cache_key not in self._admins:
            self._admins[cache_key] = ClusterAdmin(alias, librdkafka_settings(settings, "admin", settings.origin))
        return self._admins[cache_key]

    def _flow_admins(self, flow: FlowConfig) -> tuple[ClusterAdmin, ClusterAdmin]:
        return self.admin(flow.source, flow.source_admin), self.admin(flow.target, flow.target_admin)

    def _runner(self, flow: FlowConfig) -> FlowRunner:
        source, target = self._flow_admins(flow)
        return FlowRunner(flow, source, target, self.state_dir / "flows" / _safe(f"{flow.source}-to-{flow.target}"),
                          self._spark_session, self.until_caught_up, self._real_time_slots_in_use)

    def _real_time_slots_in_use(self, asking: FlowRunner) -> int:
        return sum(r.real_time_partitions for r in self.flows.values() if r is not asking)

    def _spark_session(self):  # noqa: ANN202 - pyspark type, lazy
        if self._spark is None:
            if self._spark_starting is None:
                self._start_spark_session()
            assert self._spark_starting is not None
            try:
                self._spark = self._spark_starting.result()
            except Exception:
                self._spark_starting = None  # the next flow to start tries again, as before
                raise
        return self._spark

    def _start_spark_session(self) -> None:
        """Build the Spark session on a thread of its own: its JVM starts while the flows create their
        internal and remote topics, which need no Spark (about a second less before the first record)."""
        from sparkmirror.pipeline.session import build_spark_session  # noqa: PLC0415

        future: Future = Future()

        def build() -> None:
            try:
                future.set_result(build_spark_session(self.config.spark, self._real_time_slots_wanted()))
            except BaseException as exc:  # noqa: BLE001 - handed to whoever waits for the session
                future.set_exception(exc)

        self._spark_starting = future
        threading.Thread(target=build, name="spark-session", daemon=True).start()

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

    # -- run -----------------------------------------------------------------------------------------
    def start(self) -> None:
        """Check clusters, then start every flow; a flow whose start fails is reported, the others run."""
        self.check_clusters()
        if self.flows:
            self._start_spark_session()
        alone = len(self.flows) == 1
        errors = [e for e in (self._start_runner(r, raise_error=alone) for r in list(self.flows.values()))
                  if e is not None]
        if errors and len(errors) == len(self.flows):
            raise errors[0]  # nothing would run: the first cause is the process's error
        if self.config_path is not None and not self.until_caught_up:
            self._watch(self.config_path)

    def _start_runner(self, runner: FlowRunner, raise_error: bool = False) -> Exception | None:
        """Start one flow and its jobs; a failure is the flow's (logged, returned), not the process's,
        unless `raise_error` (the process's only flow at start-up)."""
        try:
            runner.start()
        except Exception as exc:  # noqa: BLE001 - one flow's failure must not stop the others
            if raise_error:
                raise
            runner.failure = str(exc)
            logger.error("flow %s failed to start: %s", runner.flow.name, exc)
            return exc
        if not self.until_caught_up:
            self._schedule(runner)
        return None

    def _schedule(self, runner: FlowRunner) -> None:
        flow, name = runner.flow, runner.flow.name
        jobs = [(flow.refresh_topics, "refresh topics", runner.refresh),
                (flow.sync_topic_configs, "sync topic configs", runner.sync_configs),
                (flow.emit_heartbeats, "emit heartbeats", runner.emit_heartbeat),
                (flow.emit_checkpoints, "emit checkpoints", runner.emit_checkpoints),
                (flow.sync_group_offsets, "sync group offsets", runner.sync_group_offsets)]
        self.scheduler.cancel(f"{name}: ")
        for schedule, job, run in jobs:
            if schedule.enabled:
                self.scheduler.every(f"{name}: {job}", schedule.interval_s, run)

    def wait(self, poll_s: float = 0.5) -> None:
        """Block until stop() or, with until_caught_up, until every query finished.

        A failed flow is logged and stays stopped; when no flow is left running, its error is raised.
        """
        while not self._stop.is_set():
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
                    self._apply_reload()
            self._stop.wait(poll_s)

    def _check_flows(self) -> int:
        active = 0
        failed: list[FlowRunner] = []
        for runner in self.flows.values():
            was_failed = runner.failure is not None
            active += runner.check()
            if runner.failure is not None:
                failed.append(runner)
                if not was_failed:
                    logger.error("flow %s failed: %s", runner.flow.name, runner.failure)
                    self.scheduler.cancel(f"{runner.flow.name}: ")
        if failed and (self.until_caught_up or len(failed) == len(self.flows)):
            first = failed[0]
            raise PipelineError(f"flow {first.flow.name} failed: {first.failure}")
        return active

    # -- hot reload ------------------------------------------------------------------------------------
    def request_reload(self) -> None:
        """Re-read the properties file at the next turn of the loop (SIGHUP, or the file watcher)."""
        self._reload_requested.set()

    def _watch(self, path: Path) -> None:
        from sparkmirror.runtime.reload import ConfigWatcher, Reloader  # noqa: PLC0415

        self._reloader = Reloader(path, self.config, self.target_clusters)
        self._watcher = ConfigWatcher(path, self.request_reload)
        self._watcher.start()

    def _apply_reload(self) -> None:
        from sparkmirror.runtime.reload import Accepted  # noqa: PLC0415

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
            self._apply_diff(diff, {f.name: f for f in result.config.enabled_flows(self.target_clusters)})
        except Exception as exc:  # noqa: BLE001 - the flows already running must keep running
            logger.error("applying the new configuration failed: %s", exc)

    def _apply_diff(self, diff, new_flows: dict[str, FlowConfig]) -> None:  # noqa: ANN001 - config.diff.ConfigDiff
        for name in diff.removed:
            logger.info("flow %s removed by the new configuration; stopping it", name)
            self.scheduler.cancel(f"{name}: ")
            self.flows.pop(name).stop()
        for name, change in diff.changed.items():
            runner = self.flows[name]
            if change.restart:
                logger.info("flow %s restarts with its new settings", name)
                self.scheduler.cancel(f"{name}: ")
                runner.stop()
                self.flows[name] = self._runner(new_flows[name])
                self._start_runner(self.flows[name])
            else:
                runner.flow = new_flows[name]
                self._schedule(runner)
                if runner.failure is None:
                    try:
                        runner.refresh()  # a filter change takes effect now, not at the next refresh
                    except Exception as exc:  # noqa: BLE001 - the scheduled refresh retries
                        logger.error("flow %s: applying its new topics failed: %s", name, exc)
        for name in diff.added:
            self.flows[name] = self._runner(new_flows[name])
            try:
                self.check_clusters([self.flows[name]])
            except Exception as exc:  # noqa: BLE001 - a new flow's bad cluster must not stop the others
                self.flows[name].failure = str(exc)
                logger.error("flow %s cannot start: %s", name, exc)
                continue
            self._start_runner(self.flows[name])

    # -- stop ------------------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop every flow (the batch in progress finishes first) and release clients."""
        self._stop.set()
        if self._watcher is not None:
            self._watcher.stop()
        for runner in self.flows.values():
            runner.stop()

    def shutdown(self) -> None:
        """stop(), then end the Spark session this supervisor created (the CLI's exit path)."""
        self.stop()
        if self._spark is None and self._spark_starting is not None:
            try:  # a session still starting is stopped too, not left to the interpreter's exit
                self._spark = self._spark_starting.result()
            except Exception as exc:  # noqa: BLE001 - no session to stop; its error was the flows' to report
                logger.debug("Spark session did not start: %s", exc)
        if self._spark is not None:
            from sparkmirror.pipeline.session import stop_quietly  # noqa: PLC0415

            stop_quietly(self._spark, "Spark session")
            self._spark = None


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name)
