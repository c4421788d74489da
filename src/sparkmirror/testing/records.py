"""Write records to a topic and read every record back: the demo's data, the tests' and benchmarks' checks."""

from __future__ import annotations

import time
from collections.abc import Iterable

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

from sparkmirror.errors import PipelineError
from sparkmirror.kafka.failures import LEADERSHIP_CODES, error_code
from sparkmirror.kafka.produce import AcknowledgedProducer, DeliveryFailed, Message
from sparkmirror.model import KafkaRecord

READ_TIMEOUT_S = 60.0


def produce(bootstrap_servers: str, topic: str, records: Iterable[KafkaRecord]) -> int:
    """Write records (partition, key, value, headers, timestamp as given); returns the count acknowledged."""
    producer = AcknowledgedProducer({"bootstrap.servers": bootstrap_servers, "linger.ms": "5"})
    messages = (Message(r.partition, r.key, r.value, r.headers, r.timestamp) for r in records)
    try:
        return producer.write(topic, messages, READ_TIMEOUT_S)
    except DeliveryFailed as failed:
        raise PipelineError(f"producing to {topic} at {bootstrap_servers} failed: "
                            f"{[str(e) for e in failed.errors[:3]]}") from None


def read_all(bootstrap_servers: str, topic: str, partitions: int, timeout_s: float = READ_TIMEOUT_S,
             committed_only: bool = True) -> dict[int, list[KafkaRecord]]:
    """Every record of every partition, from the beginning to the end offsets seen at the start; with
    `committed_only` False, those of aborted and open transactions too."""
    consumer = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": f"sparkmirror-read-{time.time_ns()}",
                         "enable.auto.commit": "false",
                         "isolation.level": "read_committed" if committed_only else "read_uncommitted"})
    try:
        marks = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout_s)
                 for p in range(partitions)}
        ends = {p: end for p, (_, end) in marks.items()}
        out: dict[int, list[KafkaRecord]] = {p: [] for p in range(partitions)}
        todo = {p for p, (low, end) in marks.items() if end > low}  # an empty one has no position to reach its end
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in todo])
        deadline = time.monotonic() + timeout_s
        while todo:
            if time.monotonic() > deadline:
                raise PipelineError(f"reading {topic} at {bootstrap_servers}: partitions {sorted(todo)} "
                                    f"not read to their end within {timeout_s:.0f} s")
            for msg in consumer.consume(num_messages=5000, timeout=0.5):
                if msg.error():
                    raise KafkaException(msg.error())
                p = msg.partition()
                ts_type, ts = msg.timestamp()
                out[p].append(KafkaRecord(p, msg.offset(), msg.key(), msg.value(),
                                          tuple(msg.headers() or ()), ts_type, ts))
            # Positions, not last offsets: a partition may end in a transaction marker.
            for tp in consumer.position([TopicPartition(topic, p) for p in todo]):
                if tp.offset >= ends[tp.partition]:
                    todo.discard(tp.partition)
        return out
    finally:
        consumer.close()


def commit_offsets(bootstrap_servers: str, group: str, offsets: dict[tuple[str, int], int]) -> None:
    """Commit offsets for a group, as a consumer that processed everything before them would."""
    consumer = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": group, "enable.auto.commit": "false"})
    try:
        consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in offsets.items()], asynchronous=False)
    finally:
        consumer.close()


def open_transactions(bootstrap_servers: str, topic: str, partitions: int,
                      timeout_s: float = READ_TIMEOUT_S) -> list[int]:
    """The partitions holding records of a transaction neither committed nor aborted: their last stable offset
    (the end a consumer reading committed records sees) is below their high watermark. None are known while a
    new topic's leaders are not (an empty list: ask again)."""
    ends: dict[str, dict[int, int]] = {}
    for isolation in ("read_committed", "read_uncommitted"):
        consumer = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": f"sparkmirror-lso-{time.time_ns()}",
                             "enable.auto.commit": "false", "isolation.level": isolation})
        try:
            ends[isolation] = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout_s)[1]
                               for p in range(partitions)}
        except KafkaException as exc:
            if error_code(exc) in LEADERSHIP_CODES:
                return []
            raise
        finally:
            consumer.close()
    return [p for p in range(partitions) if ends["read_committed"][p] < ends["read_uncommitted"][p]]
