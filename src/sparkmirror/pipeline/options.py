"""Pure: a flow's settings -> Spark Kafka source options. Unit-tested without a JVM."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sparkmirror.config.model import SchemaRegistry
from sparkmirror.config.transforms import TransformStage
from sparkmirror.errors import ConfigError
from sparkmirror.policy.delivery import ACKNOWLEDGED_WRITES

# Set by Spark's Kafka source itself (it rejects most of them); MM2's replication consumer also forces
# byte-array deserializers and no auto commit, and uses no group, so dropping them changes nothing.
_SPARK_MANAGED = frozenset({
    "auto.offset.reset", "enable.auto.commit", "key.deserializer", "value.deserializer", "group.id",
})


# Spark reads bounded offset ranges, so a broker-side wait for more data never helps a task; with the
# Java default (500 ms) every partition's last fetch waits it out: 1,000 partitions read in 267 s instead
# of 39 s here (see benchmarks/README.md). An explicit `<alias>.consumer.fetch.max.wait.ms` still wins.
SOURCE_FETCH_MAX_WAIT_MS = "10"
# Real-Time Mode reads without an end: the broker answers a fetch as soon as a record is there, so a long
# wait costs no latency, while 10 ms made every idle partition fetch 100 times a second (measured: 31 CPU s
# in 27 s at 1 MB/s). Kafka's Java default.
REAL_TIME_FETCH_MAX_WAIT_MS = "500"


# Spark's Kafka source creates a consumer per partition it reads (kept in a pool of 64 by default). With
# many partitions that creation is a large part of the CPU: at 1,000 partitions, registering each consumer's
# JMX MBeans and its client-telemetry metrics took about 13% of the task threads' samples in a JFR profile,
# and switching both off cut CPU by 15-20% in that trial. Nothing reads those metrics of Spark's
# consumers; explicit `<source>.consumer.*` settings win.
SOURCE_CONSUMER_DEFAULTS = {"auto.include.jmx.reporter": "false", "enable.metrics.push": "false"}


# A capped batch (exactly once, or sparkmirror.max.offsets.per.trigger) ends each partition inside a fetch. What
# the fetch returned beyond the batch stays in Spark's fetched-data pool for the next batch, and each such record's
# lazily decoded header pins the whole fetch response: 1 MiB (Java's max.partition.fetch.bytes) per partition ran
# a 1 GiB driver out of heap at 1,000 partitions (a JFR old-object sample showed those chains). So with a cap the
# fetches share this budget. What stays live still grows with each poll's records (Spark keeps them decoded, each
# pinning its response): 400 partitions with polls of 2,000 records kept about 450 MB of byte arrays with this
# budget, and ran a 768 MiB driver out of heap without it (tests/e2e/test_capped_batches.py). An explicit
# `<alias>.consumer.max.partition.fetch.bytes` still wins.
CAPPED_FETCH_BUDGET_BYTES = 64 * 1024 * 1024
_JAVA_MAX_PARTITION_FETCH_BYTES = 1_048_576
_MIN_PARTITION_FETCH_BYTES = 32 * 1024


def capped_partition_fetch_bytes(partitions: int) -> int:
    """max.partition.fetch.bytes for a capped query over `partitions` partitions."""
    share = CAPPED_FETCH_BUDGET_BYTES // max(1, partitions)
    return max(_MIN_PARTITION_FETCH_BYTES, min(_JAVA_MAX_PARTITION_FETCH_BYTES, share))


def source_options(consumer_settings: Mapping[str, str], starting_offsets: Mapping[str, Mapping[int, int]],
                   max_offsets_per_trigger: int | None = None,
                   describe: Callable[[str], str] = str, real_time: bool = False) -> dict[str, str]:
    """Options for `spark.readStream.format("kafka")`: the Java consumer settings unchanged, `kafka.`-prefixed.

    The partitions are assigned, not subscribed, and start at the given offsets: the flow, not Spark,
    decides which partitions it reads and where (its own positions survive topic-set changes, deleted and
    re-created topics, which a Spark checkpoint does not). `auto.offset.reset` is not passed on: the flow
    resolved it at load (FlowConfig.reset_policy) into these starting offsets.
    """
    if "interceptor.classes" in consumer_settings:
        raise ConfigError([f"{describe('interceptor.classes')}: consumer interceptors cannot run in Spark's "
                           f"Kafka source; remove the setting"])
    opts = {"kafka.fetch.max.wait.ms": REAL_TIME_FETCH_MAX_WAIT_MS if real_time else SOURCE_FETCH_MAX_WAIT_MS,
            **{f"kafka.{k}": v for k, v in SOURCE_CONSUMER_DEFAULTS.items()}}
    if max_offsets_per_trigger:
        partitions = sum(len(parts) for parts in starting_offsets.values())
        opts["kafka.max.partition.fetch.bytes"] = str(capped_partition_fetch_bytes(partitions))
    opts.update({f"kafka.{k}": v for k, v in consumer_settings.items() if k not in _SPARK_MANAGED})
    ordered = {t: dict(sorted(starting_offsets[t].items())) for t in sorted(starting_offsets)}
    opts.update({
        "assign": json.dumps({t: list(parts) for t, parts in ordered.items()}),
        "startingOffsets": json.dumps({t: {str(p): o for p, o in parts.items()} for t, parts in ordered.items()}),
        "includeHeaders": "true",
        "failOnDataLoss": "true",
    })
    if max_offsets_per_trigger:
        opts["maxOffsetsPerTrigger"] = str(max_offsets_per_trigger)
    return opts


SPARK_KAFKA_SOURCE = "kafka"
FLOW_SOURCE = "io.sparkmirror.recordpath.FlowSource"


# Real-Time Mode's batched fetches (FetchPace.java): the broker answers once 64 KiB are there or 5 ms have passed.
# Measured at 5 MB/s over 12 partitions for 300 s beside MM2, used by load: 0.69x its CPU (plain fetches: 0.83-0.98x)
# and p50 40 ms against 36; an idle consumer of them would fetch 200 times a second, so a task uses them only under
# load (idle: 1.6 CPU s a minute against 6.0 always batched).
BATCHED_FETCH = {"fetch.min.bytes": "65536", "fetch.max.wait.ms": "5"}


def fetch_batching(batch_fetches: int, consumer_settings: Mapping[str, str], real_time: bool) -> int:
    """When a flow's source batches fetches (polls with records a second; 0: never): in Real-Time Mode only, and not
    when the file sets `fetch.min.bytes` or `fetch.max.wait.ms` itself (its settings then hold throughout)."""
    if not real_time or any(k in consumer_settings for k in BATCHED_FETCH):
        return 0
    return batch_fetches


def source_format(reader: str, tasks: int, opts: dict[str, str], poll_timeout_ms: int | None = None,
                  batch_fetches: int = 0) -> str:
    """The readStream format of `sparkmirror.source.reader` (keys.SOURCE_READERS); sparkmirror's source also gets
    its task count in `opts` (it reads every partition with `tasks` consumers, as MM2's tasks.max), MM2's
    `consumer.poll.timeout.ms` as the longest a task's poll waits for records (its tasks' poll, as in MM2) and, for
    Real-Time Mode, when its tasks batch fetches (`batch_fetches` polls with records a second, see
    `fetch_batching`)."""
    if reader == "sparkmirror":
        opts["tasks"] = str(tasks)
        if poll_timeout_ms is not None:
            opts["pollMs"] = str(max(poll_timeout_ms, 1))  # MM2 takes 0; a poll of 0 ms would spin
        if batch_fetches > 0:
            opts.update({"batchFetchesAbove": str(batch_fetches),
                         "batchFetchMinBytes": BATCHED_FETCH["fetch.min.bytes"],
                         "batchFetchMaxWaitMs": BATCHED_FETCH["fetch.max.wait.ms"]})
        return FLOW_SOURCE
    return SPARK_KAFKA_SOURCE


# The Java producer's own defaults batch little (16 KiB, linger 0 ms in kafka-clients 3.9); a replicator moves
# backlogs, so it batches more by default. Explicit `<target>.producer.*` settings win.
PRODUCER_DEFAULTS = {"linger.ms": "5", "batch.size": "262144", "delivery.timeout.ms": "120000"}
# Micro-batches copy backlogs, where each sender loop of the Java producer checks every partition it ever wrote
# to (1,000 partitions: a quarter of the CPU samples in a JFR profile). Fuller batches mean fewer loops: in
# paired 2,000,000-record trials over 1,000 partitions, linger 25 ms with 1 MiB batches took 53.7 s and 61 CPU s
# against 63.3 s and 73 CPU s (benchmarks/README.md). Their latency is set by the batch cycle (hundreds of ms),
# so 20 ms more linger is not seen there; Real-Time Mode keeps the defaults above.
MICRO_BATCH_PRODUCER_DEFAULTS = {**PRODUCER_DEFAULTS, "linger.ms": "25", "batch.size": "1048576"}
_MAX_IN_FLIGHT_WITH_IDEMPOTENCE = 5
_WRITER_MANAGED = frozenset({"key.serializer", "value.serializer"})


_JAVA_MAX_REQUEST_SIZE = 1_048_576
_BATCH_FRAMING_BYTES = 512  # record-batch header and per-request overhead kept below the topic limit


def producer_settings(java_settings: Mapping[str, str], message_limits: Mapping[str, int] | None = None,
                      describe: Callable[[str], str] = str, real_time: bool = False) -> dict[str, str]:
    """The JVM writer's producer settings (Java client names): ordered, idempotent, acks=all.

    `message_limits` are the remote topics' `max.message.bytes`. The broker applies a topic's limit to whole
    record batches, and the idempotent Java producer (kafka-clients 3.9) fails on a batch the broker rejects
    (measured here: its I/O thread overflowed its stack), so batches of several records stay below the smallest
    limit. A record too large to share a batch goes alone: the writer checks it against its own topic's limit
    (MirrorWriter.refuse), and `max.request.size` lets through what the largest topic accepts unless the file
    sets it, so one topic's limit never blocks another topic's records.
    """
    in_flight = java_settings.get("max.in.flight.requests.per.connection", "1").strip()
    if not in_flight.isdigit() or int(in_flight) > _MAX_IN_FLIGHT_WITH_IDEMPOTENCE:
        raise ConfigError([f"{describe('max.in.flight.requests.per.connection')}: '{in_flight}' would reorder "
                           f"records or is not a number; the idempotent producer takes 1 to "
                           f"{_MAX_IN_FLIGHT_WITH_IDEMPOTENCE}"])
    defaults = PRODUCER_DEFAULTS if real_time else MICRO_BATCH_PRODUCER_DEFAULTS
    settings = {**defaults, **{k: v for k, v in java_settings.items() if k not in _WRITER_MANAGED}}
    settings.update(ACKNOWLEDGED_WRITES)
    if message_limits:
        requested = int(settings["batch.size"])
        smallest, largest = min(message_limits.values()), max(message_limits.values())
        settings["batch.size"] = str(max(1, min(requested, smallest - _BATCH_FRAMING_BYTES)))
        if "max.request.size" not in java_settings:
            settings["max.request.size"] = str(max(_JAVA_MAX_REQUEST_SIZE, largest))
    return settings


def transforms_spec(stages: Sequence[TransformStage], errors_tolerance: str, plugin_path: Sequence[str],
                    source: str) -> dict[str, object] | None:
    """What the JVM writer's transform step needs (TransformStep.of), or None when the flow has no transforms, so
    that a flow without them takes the plain path."""
    if not stages:
        return None
    return {"stages": [s.to_spec() for s in stages], "errors_tolerance": errors_tolerance,
            "plugin_path": list(plugin_path), "source": source}


MICRO_BATCH, REAL_TIME = "micro-batch", "real-time"


@dataclass(frozen=True)
class TriggerSpec:
    """How a flow's query is triggered.

    micro-batch: Spark plans a batch whenever records are there. real-time: Spark's Real-Time Mode, one
    long-running task per source partition for `epoch_ms`. In both, the writers report what the target
    acknowledged every `report_interval_ms` and when their task ends, so positions and offset syncs do not
    wait for a long batch or epoch to end.
    """

    mode: str
    epoch_ms: int
    report_interval_ms: int

    @property
    def real_time_epoch(self) -> str:
        return f"{self.epoch_ms} milliseconds"


def flow_tasks(tasks_max: int | None) -> int:
    """A flow's tasks: MM2's tasks.max, else one per core of this machine."""
    return tasks_max or os.cpu_count() or 1


def real_time_slots(reader: str, tasks: int, partitions: int) -> int:
    """Task slots a Real-Time Mode query holds for good: one per source partition with Spark's Kafka source; with
    sparkmirror's, one per task (at most one per partition), each reading many partitions."""
    return min(tasks, partitions) if reader == "sparkmirror" else partitions


