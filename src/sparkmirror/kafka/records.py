"""Produce records to and read every record back from a topic: the demo's data and the tests' checks."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition

from sparkmirror.errors import PipelineError
from sparkmirror.model import KafkaRecord

READ_TIMEOUT_S = 60.0


def produce(bootstrap_servers: str, topic: str, records: Iterable[KafkaRecord]) -> int:
    """Write records (partition, key, value, headers, timestamp as given); returns the count acknowledged."""
    producer = Producer({"bootstrap.servers": bootstrap_servers, "acks": "all", "enable.idempotence": "true",
                         "linger.ms": "5",
                         "logger": logging.getLogger("sparkmirror.librdkafka")})
    errors: list[str] = []

    def on_delivery(err: object, _msg: object) -> None:
        if err is not None:
            errors.append(str(err))

    count = 0
    for r in records:
        while True:
            try:
                producer.produce(topic, value=r.value, key=r.key, partition=r.partition,
                                 timestamp=r.timestamp, headers=list(r.headers) or None, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.05)
        count += 1
    if producer.flush(READ_TIMEOUT_S) or errors:
        raise PipelineError(f"producing to {topic} at {bootstrap_servers} failed: {errors[:3]}")
    return count


def read_all(bootstrap_servers: str, topic: str, partitions: int,
             timeout_s: float = READ_TIMEOUT_S) -> dict[int, list[KafkaRecord]]:
    """Every record of every partition, from the beginning to the end offsets seen at the start."""
    consumer = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": f"sparkmirror-read-{time.time_ns()}",
                         "enable.auto.commit": "false", "isolation.level": "read_committed"})
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout_s)[1]
                for p in range(partitions)}
        out: dict[int, list[KafkaRecord]] = {p: [] for p in range(partitions)}
        todo = {p for p, end in ends.items() if end > 0}
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


def has_records_between(settings: Mapping[str, str], topic: str, partition: int, start: int, end: int,
                        timeout_s: float = 10.0) -> bool:
    """Whether a consumer with these (librdkafka) settings reads any record at offsets start..end-1.

    Offsets hold no record a consumer sees when they are transaction markers, or aborted records read
    with read_committed: a flow has read a partition to its end once only such offsets are left. True when
    the answer cannot be had in time (the caller keeps waiting rather than stops early)."""
    consumer = Consumer({**settings, "group.id": f"sparkmirror-peek-{time.time_ns()}",
                         "enable.auto.commit": "false", "enable.auto.offset.store": "false"})
    try:
        consumer.assign([TopicPartition(topic, partition, start)])
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is not None and not msg.error():
                return msg.offset() < end
            # Positions, not last offsets: the consumer steps over markers without handing them out.
            [tp] = consumer.position([TopicPartition(topic, partition)])
            if tp.offset >= end:
                return False
        return True
    finally:
        consumer.close()
