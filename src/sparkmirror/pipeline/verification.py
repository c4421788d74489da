"""`sparkmirror verify`'s Spark batch job: a flow's source partitions joined with their remote partitions.

Both sides are read by Spark's Kafka source in batch (partitions in parallel, on the cluster when `spark.master`
names one). The source side goes through the flow's SQL rules as the flow's query does (`replication_columns`:
masks applied, filtered records dropped), so it is what the flow would have written. Each record gets a digest of
its key, value, headers and timestamp, its rank in its partition and its occurrence among the records of its
digest; a full outer join on (partition, digest, occurrence) pairs the n-th source record of a digest with the
n-th target record of it. What is left over and the pairs out of order go to `offsets/verification.judge`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from sparkmirror.config.sql_rules import SqlRules
from sparkmirror.offsets.verification import EXAMPLES_PER_PARTITION, Comparison, PartitionRange, Unmatched
from sparkmirror.pipeline.flow import INPUT_COLUMNS, jvm_class, replication_columns, runs_locally, ship_plugin_jars
from sparkmirror.pipeline.options import source_options
from sparkmirror.pipeline.sql_rules import KEEP

TP = ("tp_topic", "tp_partition")
DIGEST = ("d1", "d2")
_WRITTEN_ROWS = "io.sparkmirror.recordpath.WrittenRows"


def _read(spark: SparkSession, settings: Mapping[str, str], ranges: Mapping[str, Mapping[int, tuple[int, int]]],
          extra: Mapping[str, str]) -> DataFrame | None:
    """One side's records in `ranges` (topic -> partition -> [from, to)); None when every range is empty."""
    wanted = {t: {p: r for p, r in parts.items() if r[1] > r[0]} for t, parts in ranges.items()}
    wanted = {t: parts for t, parts in wanted.items() if parts}
    if not wanted:
        return None
    reader = spark.read.format("kafka")
    opts = source_options(settings, {t: {p: r[0] for p, r in parts.items()} for t, parts in wanted.items()})
    opts.update(extra)
    opts["endingOffsets"] = json.dumps({t: {str(p): r[1] for p, r in sorted(parts.items())}
                                        for t, parts in sorted(wanted.items())})
    opts["failOnDataLoss"] = "false"  # a record removed meanwhile is a difference to report, not a crash
    for key, value in opts.items():
        reader = reader.option(key, value)
    return reader.load()


SAMPLE_SCALE = 1_000_000


def written(rows: DataFrame, shaping: Mapping[str, object]) -> DataFrame:
    """`rows` (the flow's projection) as the flow's record path writes them: `shaping` holds its provenance and
    transforms as the writer's spec does, and remote_topics."""
    jrows = jvm_class(rows.sparkSession.sparkContext._jvm, _WRITTEN_ROWS).of(  # type: ignore[attr-defined]
        rows.select(*INPUT_COLUMNS)._jdf, json.dumps(dict(shaping)))
    return DataFrame(jrows, rows.sparkSession)


def _side(df: DataFrame, topic_of: Column | None, rules: SqlRules | None, exempt: Sequence[str],
          sample: tuple[float, int] | None = None, shaping: Mapping[str, object] | None = None) -> DataFrame:
    """Each record's partition key, offset, digest, rank and occurrence. With `sample` (fraction, salt) only the
    records whose salted digest falls in the fraction are kept, on both sides alike: a record and its copy are
    kept or dropped together, so the sample's join is as exact as the whole's. `shaping`: see `written`."""
    rows = replication_columns(df, rules, exempt)
    if rules is not None and rules.filter:
        rows = rows.where(F.coalesce(F.col(KEEP), F.lit(False)))
    if shaping is not None:
        rows = written(rows, shaping)
    # no headers is no headers, whether a side holds them as null or as an empty array
    headers = F.when(F.size("headers") > 0, F.col("headers"))
    digest_of = (F.col("key"), F.col("value"), headers, F.col("timestamp_ms"))
    by_partition = Window.partitionBy(*TP).orderBy("offset")
    by_digest = Window.partitionBy(*TP, *DIGEST).orderBy("offset")
    rows = rows.select((topic_of if topic_of is not None else F.col("topic")).alias(TP[0]),
                       F.col("partition").alias(TP[1]), "offset",
                       F.xxhash64(*digest_of).alias(DIGEST[0]), F.hash(*digest_of).alias(DIGEST[1]))
    if sample is not None:
        fraction, salt = sample
        picked = F.pmod(F.xxhash64(F.col(DIGEST[0]), F.lit(salt)), F.lit(SAMPLE_SCALE))
        rows = rows.where(picked < F.lit(int(fraction * SAMPLE_SCALE)))
    return (rows.withColumn("rank", F.row_number().over(by_partition) - 1)
            .withColumn("occ", F.row_number().over(by_digest)))


