"""FlowRunner: one `source->target` flow: its topics, its Spark query, its read positions, its periodic jobs.

The query reads an explicit set of partitions from explicit offsets (the flow's own positions). When the
set changes (a new topic, new partitions, a deleted or re-created topic, a wider filter), the runner
finishes the batch in progress, stops the query and starts a new one on the new set: every partition
continues at its stored position, so other topics see only a short pause and nothing is lost.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sparkmirror.config import keys
from sparkmirror.config.mm2 import FlowConfig
from sparkmirror.control import positions as pos
from sparkmirror.control.topics import TopicPlan, plan_topics
from sparkmirror.errors import AdminOperationError, PipelineError, SparkmirrorError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.clients import librdkafka_settings
from sparkmirror.kafka.internal_log import InternalTopicWriter
from sparkmirror.kafka.records import has_records_between
from sparkmirror.model import NewTopicSpec, PartitionSummary
from sparkmirror.offsets.codec import (
    SYNC_LINK_HEADER,
    Heartbeat,
    encode_heartbeat,
    encode_offset_sync,
    encode_sync_link,
)
from sparkmirror.offsets.translation import batch_syncs
from sparkmirror.pipeline import options
from sparkmirror.policy.filters import ConfigPropertyFilter, TopicFilter
from sparkmirror.policy.replication import ReplicationPolicy, policy_for
from sparkmirror.runtime.checkpointer import Checkpointer
from sparkmirror.runtime.config_sync import sync_topic_configs
from sparkmirror.runtime.progress import FlowProgress
from sparkmirror.runtime.state import POSITIONS_FILE, read_positions, write_positions

logger = logging.getLogger(__name__)

_COMPACT = {"cleanup.policy": "compact"}


def flow_policy(flow: FlowConfig) -> ReplicationPolicy:
    return policy_for(flow.replication_policy, flow.separator, flow.internal_topic_separator_enabled,
                      source_alias=flow.source)


def offset_syncs_topic(flow: FlowConfig) -> str:
    """MM2's MirrorSourceConfig.offsetSyncsTopic: named after the cluster it does not live on."""
    other = flow.target if flow.offset_syncs_topic_location == "source" else flow.source
    return flow_policy(flow).offset_syncs_topic(other)


def observe_plan(flow: FlowConfig, source: ClusterAdmin, target: ClusterAdmin) -> TopicPlan:
    """What a flow replicates and what the target needs first; reads both clusters, changes nothing."""
    source_topics, target_topics = source.topic_partitions(), target.topic_partitions()

    def plan(configs: dict | None = None) -> TopicPlan:
        return plan_topics(source_topics, target_topics, TopicFilter(flow.topics, flow.topics_exclude),
                           flow_policy(flow), target_alias=flow.target, source_alias=flow.source,
                           replication_factor=flow.replication_factor, source_configs=configs,
                           config_filter=config_filter(flow),
                           heartbeats_replication_enabled=flow.heartbeats_replication_enabled)

    first = plan()
    created = {spec.name for spec in first.create}
    new_sources = [s for s, r in first.remote_topics.items() if r in created]
    return plan(source.topic_configs(new_sources)) if new_sources else first


def _settings(settings) -> dict[str, str]:  # noqa: ANN001 - config.mm2.ClientSettings
    """librdkafka connection settings of one cluster side (admin settings carry the security props)."""
    return librdkafka_settings(settings, "admin", settings.origin)


def config_filter(flow: FlowConfig) -> ConfigPropertyFilter:
    return ConfigPropertyFilter(flow.config_properties_exclude, flow.use_defaults_from)


def apply_plan(flow: FlowConfig, target: ClusterAdmin, plan: TopicPlan) -> None:
    """Create missing remote topics (and grow short ones) before any record is written to them."""
    failures = {**target.create_topics(list(plan.create)), **target.create_partitions(dict(plan.add_partitions))}
    errors = [e for e in failures.values() if e is not None]
    if errors:
        raise errors[0] if len(errors) == 1 else AdminOperationError(
            flow.target, "prepare remote topics", "; ".join(str(e) for e in errors))
    for spec in plan.create:
        logger.info("flow %s created remote topic %s partitions=%d configs=%s", flow.name, spec.name,
                    spec.partitions, dict(spec.configs))
    for name, total in plan.add_partitions.items():
        logger.info("flow %s grew remote topic %s to %d partitions", flow.name, name, total)


