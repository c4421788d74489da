"""ReplicationFlow: one Spark Structured Streaming query per `source->target` flow, records kept in the JVM.

Spark's Kafka source feeds a JVM `ForeachWriter` (`jvm/io/sparkmirror/recordpath/MirrorWriter.java`) that
produces every record to the target with its key, value, headers, timestamp and partition: no Python call
per record. The writer reports acknowledged records (exact offset syncs and each partition's next offset)
to a channel in the driver's JVM (directly in local mode, over a TCP connection from a cluster's
executors); a `SummaryPump` thread here drains it and hands the reports to the flow runner,
which writes the offset syncs and then moves the positions, as it did for micro-batches before.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from py4j.protocol import Py4JError
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

from sparkmirror.config.sql_rules import SqlRules
from sparkmirror.errors import PipelineError
from sparkmirror.model import PartitionSummary
from sparkmirror.pipeline.failures import root_cause
from sparkmirror.pipeline.options import MICRO_BATCH, REAL_TIME, TriggerSpec
from sparkmirror.pipeline.sql_rules import KEEP, shaped

logger = logging.getLogger(__name__)

# (report number, per-partition summaries, time.monotonic() when the report was taken)
BatchListener = Callable[[int, list[PartitionSummary], float], None]

# What the JVM writer reads, in this order (MirrorWriter.process); with a SQL filter, `keep` follows.
INPUT_COLUMNS = ("topic", "partition", "offset", "timestamp_ms", "key", "value", "headers")
_WRITER_CLASS = "io.sparkmirror.recordpath.MirrorWriter"
_CHANNEL_CLASS = "io.sparkmirror.recordpath.FlowChannel"
STOP_WAIT_S = 60.0  # how long stopping waits for the records in flight to be acknowledged


def replication_columns(df: DataFrame, rules: SqlRules | None = None, exempt_topics: Sequence[str] = ()) -> DataFrame:
    """Keep what a replicated record needs, after the flow's SQL rules (not on `exempt_topics`); the timestamp as
    epoch milliseconds, exactly as stored."""
    rules = rules or SqlRules()
    columns = (*INPUT_COLUMNS, KEEP) if rules.filter else INPUT_COLUMNS
    return shaped(df, rules, exempt_topics).select(
        *(F.unix_millis("timestamp").alias(c) if c == "timestamp_ms" else F.col(c) for c in columns))


@dataclass(frozen=True)
class WriterSpec:
    """What the JVM writer of one query generation needs (sent to it as JSON); repr leaves out client settings,
    which hold secrets."""

    channel: str
    target: str
    producer: Mapping[str, str] = field(repr=False)  # Java producer settings
    remote_topics: Mapping[str, str]
    provenance: tuple[str, str] | None = None  # (source, target) aliases when the header is on
    producer_slots: int = 1  # producers per JVM for this configuration: tasks take slot = partition % this
    source_admin: Mapping[str, str] | None = field(default=None, repr=False)  # Java admin settings of the source
    source_topic_ids: Mapping[str, str] | None = None  # source topic -> id when planned: a re-created topic fails
    # Exactly once: transactional_id (the tasks' prefix), positions_group and admin (the target's Java settings)
    exactly_once: Mapping[str, object] | None = field(default=None, repr=False)
    # MM2's transforms (options.transforms_spec): stages, errors_tolerance, plugin_path, source; None: none
    transforms: Mapping[str, object] | None = field(default=None, repr=False)
    message_limits: Mapping[str, int] | None = None  # remote topic -> max.message.bytes: a record over it is refused
    sql_rules: SqlRules = field(default_factory=SqlRules)  # applied in the projection; a filter adds `keep`
    sql_exempt_topics: tuple[str, ...] = ()  # source topics the SQL rules leave alone (heartbeats)
    # schema id rewrite (options.schema_ids_spec): both registries' URLs and user info, unknown_ids; None: ids kept
    schema_ids: Mapping[str, str] | None = field(default=None, repr=False)

    def to_json(self, driver: Mapping[str, object] | None = None, report_interval_ms: int = 0) -> str:
        """`driver`: on a cluster, the endpoint of the driver's channel server (host, port, token) that the
        executors' writers report to, every `report_interval_ms`; None in local mode (same JVM)."""
        return json.dumps({"channel": self.channel, "target": self.target, "producer": dict(self.producer),
                           "driver": None if driver is None else dict(driver),
                           "report_interval_ms": report_interval_ms,
                           "producer_slots": self.producer_slots,
                           "source_admin": None if self.source_admin is None else dict(self.source_admin),
                           "source_topic_ids": dict(self.source_topic_ids or {}),
                           "remote_topics": dict(self.remote_topics),
                           "exactly_once": None if self.exactly_once is None else dict(self.exactly_once),
                           "transforms": None if self.transforms is None else dict(self.transforms),
                           "message_limits": dict(self.message_limits or {}),
                           "filtered": bool(self.sql_rules.filter),
                           "schema_ids": None if self.schema_ids is None else dict(self.schema_ids),
                           "provenance": None if self.provenance is None else
                           {"source": self.provenance[0], "target": self.provenance[1]}})