def compare(spark: SparkSession, ranges: Sequence[PartitionRange], source_settings: Mapping[str, str],
            target_settings: Mapping[str, str], rules: SqlRules | None = None, exempt: Sequence[str] = (),
            limit: int = EXAMPLES_PER_PARTITION, sample: tuple[float, int] | None = None,
            shaping: Mapping[str, object] | None = None) -> dict[tuple[str, int], Comparison]:
    """Compare the ranges of one flow; (source topic, partition) -> what the join found. `sample`: (fraction,
    salt), see `_side`; `shaping`: the flow's provenance and transforms as the writer's spec holds them (None when
    it has neither: the records are written as read)."""
    source_ranges: dict[str, dict[int, tuple[int, int]]] = {}
    target_ranges: dict[str, dict[int, tuple[int, int]]] = {}
    for r in ranges:
        source_ranges.setdefault(r.topic, {})[r.partition] = (r.source_from, r.source_to)
        target_ranges.setdefault(r.remote_topic, {})[r.partition] = (r.target_from, r.target_to)
    # what a consumer of the target sees: records of aborted or open transactions never reached anyone
    source = _read(spark, source_settings, source_ranges, {})
    target = _read(spark, target_settings, target_ranges, {"kafka.isolation.level": "read_committed"})
    out = {r.key: Comparison(0, 0, 0) for r in ranges}
    if source is None and target is None:
        return out
    sources_of = {r.remote_topic: r.topic for r in ranges}
    remote = F.create_map(*[F.lit(x) for pair in sorted(sources_of.items()) for x in pair])
    if shaping is not None:
        shaping = {**shaping, "remote_topics": {r.topic: r.remote_topic for r in ranges}}
        if not runs_locally(spark):
            ship_plugin_jars(spark, shaping.get("transforms"))  # type: ignore[arg-type]
    s = _side(source, None, rules, exempt, sample, shaping) if source is not None else None
    t = _side(target, remote[F.col("topic")], None, (), sample) if target is not None else None
    empty = spark.createDataFrame([], "tp_topic string, tp_partition int, offset long, d1 long, d2 int, rank int, "
                                      "occ int")
    s = s if s is not None else empty
    t = t if t is not None else empty
    joined = (s.select(*TP, *DIGEST, "occ", F.col("offset").alias("s_offset"), F.col("rank").alias("s_rank"))
              .join(t.select(*TP, *DIGEST, "occ", F.col("offset").alias("t_offset"), F.col("rank").alias("t_rank")),
                    [*TP, *DIGEST, "occ"], "full_outer")
              .withColumn("matched", F.col("s_offset").isNotNull() & F.col("t_offset").isNotNull()))
    joined = joined.persist()
    try:
        return _collect(joined, out, limit)
    finally:
        joined.unpersist()


