"""ReplicationFlow: one Spark Structured Streaming query per `source->target` flow."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from py4j.protocol import Py4JError
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812
from pyspark.sql.streaming import StreamingQuery

from sparkmirror.errors import PipelineError
from sparkmirror.model import PartitionSummary
from sparkmirror.pipeline.failures import root_cause
from sparkmirror.pipeline.writer import INPUT_COLUMNS, SUMMARY_SCHEMA, PartitionWriter

logger = logging.getLogger(__name__)

# (batch id, per-partition summaries, time.monotonic() when the batch started writing)
BatchListener = Callable[[int, list[PartitionSummary], float], None]


def replication_columns(df: DataFrame) -> DataFrame:
    """Keep what a replicated record needs; the timestamp as epoch milliseconds, exactly as stored."""
    return df.select(*(F.unix_millis("timestamp").alias(c) if c == "timestamp_ms" else F.col(c)
                       for c in INPUT_COLUMNS))


class BatchSink:
    """foreachBatch handler: runs the PartitionWriter on every task, collects only the summaries."""

    def __init__(self, writer: PartitionWriter, on_batch: BatchListener, max_tasks: int) -> None:
        self.writer = writer
        self.on_batch = on_batch
        self.max_tasks = max_tasks
        self._lock = threading.Lock()
        self._closed = False

    def close(self) -> None:
        """Wait for the batch in progress to finish; later batches write nothing.

        Then stopping the query interrupts no write. A batch skipped here is not lost: the flow's
        positions only move in `on_batch`, so the next query reads those records again.
        """
        with self._lock:
            self._closed = True

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        with self._lock:
            if not self._closed:
                self._write(batch, batch_id)

    def _write(self, batch: DataFrame, batch_id: int) -> None:
        started = time.monotonic()
        # Fewer, longer tasks: Spark's fixed cost per Python task dominates small batches (see
        # benchmarks/README.md). Whole Kafka partitions are concatenated, never split, so each keeps its order.
        rows = batch.coalesce(self.max_tasks).mapInArrow(self.writer, SUMMARY_SCHEMA).collect()
        self.on_batch(batch_id, [_summary(row.asDict()) for row in rows], started)


def _summary(row: dict) -> PartitionSummary:
    return PartitionSummary(**{**row, "sync_upstream": tuple(row["sync_upstream"] or ()),
                               "sync_downstream": tuple(row["sync_downstream"] or ()),
                               "sync_runs": tuple(row["sync_runs"] or ())})


class ReplicationFlow:
    """Source stream -> projection -> BatchSink, checkpointed under its own folder."""

    def __init__(self, spark: SparkSession, name: str, source_options: Mapping[str, str],
                 writer: PartitionWriter, checkpoint_dir: Path, on_batch: BatchListener,
                 max_tasks: int | None = None) -> None:
        self.spark = spark
        self.name = name
        self.source_options = dict(source_options)
        self.sink = BatchSink(writer, on_batch, max_tasks or spark.sparkContext.defaultParallelism)
        self.checkpoint_dir = checkpoint_dir

    def start(self, until_caught_up: bool = False) -> StreamingQuery:
        """Start the query; with until_caught_up it stops by itself once the backlog is copied."""
        reader = self.spark.readStream.format("kafka")
        for key, value in self.source_options.items():
            reader = reader.option(key, value)
        stream = reader.load().transform(replication_columns)
        writer = (stream.writeStream.queryName(self.name)
                  .option("checkpointLocation", str(self.checkpoint_dir))
                  .foreachBatch(self.sink))
        if until_caught_up:
            writer = writer.trigger(availableNow=True)
        logger.info("starting flow %s checkpoint=%s", self.name, self.checkpoint_dir)
        return writer.start()


def query_status(query: StreamingQuery) -> tuple[bool, str | None]:
    """(is active, cause of its failure if it failed); PipelineError when the Spark JVM itself is gone."""
    try:
        active, failure = query.isActive, query.exception()
    except (Py4JError, ConnectionError) as exc:
        raise PipelineError(f"the Spark driver stopped unexpectedly: {exc}") from None
    return active, None if failure is None else root_cause(failure)
