"""PartitionWriter: runs in Spark's Python workers and writes one task's records to the target.

Spark's own Kafka sink cannot set record timestamps (checked on spark-sql-kafka 4.0.0), so the target
write happens here with confluent-kafka: one `produce` per record (it carries the timestamp), acks=all
and idempotence so each partition's records land in order, and each record's downstream offset taken
from its delivery report. A producer is kept per worker process and reused across tasks and batches.
"""

from __future__ import annotations

import logging
import time
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
from confluent_kafka import KafkaError, KafkaException, Producer

from sparkmirror.errors import PipelineError
from sparkmirror.policy.provenance import PROVENANCE_HEADER, ProvenanceRule

logger = logging.getLogger(__name__)
_librdkafka_logger = logging.getLogger("sparkmirror.librdkafka")

# Columns the writer reads (see transforms.replication_columns) and the summary it returns.
INPUT_COLUMNS = ("topic", "partition", "offset", "timestamp_ms", "key", "value", "headers")
_SUMMARY_FIELDS = (
    ("topic", "string", pa.string()), ("partition", "int", pa.int32()), ("remote_topic", "string", pa.string()),
    ("records", "long", pa.int64()), ("skipped", "long", pa.int64()), ("bytes", "long", pa.int64()),
    ("next_upstream", "long", pa.int64()), ("sync_upstream", "array<long>", pa.list_(pa.int64())),
    ("sync_downstream", "array<long>", pa.list_(pa.int64())), ("sync_runs", "array<boolean>", pa.list_(pa.bool_())),
)
SUMMARY_SCHEMA = ", ".join(f"{name} {ddl}" for name, ddl, _ in _SUMMARY_FIELDS)  # for mapInArrow
_SUMMARY_ARROW = pa.schema([(name, arrow) for name, _, arrow in _SUMMARY_FIELDS])
FLUSH_TIMEOUT_S = 180.0
UNKNOWN_PARTITION_WAIT_S = 30.0
_POLL_EVERY = 2000

_producers: dict[tuple[tuple[str, str], ...], Producer] = {}


def _producer(settings: dict[str, str]) -> Producer:
    key = tuple(sorted(settings.items()))
    producer = _producers.get(key)
    if producer is None:
        producer = _producers[key] = Producer({**settings, "logger": _librdkafka_logger})
    return producer


def _discard_producer(settings: dict[str, str]) -> None:
    """Drop a producer after a failure so a retried task starts from a clean state."""
    producer = _producers.pop(tuple(sorted(settings.items())), None)
    if producer is not None:
        producer.purge()
        producer.flush(0)


@dataclass
class _PartitionLog:
    """Upstream offsets produced and downstream offsets acknowledged, in order, for one partition."""

    topic: str
    remote_topic: str
    upstream: array = field(default_factory=lambda: array("q"))
    downstream: array = field(default_factory=lambda: array("q"))
    bytes: int = 0
    skipped: int = 0
    next_upstream: int = -1  # one past the last offset seen, written or skipped

    def sync_points(self) -> tuple[list[int], list[int], list[bool]]:
        """Offset syncs worth writing: the first and last record, and both records around every place where
        the two offset sequences stop advancing one by one (a gap upstream such as a transaction marker or a
        compacted record, or a foreign record downstream). The third list says, per point, whether every
        record up to the next point was replicated contiguously (a run); otherwise the next point is the
        very next record replicated. Together they translate every offset exactly."""
        if not self.upstream:
            return [], [], []
        up = np.frombuffer(self.upstream, dtype=np.int64)
        down = np.frombuffer(self.downstream, dtype=np.int64)
        broken = (np.diff(up) != 1) | (np.diff(down) != 1)
        breaks = np.nonzero(broken)[0]
        points = np.unique(np.concatenate(([0, len(up) - 1], breaks, breaks + 1)))
        # Between two consecutive points with no break at the first, nothing breaks at all: a run.
        runs = np.append(~broken[points[:-1]], False) if len(points) > 1 else np.array([False])
        return up[points].tolist(), down[points].tolist(), runs.tolist()


class _Deliveries:
    """Delivery-report sink. Reports of one partition arrive in produce order (idempotent producer)."""

    def __init__(self) -> None:
        self.logs: dict[tuple[str, int], _PartitionLog] = {}
        self.error: tuple[KafkaError, str, int, int] | None = None

    def on_delivery(self, err: KafkaError | None, msg: object) -> None:
        log = self.logs[(msg.topic(), msg.partition())]  # type: ignore[attr-defined]
        if err is not None:
            if self.error is None:
                self.error = (err, msg.topic(), msg.partition(), len(log.downstream))  # type: ignore[attr-defined]
            return
        log.downstream.append(msg.offset())  # type: ignore[attr-defined]


def _hint(code: int, target: str) -> str:
    if code == KafkaError.MSG_SIZE_TOO_LARGE:
        return (f" The record is larger than cluster '{target}' accepts: raise the remote topic's "
                f"max.message.bytes (or the broker's message.max.bytes) and "
                f"'{target}.producer.max.request.size'.")
    if code in (KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.CLUSTER_AUTHORIZATION_FAILED):
        return f" Grant WRITE on the remote topic to the principal used for cluster '{target}'."
    if code == KafkaError._MSG_TIMED_OUT:
        return f" Cluster '{target}' did not acknowledge in time: is it reachable?"
    return ""