def _collect(joined: DataFrame, out: dict[tuple[str, int], Comparison], limit: int
             ) -> dict[tuple[str, int], Comparison]:
    pair = F.struct(F.col("s_rank").alias("s"), F.col("t_rank").alias("t"))
    before = Window.unboundedPreceding, -1
    by_source = Window.partitionBy(*TP).orderBy("s_rank").rowsBetween(*before)
    by_target = Window.partitionBy(*TP).orderBy("t_rank").rowsBetween(*before)
    anchor_s = F.last(F.when(F.col("matched"), pair), ignorenulls=True).over(by_source)
    anchor_t = F.last(F.when(F.col("matched"), pair), ignorenulls=True).over(by_target)

    counts = {(r[0], r[1]): r for r in joined.groupBy(*TP).agg(
        F.count("s_offset").alias("sources"), F.count("t_offset").alias("targets"),
        F.sum(F.col("matched").cast("long")).alias("matched"),
        F.max_by(F.when(F.col("matched"), F.col("t_rank")), F.when(F.col("matched"), F.col("s_rank"))).alias("lt"),
        F.max(F.when(F.col("matched"), F.col("s_rank"))).alias("ls")).collect()}

    first = Window.partitionBy(*TP).orderBy("rank")
    sources = (joined.where(F.col("s_offset").isNotNull()).withColumn("anchor", anchor_s)
               .where(F.col("t_offset").isNull())
               .select(*TP, F.col("s_offset").alias("offset"), F.col("s_rank").alias("rank"), "anchor"))
    # from the join (persisted), not `source`: that would read the source topic again
    copies = (joined.where(F.col("s_offset").isNotNull()).groupBy(*TP, *DIGEST)
              .agg(F.min("s_offset").alias("copy_of")))
    targets = (joined.where(F.col("t_offset").isNotNull()).withColumn("anchor", anchor_t)
               .where(F.col("s_offset").isNull())
               .join(copies, [*TP, *DIGEST], "left")
               .select(*TP, F.col("t_offset").alias("offset"), F.col("t_rank").alias("rank"), "anchor", "copy_of"))
    unmatched_s = _firsts(sources, first, limit)
    unmatched_t = _firsts(targets, first, limit)
    by_match = Window.partitionBy(*TP).orderBy("s_rank")
    disorder = (joined.where("matched")
                .withColumn("before", F.max("t_rank").over(by_match.rowsBetween(*before)))
                .where(F.col("t_rank") < F.col("before"))
                .select(*TP, F.col("s_offset").alias("offset"), "t_offset", F.col("s_rank").alias("rank")))
    disorder_rows = _firsts(disorder, first, limit)
    totals = {kind: {(r[0], r[1]): r[2] for r in df.groupBy(*TP).count().collect()}
              for kind, df in (("s", sources), ("t", targets), ("o", disorder))}

    for key, row in counts.items():
        last = (row["ls"], row["lt"]) if row["ls"] is not None else (-1, -1)
        out[key] = Comparison(
            row["sources"], row["targets"], row["matched"] or 0,
            tuple(_unmatched(r) for r in unmatched_s.get(key, ())),
            tuple(_unmatched(r, r["copy_of"]) for r in unmatched_t.get(key, ())),
            tuple((r["offset"], r["t_offset"]) for r in disorder_rows.get(key, ())),
            totals["s"].get(key, 0), totals["t"].get(key, 0), totals["o"].get(key, 0), last)
    return out


def _firsts(df: DataFrame, order: Window, limit: int) -> dict[tuple[str, int], list]:
    rows: dict[tuple[str, int], list] = {}
    for r in df.withColumn("n", F.row_number().over(order)).where(F.col("n") <= limit).collect():
        rows.setdefault((r[TP[0]], r[TP[1]]), []).append(r)
    return rows


def _unmatched(row, copy_of: int | None = None) -> Unmatched:
    anchor = row["anchor"]
    return Unmatched(row["offset"], row["rank"], (anchor["s"], anchor["t"]) if anchor is not None else (-1, -1),
                     copy_of)


def task_progress(spark: SparkSession) -> tuple[int, int]:
    """(tasks done, tasks) of the Spark stages running now: what a terminal shows while verify runs."""
    tracker = spark.sparkContext.statusTracker()
    done = total = 0
    for stage_id in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage_id)
        if info is not None:
            done, total = done + info.numCompletedTasks, total + info.numTasks
    return done, total