def real_time_slots_problem(flow: str, partitions: int, slots: int, master: str, wanted: int | None = None
                            ) -> str | None:
    """Real-Time Mode runs every task at once (with Spark's Kafka source, a task per source partition, `wanted`
    None): a flow wanting more than the free task slots would starve some partitions silently, so it is refused
    with the numbers."""
    needed = partitions if wanted is None else wanted
    if needed <= slots:
        return None
    if wanted is None:
        return (f"flow {flow}: Real-Time Mode needs one Spark task slot per source partition: {partitions} "
                f"partitions but {slots} free slots (spark.master = {master}). Give Spark more slots (e.g. "
                f"spark.master = local[{partitions + 2}]), set {flow}.sparkmirror.source.reader = sparkmirror (a "
                f"task reads many partitions) or set {flow}.sparkmirror.trigger.mode = micro-batch")
    return (f"flow {flow}: Real-Time Mode runs its {needed} tasks at once but {slots} Spark task slots are free "
            f"(spark.master = {master}). Give Spark more slots or set {flow}.tasks.max = {max(1, slots)}")


def schema_ids_spec(schemas: str, unknown_ids: str, source: SchemaRegistry | None,
                    target: SchemaRegistry | None, exempt: Sequence[str] = ()) -> dict[str, str] | None:
    """The writer's schema id rewrite (SchemaResolver.java) for a flow's `sparkmirror.schemas`; None unless it is
    `rewrite`. User info is left out when the registry has none. `exempt`: source topics whose records are never
    registry records (heartbeats: MM2's own format starts with a zero byte too)."""
    if schemas != "rewrite" or source is None or target is None:
        return None
    out = {"source_url": source.url, "target_url": target.url, "unknown_ids": unknown_ids,
           "exempt_topics": ",".join(exempt)}
    out.update({f"{side}_user_info": r.user_info for side, r in (("source", source), ("target", target))
                if r.user_info})
    return out