class PartitionWriter:
    """The `mapInArrow` function of a flow: Arrow batches of source records in, one summary row out.

    Invariant: returns only after every record it was given is acknowledged by the target (acks=all);
    otherwise it raises, the task fails and Spark re-runs it, so nothing is skipped.
    """

    def __init__(self, target_alias: str, producer_settings: dict[str, str], remote_topics: dict[str, str],
                 provenance: ProvenanceRule | None = None):
        self.target_alias = target_alias
        self.producer_settings = producer_settings
        self.remote_topics = remote_topics
        self.provenance = provenance

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        producer = _producer(self.producer_settings)
        deliveries = _Deliveries()
        try:
            for batch in batches:
                self._produce_batch(producer, batch, deliveries)
            remaining = producer.flush(FLUSH_TIMEOUT_S)
            if remaining:
                raise PipelineError(f"{remaining} records were not acknowledged by cluster "
                                    f"'{self.target_alias}' within {FLUSH_TIMEOUT_S:.0f} s; is it reachable?")
            self._raise_delivery_error(deliveries)
            summary = self._summary(deliveries)
        except BaseException:
            _discard_producer(self.producer_settings)
            raise
        yield summary

    def _produce_batch(self, producer: Producer, batch: pa.RecordBatch, deliveries: _Deliveries) -> None:
        cols = {name: batch.column(name).to_pylist() for name in INPUT_COLUMNS}
        produce, on_delivery, logs = producer.produce, deliveries.on_delivery, deliveries.logs
        for i, (topic, partition, offset) in enumerate(zip(cols["topic"], cols["partition"], cols["offset"],
                                                           strict=True)):
            remote = self.remote_topics.get(topic)
            if remote is None:
                raise PipelineError(f"no remote topic planned for source topic '{topic}'")
            log = logs.get((remote, partition))
            if log is None:
                log = logs[(remote, partition)] = _PartitionLog(topic, remote)
            log.next_upstream = offset + 1
            key, value, raw_headers = cols["key"][i], cols["value"][i], cols["headers"][i]
            headers = [(h["key"], h["value"]) for h in raw_headers] if raw_headers else None
            if self.provenance is not None:
                headers = self._stamp(headers)
                if headers is None:
                    log.skipped += 1
                    continue
            timestamp = max(cols["timestamp_ms"][i], 0)
            unknown_until: float | None = None
            while True:
                try:
                    produce(remote, value=value, key=key, partition=partition, timestamp=timestamp,
                            headers=headers, on_delivery=on_delivery)
                    break
                except BufferError:
                    producer.poll(0.05)
                except KafkaException as exc:
                    err = exc.args[0]
                    if err.code() == KafkaError._UNKNOWN_PARTITION and unknown_until is None:
                        # A partition just added to the remote topic: refresh metadata, then retry for a while.
                        unknown_until = time.monotonic() + UNKNOWN_PARTITION_WAIT_S
                    if err.code() == KafkaError._UNKNOWN_PARTITION and time.monotonic() < unknown_until:
                        producer.list_topics(remote, timeout=5)
                        continue
                    raise PipelineError(
                        f"cannot write record {topic}-{partition}@{offset} to cluster '{self.target_alias}' "
                        f"topic '{remote}': {err.str()} ({err.name()}).{_hint(err.code(), self.target_alias)}"
                    ) from None
            log.upstream.append(offset)
            log.bytes += (len(key) if key else 0) + (len(value) if value else 0)
            if i % _POLL_EVERY == 0:
                producer.poll(0)

    def _stamp(self, headers: list[tuple[str, bytes | None]] | None) -> list[tuple[str, bytes | None]] | None:
        """Headers with the provenance header updated in place; None when the target already saw the record."""
        rule = self.provenance
        if not headers:
            return [(PROVENANCE_HEADER, rule.stamp)]  # type: ignore[union-attr]
        for j, (name, value) in enumerate(headers):
            if name == PROVENANCE_HEADER:
                stamped = rule.next_value(value)  # type: ignore[union-attr]
                if stamped is None:
                    return None
                headers[j] = (PROVENANCE_HEADER, stamped)
                return headers
        headers.append((PROVENANCE_HEADER, rule.stamp))  # type: ignore[union-attr]
        return headers

    def _raise_delivery_error(self, deliveries: _Deliveries) -> None:
        if deliveries.error is None:
            return
        err, remote, partition, index = deliveries.error
        log = deliveries.logs[(remote, partition)]
        topic = log.topic
        upstream = log.upstream[index] if index < len(log.upstream) else -1
        raise PipelineError(
            f"writing {topic}-{partition}@{upstream} to cluster '{self.target_alias}' topic '{remote}' "
            f"failed: {err.str()} ({err.name()}).{_hint(err.code(), self.target_alias)}")

    def _summary(self, deliveries: _Deliveries) -> pa.RecordBatch:
        rows: dict[str, list[object]] = {name: [] for name in _SUMMARY_ARROW.names}
        for (remote, partition), log in deliveries.logs.items():
            if len(log.downstream) != len(log.upstream):
                raise PipelineError(f"{len(log.upstream) - len(log.downstream)} delivery reports missing "
                                    f"for '{remote}' partition {partition}")
            sync_up, sync_down, sync_runs = log.sync_points()
            for name, value in (("topic", log.topic), ("partition", partition), ("remote_topic", remote),
                                ("records", len(log.upstream)), ("skipped", log.skipped), ("bytes", log.bytes),
                                ("next_upstream", log.next_upstream), ("sync_upstream", sync_up),
                                ("sync_downstream", sync_down), ("sync_runs", sync_runs)):
                rows[name].append(value)
        return pa.RecordBatch.from_pydict(rows, schema=_SUMMARY_ARROW)

