"""Supervisor: checks the clusters, prepares remote topics, starts one Spark query per enabled flow.

It only wires: planning lives in control/, admin I/O in kafka/, the record path in pipeline/.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from sparkmirror.config.mm2 import ClientSettings, FlowConfig, MirrorMakerConfig
from sparkmirror.control.topics import TopicPlan, plan_topics
from sparkmirror.errors import AdminOperationError, PipelineError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.clients import librdkafka_settings
from sparkmirror.model import PartitionSummary
from sparkmirror.pipeline import options
from sparkmirror.policy.filters import ConfigPropertyFilter, TopicFilter
from sparkmirror.policy.replication import policy_for
from sparkmirror.runtime.progress import FlowProgress

logger = logging.getLogger(__name__)

TOPIC_REFRESH_S = 5.0


@dataclass
class _RunningFlow:
    flow: FlowConfig
    progress: FlowProgress
    plan: TopicPlan | None = None
    query: object | None = None  # pyspark StreamingQuery


class Supervisor:
    """Runs the enabled flows of one config (optionally only those targeting `target_clusters`)."""

    def __init__(self, config: MirrorMakerConfig, state_dir: Path,
                 target_clusters: tuple[str, ...] | None = None, until_caught_up: bool = False) -> None:
        self.config = config
        self.state_dir = Path(state_dir)
        self.until_caught_up = until_caught_up
        self.flows = {f.name: _RunningFlow(f, FlowProgress(f.name))
                      for f in config.enabled_flows(target_clusters)}
        self._admins: dict[tuple, ClusterAdmin] = {}
        self._stop = threading.Event()
        self._spark = None

    # -- observe -------------------------------------------------------------------------------------
    def admin(self, alias: str, settings: ClientSettings) -> ClusterAdmin:
        """An admin client for a cluster; MM2 resolves admin settings per flow and side, so one per settings."""
        cache_key = (alias, tuple(sorted(settings.items())))
        if cache_key not in self._admins:
            self._admins[cache_key] = ClusterAdmin(alias, librdkafka_settings(settings, "admin", settings.origin))
        return self._admins[cache_key]

    def _flow_admins(self, flow: FlowConfig) -> tuple[ClusterAdmin, ClusterAdmin]:
        return self.admin(flow.source, flow.source_admin), self.admin(flow.target, flow.target_admin)

    def check_clusters(self) -> None:
        """Probe every cluster the flows touch, in parallel; the first unreachable one is raised."""
        admins = {id(a): a for rf in self.flows.values() for a in self._flow_admins(rf.flow)}
        with ThreadPoolExecutor(max_workers=max(1, len(admins))) as pool:
            for future in [pool.submit(a.probe) for a in admins.values()]:
                future.result()

    # -- plan + apply ---------------------------------------------------------------------------------
    def plan_flow(self, flow: FlowConfig) -> TopicPlan:
        """What a flow replicates and what the target needs first; reads both clusters, changes nothing."""
        source, target = self._flow_admins(flow)
        source_topics, target_topics = source.topic_partitions(), target.topic_partitions()

        def plan(configs: dict | None = None) -> TopicPlan:
            return plan_topics(source_topics, target_topics, TopicFilter(flow.topics, flow.topics_exclude),
                               policy_for(flow.replication_policy, flow.separator),
                               target_alias=flow.target, source_alias=flow.source,
                               replication_factor=flow.replication_factor, source_configs=configs,
                               config_filter=ConfigPropertyFilter(flow.config_properties_exclude,
                                                                  flow.use_defaults_from))

        first = plan()
        created = {spec.name for spec in first.create}
        new_sources = [s for s, r in first.remote_topics.items() if r in created]
        return plan(source.topic_configs(new_sources)) if new_sources else first

    def prepare_topics(self, flow: FlowConfig) -> TopicPlan:
        """Create missing remote topics (and grow short ones) before any record is written."""
        plan = self.plan_flow(flow)
        target = self._flow_admins(flow)[1]
        failures = {**target.create_topics(list(plan.create)), **target.create_partitions(dict(plan.add_partitions))}
        errors = [e for e in failures.values() if e is not None]
        if errors:
            raise errors[0] if len(errors) == 1 else AdminOperationError(
                flow.target, "prepare remote topics", "; ".join(str(e) for e in errors))
        for spec in plan.create:
            logger.info("flow %s created remote topic %s partitions=%d configs=%s", flow.name, spec.name,
                        spec.partitions, dict(spec.configs))
        return plan

    # -- run -----------------------------------------------------------------------------------------
    def start(self) -> None:
        """Check clusters, prepare topics and start every flow that has topics to replicate."""
        self.check_clusters()
        for running in self.flows.values():
            self._start_flow(running)

    def _start_flow(self, running: _RunningFlow) -> None:
        flow = running.flow
        plan = self.prepare_topics(flow)
        if not plan.remote_topics:
            if running.plan is None:
                logger.warning("flow %s: no topic on '%s' matches topics=%s; checking again every %.0f s",
                               flow.name, flow.source, ",".join(flow.topics), TOPIC_REFRESH_S)
            running.plan = plan
            return
        running.plan = plan
        running.query = self._replication(running, plan).start(until_caught_up=self.until_caught_up)
        logger.info("flow %s replicating %d topic(s): %s", flow.name, len(plan.remote_topics),
                    ", ".join(f"{s}->{r}" for s, r in plan.remote_topics.items()))

    def _replication(self, running: _RunningFlow, plan: TopicPlan):  # noqa: ANN202 - pyspark type, lazy
        """The Spark side of a flow: source options, the target writer and the checkpoint folder."""
        from sparkmirror.pipeline.flow import ReplicationFlow  # noqa: PLC0415 - pyspark only when needed
        from sparkmirror.pipeline.session import build_spark_session  # noqa: PLC0415
        from sparkmirror.pipeline.writer import PartitionWriter  # noqa: PLC0415

        flow = running.flow
        if self._spark is None:
            self._spark = build_spark_session(self.config.spark)
        limits = self._flow_admins(flow)[1].topic_config_values(sorted(plan.remote_topics.values()),
                                                                "max.message.bytes")
        producer = options.producer_settings(
            librdkafka_settings(flow.target_producer, "producer", flow.target_producer.origin),
            min((int(v) for v in limits.values()), default=None))
        source_opts = options.source_options(flow.source_consumer, list(plan.remote_topics),
                                             flow.max_offsets_per_trigger, flow.source_consumer.origin)
        checkpoint = self.state_dir / "flows" / _safe(f"{flow.source}-to-{flow.target}") / "checkpoint"
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        return ReplicationFlow(self._spark, flow.name, source_opts,
                               PartitionWriter(flow.target, producer, dict(plan.remote_topics)), checkpoint,
                               self._listener(running), max_tasks=flow.tasks_max)

    def _listener(self, running: _RunningFlow):  # noqa: ANN202
        def on_batch(batch_id: int, summaries: list[PartitionSummary], started: float) -> None:
            running.progress.record(batch_id, summaries, started)
            if summaries:
                logger.info("flow %s batch %d: %d records, %d bytes, %d partitions, %.2f s",
                            running.flow.name, batch_id, sum(s.records for s in summaries),
                            sum(s.bytes for s in summaries), len(summaries), time.monotonic() - started)
        return on_batch

    def wait(self, poll_s: float = 1.0) -> None:
        """Block until stop() or, with until_caught_up, until every query finished; raise a failed flow's error."""
        last_refresh = time.monotonic()
        while not self._stop.is_set():
            try:
                active = self._check_queries()
            except PipelineError:
                if self._stop.is_set():  # the JVM got the same stop signal and went first
                    return
                raise
            if self.until_caught_up and active == 0:
                return
            if not self.until_caught_up and time.monotonic() - last_refresh >= TOPIC_REFRESH_S:
                last_refresh = time.monotonic()
                for running in self.flows.values():
                    if running.query is None:
                        self._start_flow(running)
            self._stop.wait(poll_s)

    def _check_queries(self) -> int:
        """Number of active queries; raises the failure of a failed one."""
        from sparkmirror.pipeline.flow import query_status  # noqa: PLC0415

        active = 0
        for running in self.flows.values():
            if running.query is None:
                continue
            is_active, failure = query_status(running.query)
            if failure is not None:
                raise PipelineError(f"flow {running.flow.name} failed: {failure}")
            if not is_active and not self.until_caught_up and not self._stop.is_set():
                raise PipelineError(f"flow {running.flow.name} stopped without an error; see the Spark log")
            active += is_active
        return active

    def stop(self) -> None:
        """Stop every query (the current batch finishes first) and release clients."""
        self._stop.set()
        if self._spark is None:
            return
        from sparkmirror.pipeline.session import stop_quietly  # noqa: PLC0415

        for running in self.flows.values():
            if running.query is not None:
                stop_quietly(running.query, f"flow {running.flow.name}")


    def shutdown(self) -> None:
        """stop(), then end the Spark session this supervisor created (the CLI's exit path)."""
        self.stop()
        if self._spark is not None:
            from sparkmirror.pipeline.session import stop_quietly  # noqa: PLC0415

            stop_quietly(self._spark, "Spark session")
            self._spark = None


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name)