@dataclass(frozen=True)
class Restart:
    """One change of a running flow's partition set, for the log and for measurements."""

    reason: str
    stopped_s: float  # finishing the batch in progress and stopping the old query
    started_s: float  # positions, watermarks and the new query's start


class FlowRunner:
    """Runs one flow. Every method is called from the supervisor's thread except `_on_batch` (the summary
    pump's)."""

    def __init__(self, flow: FlowConfig, source: ClusterAdmin, target: ClusterAdmin, state_dir: Path,
                 spark: Callable[[], object], until_caught_up: bool = False,
                 slots_in_use: Callable[[FlowRunner], int] = lambda _runner: 0) -> None:
        self.flow = flow
        self.source = source
        self.target = target
        self.dir = state_dir
        self._spark = spark
        self.until_caught_up = until_caught_up
        self.slots_in_use = slots_in_use  # Real-Time Mode task slots held by the process's other flows
        self.progress = FlowProgress(flow.name)
        self.plan: TopicPlan | None = None
        self.assignment: dict[str, int] = {}  # source topic -> partitions the running query reads
        self.topic_ids: dict[str, str | None] = {}
        self.query: object | None = None
        self.failure: str | None = None
        self.restarts: list[Restart] = []
        self._pump = None
        self._catch_up: dict[tuple[str, int], int] = {}
        self._last_report = 0.0  # time.monotonic() of the last report handed to _on_batch
        self._started_at = 0.0  # time.monotonic() when the running query started
        self._generation = 0
        self._idle_logged = False
        self._stopped = False  # set by stop(): nothing may start a query afterwards
        self._lock = threading.Lock()  # positions: written by Spark's callback thread, read at restarts
        self._positions: dict[str, pos.TopicPosition] | None = self._load_positions()
        self._syncs_writer: InternalTopicWriter | None = None
        self._heartbeats_writer: InternalTopicWriter | None = None
        self.checkpointer: Checkpointer | None = None

    # -- state on disk -------------------------------------------------------------------------------
    @property
    def _positions_file(self) -> Path:
        return self.dir / POSITIONS_FILE

    def _load_positions(self) -> dict[str, pos.TopicPosition] | None:
        return read_positions(self._positions_file)  # a StateError naming the file and the fix

    def _save_positions(self, positions: dict[str, pos.TopicPosition]) -> None:
        write_positions(self._positions_file, positions)  # atomic: fsync, then os.replace

    # -- lifecycle -----------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.query is not None and self.failure is None

    def start(self) -> None:
        """Create the flow's internal topics, then its remote topics, then start replicating."""
        self._create_internal_topics()
        self._ensure_checkpointer()  # before the query: a flow that cannot checkpoint does not start
        self.refresh()

    def retry(self) -> None:
        """Start again after a failure (a retry with back-off by the supervisor): from the saved positions."""
        self.failure = None
        self.progress.record_retry()
        self.start()  # every step is idempotent: topics that exist, clients that exist, the same positions

    def _ensure_checkpointer(self) -> Checkpointer | None:
        """The flow's checkpointer, created when checkpoints are on (at start, or by a live config change)."""
        if self.checkpointer is None and self.flow.emit_checkpoints.enabled and self.flow.emit_offset_syncs_enabled:
            checkpointer = self._checkpointer()
            checkpointer.start()
            self.checkpointer = checkpointer
        return self.checkpointer

    def _checkpointer(self) -> Checkpointer:
        flow = self.flow
        syncs_admin = self.source if flow.offset_syncs_topic_location == "source" else self.target
        syncs_side = flow.source_admin if syncs_admin is self.source else flow.target_admin
        return Checkpointer(
            flow, (syncs_admin.alias, _settings(syncs_side)), offset_syncs_topic(flow),
            (flow.source, _settings(flow.source_admin)), (flow.target, _settings(flow.target_admin)),
            flow_policy(flow).checkpoints_topic(flow.source),
            lambda: dict(self.plan.remote_topics) if self.plan is not None else {},
            lambda spec, rf_key: self._create(self.target, spec, rf_key))

    def _create_internal_topics(self) -> None:
        flow, policy = self.flow, flow_policy(self.flow)
        if flow.emit_offset_syncs_enabled:
            admin = self.source if flow.offset_syncs_topic_location == "source" else self.target
            self._create(admin, NewTopicSpec(offset_syncs_topic(flow), 1,
                                             flow.offset_syncs_topic_replication_factor, _COMPACT),
                         keys.OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR)
            alias = admin.alias
            self._syncs_writer = self._syncs_writer or InternalTopicWriter(alias, librdkafka_settings(
                flow.offset_syncs_producer, "producer", flow.offset_syncs_producer.origin))
        if flow.emit_heartbeats.enabled:
            self._create(self.target, NewTopicSpec(policy.heartbeats_topic(), 1,
                                                   flow.heartbeats_topic_replication_factor, _COMPACT),
                         keys.HEARTBEATS_TOPIC_REPLICATION_FACTOR)
            self._heartbeats_writer = self._heartbeats_writer or InternalTopicWriter(flow.target, librdkafka_settings(
                flow.heartbeats_producer, "producer", flow.heartbeats_producer.origin))

    def _create(self, admin: ClusterAdmin, spec: NewTopicSpec, rf_key: str) -> None:
        error = admin.create_topics([spec], replication_factor_key=rf_key).get(spec.name)
        if error is not None:
            raise error

    def refresh(self) -> bool:
        """Re-read the source's topics; on any change of the replicated partition set, restart the query.

        Returns whether the query was (re)started.
        """
        if self._stopped:
            return False
        plan = observe_plan(self.flow, self.source, self.target)
        ids = self.source.topic_ids(list(plan.source_partitions))
        apply_plan(self.flow, self.target, plan)
        self.plan = plan
        # A topic deleted between the two calls has no id: it is left out until the next refresh.
        wanted = {t: n for t, n in plan.source_partitions.items() if t in ids}
        changed_ids = [t for t in wanted if t in self.topic_ids and self.topic_ids[t] != ids.get(t)]
        if wanted == self.assignment and not changed_ids and self.query is not None and self.failure is None:
            return False
        if not wanted:
            if not self._idle_logged:
                self._idle_logged = True
                logger.warning("flow %s: no topic on '%s' matches topics=%s; checking again every %d s",
                               self.flow.name, self.flow.source, ",".join(self.flow.topics),
                               self.flow.refresh_topics.interval_s)
            self._stop_query()
            self.assignment, self.topic_ids = {}, {}
            return False
        self._idle_logged = False
        self._restart(wanted, ids, _describe_change(self.assignment, wanted, changed_ids))
        return True

    def _restart(self, wanted: dict[str, int], ids: dict[str, str | None], reason: str) -> None:
        began = time.monotonic()
        self._stop_query()
        if self._stopped:
            return
        stopped = time.monotonic()
        watermarks = self.source.watermarks_of(wanted)
        reset = options.reset_policy(self.flow.source_consumer, self.flow.source_consumer.origin)
        with self._lock:
            start = pos.plan_start(wanted, ids, watermarks, self._positions, reset, self.flow.name)
            positions = {**(self._positions or {}), **start.positions(ids)}
            self._save_positions(positions)
            self._positions = positions
        for line in start.warnings:
            logger.warning("%s", line)
        for line in start.notes:
            logger.info("%s", line)
        self.assignment, self.topic_ids, self.failure = wanted, ids, None
        # Where "caught up" is, for a Real-Time Mode query (micro-batch uses Spark's availableNow).
        self._catch_up = {(t, p): high for t, marks in watermarks.items() for p, (_low, high) in marks.items()}
        self._last_report = time.monotonic()
        if self._stopped:  # stopped from another thread (a bounded stop) while this restart read the clusters
            return
        self.query = self._replication(start.offsets).start(until_caught_up=self.until_caught_up)
        self._started_at = time.monotonic()
        restart = Restart(reason, stopped - began, time.monotonic() - stopped)
        self.restarts.append(restart)
        logger.info("flow %s replicating %d topic(s) (%s): %s; stop %.2f s, start %.2f s", self.flow.name,
                    len(wanted), reason, ", ".join(f"{s}->{self.plan.remote_topics[s]}" for s in sorted(wanted)),
                    restart.stopped_s, restart.started_s)

    def _replication(self, offsets):  # noqa: ANN001, ANN202 - pyspark types stay lazy
        from sparkmirror.pipeline.flow import ReplicationFlow, WriterSpec  # noqa: PLC0415 - pyspark when needed

        flow = self.flow
        remote = {s: self.plan.remote_topics[s] for s in offsets}
        trigger = self.trigger()
        spark = self._spark()
        if trigger.mode == options.REAL_TIME:
            partitions = sum(len(parts) for parts in offsets.values())
            slots = int(spark.sparkContext.defaultParallelism)
            problem = options.real_time_slots_problem(flow.name, partitions, slots - self.slots_in_use(self),
                                                      spark.sparkContext.master)
            if problem:
                raise PipelineError(problem)
        limits = self.target.topic_config_values(sorted(remote.values()), "max.message.bytes")
        producer = options.producer_settings(dict(flow.target_producer),
                                             min((int(v) for v in limits.values()), default=None),
                                             flow.target_producer.origin)
        source_opts = options.source_options(flow.source_consumer, offsets, flow.max_offsets_per_trigger,
                                             flow.source_consumer.origin, trigger.mode == options.REAL_TIME)
        self._generation += 1
        checkpoints = self.dir / "checkpoints"
        shutil.rmtree(checkpoints, ignore_errors=True)  # positions live in positions.json, not here
        checkpoint = checkpoints / str(self._generation)
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        tasks = flow.tasks_max or os.cpu_count() or 1
        writer = WriterSpec(f"{flow.name}#{id(self)}#{self._generation}", flow.target, producer, remote,
                            (flow.source, flow.target) if flow.provenance_enabled else None, producer_slots=tasks,
                            source_admin=dict(flow.source_admin),
                            source_topic_ids={t: i for t, i in self.topic_ids.items() if t in remote and i})
        replication = ReplicationFlow(spark, flow.name, source_opts, writer, checkpoint, self._on_batch, trigger,
                                      max_tasks=tasks)
        self._pump = replication.pump
        return replication

    def trigger(self) -> options.TriggerSpec:
        flow = self.flow
        return options.TriggerSpec(flow.trigger_mode, flow.real_time_epoch_ms, flow.report_interval_ms)

    def healthy_for(self, seconds: float) -> bool:
        """True when the query has run without a failure for at least `seconds` (a retry worked)."""
        return self.running and time.monotonic() - self._started_at >= seconds

    @property
    def real_time_partitions(self) -> int:
        """Task slots this flow's running query holds for good (Real-Time Mode), else 0."""
        if self.query is None or self.trigger().mode != options.REAL_TIME:
            return 0
        return sum(self.assignment.values())

    def _stop_query(self) -> None:
        """Stop the writers between records (what they wrote is reported, its positions saved), then the query."""
        if self._pump is not None:
            self._pump.close()
            self._pump = None
        if self.query is not None:
            from sparkmirror.pipeline.session import stop_quietly  # noqa: PLC0415

            stop_quietly(self.query, f"flow {self.flow.name}")
            self.query = None

    def stop(self) -> None:
        self.stop_replication()
        self.close_clients()

    def stop_replication(self) -> None:
        """Stop the query for good (its acknowledged records' positions saved); nothing starts one afterwards."""
        self._stopped = True
        self._stop_query()

    def close_clients(self) -> None:
        """Flush and close the control-plane clients (offset syncs, heartbeats, checkpoints)."""
        for writer in (self._syncs_writer, self._heartbeats_writer, self.checkpointer):
            if writer is not None:
                writer.close()

    def emit_checkpoints(self) -> None:
        checkpointer = self._ensure_checkpointer()
        if checkpointer is not None:
            checkpointer.emit()

    def sync_group_offsets(self) -> None:
        checkpointer = self._ensure_checkpointer()
        if checkpointer is not None:
            checkpointer.sync_group_offsets()

    def _real_time_caught_up(self) -> bool:
        """A Real-Time Mode query never ends by itself: with until_caught_up it is stopped once every
        partition's position reached the end offset it had when the query started, or only offsets that
        hold no record (trailing transaction markers) are left, and no report came for two intervals."""
        if self.trigger().mode != options.REAL_TIME:
            return False
        with self._lock:
            positions = self._positions or {}
        behind = [(t, p, start, end) for (t, p), end in self._catch_up.items()
                  if (start := positions.get(t, pos.TopicPosition(None)).next_offsets.get(p, 0)) < end]
        if not behind:
            return True
        if time.monotonic() - self._last_report < 2 * self.flow.report_interval_ms / 1000:
            return False
        settings = librdkafka_settings(self.flow.source_consumer, "consumer", self.flow.source_consumer.origin)
        return not any(has_records_between(settings, t, p, start, end) for t, p, start, end in behind)

    # -- the summary pump's callback -------------------------------------------------------------------
    def _on_batch(self, batch_id: int, summaries: list[PartitionSummary], started: float) -> None:
        self._last_report = started
        self.progress.record(batch_id, summaries, started)
        if not summaries:
            return
        # Syncs first: after a crash between the two, the batch is replicated again and its newer syncs
        # supersede these (translation keeps the newer mapping), whereas positions saved without syncs
        # would leave records on the target that no sync accounts for.
        if self._syncs_writer is not None:
            self._write_offset_syncs(summaries)
        with self._lock:
            self._positions = pos.advance(self._positions or {}, summaries)
            self._save_positions(self._positions)
        logger.info("flow %s batch %d: %d records, %d skipped, %d bytes, %d partitions, %.2f s", self.flow.name,
                    batch_id, sum(s.records for s in summaries), sum(s.skipped for s in summaries),
                    sum(s.bytes for s in summaries), len(summaries), time.monotonic() - started)

    def _write_offset_syncs(self, summaries: list[PartitionSummary]) -> None:
        """Every pair the writer reported is exact; MM2's sync topic keys them by source topic-partition, and
        our header says what lies between one and the next (see offsets/codec.SyncLink)."""
        topic = offset_syncs_topic(self.flow)
        records = [(*encode_offset_sync(sync), [(SYNC_LINK_HEADER, encode_sync_link(link))])
                   for s in summaries for sync, link in batch_syncs(s)]
        self._syncs_writer.write(topic, records)  # type: ignore[union-attr]

    # -- periodic jobs ---------------------------------------------------------------------------------
    def emit_heartbeat(self) -> None:
        if self._heartbeats_writer is not None:
            beat = Heartbeat(self.flow.source, self.flow.target, int(time.time() * 1000))
            self._heartbeats_writer.write(flow_policy(self.flow).heartbeats_topic(), [encode_heartbeat(beat)])

    def sync_configs(self) -> None:
        if self.plan is None or not self.plan.remote_topics:
            return
        applied = sync_topic_configs(self.source, self.target, self.plan.remote_topics, config_filter(self.flow))
        for topic, changes in applied.items():
            logger.info("flow %s synced configs of %s: %s", self.flow.name, topic,
                        ", ".join(f"{c.op} {c.name}" + (f"={c.value}" if c.value is not None else "")
                                  for c in changes))

    def check(self) -> bool:
        """True while the query is active. A failed query caused by a topic-set change (a topic deleted
        under it) is restarted on the new set; any other failure marks the flow failed."""
        if self.query is None:
            return False
        from sparkmirror.pipeline.flow import query_status  # noqa: PLC0415

        active, failure = query_status(self.query)
        if failure is None and self._pump is not None:
            failure = self._pump.error  # offset syncs or positions could not be written
        if failure is None and active and self.until_caught_up and self._real_time_caught_up():
            self._stop_query()
            return False
        if failure is None:
            if not active and not self.until_caught_up and self.failure is None:
                self.failure = "stopped without an error; see the Spark log"
            return active
        try:
            restarted = self.refresh() if not self.until_caught_up else False
        except SparkmirrorError as exc:
            logger.warning("flow %s: could not re-plan after a failure: %s", self.flow.name, exc)
            restarted = False
        if restarted:
            logger.info("flow %s: query stopped after its topics changed (%s); restarted on the new set",
                        self.flow.name, failure.splitlines()[0])
            return True
        self.failure = failure
        self._stop_query()
        return False


def _describe_change(before: dict[str, int], after: dict[str, int], recreated: list[str]) -> str:
    if not before:
        return "start"
    parts = []
    added, removed = sorted(set(after) - set(before)), sorted(set(before) - set(after))
    grown = sorted(t for t in after if t in before and after[t] != before[t])
    for label, topics in (("new topics", added), ("topics gone", removed), ("partitions added", grown),
                          ("re-created", recreated)):
        if topics:
            parts.append(f"{label}: {', '.join(topics)}")
    return "; ".join(parts) or "restart"