class SummaryPump:
    """Drains a query's channel on its own thread and calls `on_batch` with each report, in order.

    `close()` stops the writers between two records, waits for what they sent to be acknowledged, and
    hands over the last reports: then stopping the query interrupts no write, and every record is either
    reported (its position moved) or read again by the next query.
    """

    def __init__(self, channel: object, on_batch: BatchListener, poll_ms: int = 200) -> None:
        self._channel = channel
        self._on_batch = on_batch
        self._poll_ms = poll_ms
        self._reports = 0
        self._lock = threading.Lock()  # one drain at a time: reports reach on_batch in order
        self._stop = threading.Event()
        self.error: str | None = None
        self._thread = threading.Thread(target=self._run, name="sparkmirror-summaries", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.drain(self._poll_ms)
            except Exception as exc:  # noqa: BLE001 - reported through `error`, the runner fails the flow
                if not self._stop.is_set():
                    self.error = self.error or f"{exc}"
                    logger.error("reporting replicated records failed: %s", exc)
                return

    def drain(self, wait_ms: int = 0) -> int:
        """Hand every pending report to on_batch; returns how many summaries were handed."""
        with self._lock:
            rows = json.loads(self._channel.drain(wait_ms))  # type: ignore[attr-defined]
            if not rows:
                return 0
            started = time.monotonic()
            self._reports += 1
            self._on_batch(self._reports, [PartitionSummary.from_report(r) for r in rows], started)
            return len(rows)

    def close(self, wait_s: float = STOP_WAIT_S) -> None:
        """Stop the writers between records, hand over what they reported, stop the thread."""
        try:
            busy = self._channel.close(int(wait_s * 1000))  # type: ignore[attr-defined]
        except (Py4JError, ConnectionError) as exc:
            logger.debug("channel already gone with the JVM: %s", exc)
            self._stop.set()
            return
        if busy:
            logger.warning("%d writer(s) still had unacknowledged records after %.0f s; those records will be "
                           "replicated again", busy, wait_s)
        self._stop.set()
        self._thread.join(max(1.0, self._poll_ms / 1000 * 5))
        try:
            try:
                while self.drain(0):
                    pass
            finally:
                self._channel.release()  # type: ignore[attr-defined]
        except (Py4JError, ConnectionError) as exc:
            # The JVM ended meanwhile (a SIGTERM to the whole process group reaches it too): reports it had
            # not handed over are lost, so those records are read and copied again on the next start.
            logger.debug("channel gone with the JVM while draining: %s", exc)


class ReplicationFlow:
    """Source stream -> projection -> JVM writer, checkpointed under its own folder.

    With `lease_ms` > 0 the writers hold a lease valid that long from now: they send nothing once it expires
    (another process may have taken the flow over) until `renew_lease` is called again, or the query stops.
    """

    def __init__(self, spark: SparkSession, name: str, source_options: Mapping[str, str], writer: WriterSpec,
                 checkpoint_dir: Path, on_batch: BatchListener, trigger: TriggerSpec, max_tasks: int,
                 lease_ms: int = 0, source_format: str = "kafka") -> None:
        self.spark = spark
        self.name = name
        self.source_options = dict(source_options)
        self.source_format = source_format  # options.source_format: Spark's Kafka source or sparkmirror's
        self.writer = writer
        self.trigger = trigger
        self.checkpoint_dir = checkpoint_dir
        self.max_tasks = max_tasks  # micro-batch: tasks per batch
        jvm = spark.sparkContext._jvm  # the JVM writer is reached through py4j
        # Reports during a task bound the writer's memory (a micro-batch may hold a whole backlog) and let
        # positions move before a long task (a Real-Time Mode epoch) ends.
        channel_class = jvm_class(jvm, _CHANNEL_CLASS)
        channel = channel_class.create(writer.channel, trigger.report_interval_ms, lease_ms)
        self._channel = channel
        self.pump = SummaryPump(channel, on_batch)
        self._jvm = jvm
        endpoint = _driver_endpoint(spark, channel_class)
        if endpoint is not None:
            ship_plugin_jars(spark, writer.transforms)
        self._writer_json = writer.to_json(endpoint, trigger.report_interval_ms)

    def start(self, until_caught_up: bool = False) -> StreamingQuery:
        """Start the query; with until_caught_up a micro-batch query stops by itself once the backlog is
        copied (a Real-Time Mode query is stopped by its runner)."""
        reader = self.spark.readStream.format(self.source_format)
        for key, value in self.source_options.items():
            reader = reader.option(key, value)
        stream = replication_columns(reader.load(), self.writer.sql_rules, self.writer.sql_exempt_topics)
        if self.trigger.mode == MICRO_BATCH:
            # Fewer, longer tasks: whole Kafka partitions are concatenated, never split, so each keeps its order.
            stream = stream.coalesce(self.max_tasks)
        jwriter = jvm_class(self._jvm, _WRITER_CLASS)(self._writer_json)
        jstream = (stream._jdf.writeStream().queryName(self.name)  # a JVM ForeachWriter
                   .option("checkpointLocation", str(self.checkpoint_dir)).foreach(jwriter))
        triggers = self._jvm.org.apache.spark.sql.streaming.Trigger
        if self.trigger.mode == REAL_TIME:
            jstream = jstream.outputMode("update").trigger(triggers.RealTime(self.trigger.real_time_epoch))
        elif until_caught_up:
            jstream = jstream.trigger(triggers.AvailableNow())
        logger.info("starting flow %s (%s%s) checkpoint=%s", self.name, self.trigger.mode,
                    ", until caught up" if until_caught_up else "", self.checkpoint_dir)
        self.pump.start()
        try:
            return StreamingQuery(jstream.start())
        except BaseException:
            self.pump.close(0)
            raise

    def renew_lease(self, valid_ms: int) -> None:
        """The writers may write for `valid_ms` from now (no effect without a lease). A JVM that is gone writes
        nothing anyway: that is for `query_status` to report, not this."""
        try:
            self._channel.renew(int(valid_ms))  # type: ignore[attr-defined]
        except (Py4JError, ConnectionError) as exc:
            logger.debug("lease of flow %s not renewed, the JVM is gone: %s", self.name, exc)


def _driver_endpoint(spark: SparkSession, channel_class: object) -> dict[str, object] | None:
    """Where executors in other JVMs send their writers' reports: the driver's channel server, started on
    `spark.driver.bindAddress` and advertised as `spark.driver.host` (the address executors already use to
    reach the driver). None in local mode, where the writers run in the driver's JVM."""
    if runs_locally(spark):
        return None
    conf = spark.sparkContext.getConf()
    host = conf.get("spark.driver.host") or "127.0.0.1"
    bind = conf.get("spark.driver.bindAddress") or host
    return json.loads(channel_class.endpoint(bind, host))  # type: ignore[attr-defined]


def runs_locally(spark: SparkSession) -> bool:
    """Whether the tasks run in the driver's JVM (`local`, `local[n]`; local-cluster[...] has executor JVMs)."""
    master = spark.sparkContext.master
    return master == "local" or master.startswith("local[")


def ship_plugin_jars(spark: SparkSession, transforms: Mapping[str, object] | None) -> None:
    """On a cluster, the plugin path's jars of `transforms` (a writer spec's) go to the executors with the job
    (Spark adds each one once), so a transform's class loads there whether or not the executor's host has the
    folder."""
    for root in (transforms or {}).get("plugin_path", ()):  # type: ignore[union-attr]
        if str(root).endswith(".jar"):
            spark.sparkContext.addJar(str(root))


def jvm_class(jvm: object, name: str):  # a py4j JavaClass
    node = jvm
    for part in name.split("."):
        node = getattr(node, part)
    return node


def query_status(query: StreamingQuery) -> tuple[bool, str | None]:
    """(is active, cause of its failure if it failed); PipelineError when the Spark JVM itself is gone."""
    try:
        active, failure = query.isActive, query.exception()
    except (Py4JError, ConnectionError) as exc:
        raise PipelineError(f"the Spark driver stopped unexpectedly: {exc}") from None
    return active, None if failure is None else root_cause(failure)
