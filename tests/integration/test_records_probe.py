"""`kafka.records.oldest_records` against a real broker: the first visible record of a range and its timestamp."""

from __future__ import annotations

import time

from confluent_kafka import Consumer, Producer, TopicPartition

from sparkmirror.kafka.records import oldest_records

SHORT_TIMEOUT_S = 1.0
MARKER_WAIT_S = 30.0


def _high_watermark(bootstrap: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"probe-watermarks-{topic}"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
    finally:
        consumer.close()


def _wait_for_high_watermark(bootstrap: str, topic: str, offset: int) -> None:
    """Transaction markers are written after commit/abort returns: wait for them to fix the offsets."""
    deadline = time.monotonic() + MARKER_WAIT_S
    while (high := _high_watermark(bootstrap, topic)) < offset:
        assert time.monotonic() < deadline, f"high watermark {high}, expected {offset} after the markers"
        time.sleep(0.1)


def _transactional_partition(bootstrap: str, topic: str, base_ms: int) -> None:
    """Partition 0: committed records at 0-1 (marker 2), aborted at 3-4 (marker 5), a plain record at 6."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"probe-{topic}"})
    producer.init_transactions(30)
    for abort, first in ((False, 0), (True, 3)):
        producer.begin_transaction()
        for i in range(2):
            producer.produce(topic, value=b"tx", partition=0, timestamp=base_ms + first + i)
        assert producer.flush(30) == 0  # abort_transaction drops what is not sent yet
        if abort:
            producer.abort_transaction(30)
        else:
            producer.commit_transaction(30)
        _wait_for_high_watermark(bootstrap, topic, first + 3)
    plain = Producer({"bootstrap.servers": bootstrap})
    plain.produce(topic, value=b"plain", partition=0, timestamp=base_ms + 6)
    assert plain.flush(30) == 0
    assert _high_watermark(bootstrap, topic) == 7


def test_oldest_records_reads_timestamps_and_sees_through_transaction_markers(clusters, create_topic, unique):
    topic = f"probe-{unique}"
    create_topic("A", topic, 3)
    base = int(time.time() * 1000) - 60_000
    _transactional_partition(clusters.source, topic, base)
    producer = Producer({"bootstrap.servers": clusters.source})
    for i in range(3):
        producer.produce(topic, value=b"p1", partition=1, timestamp=base + 100 + i)
    assert producer.flush(30) == 0
    committed = {"bootstrap.servers": clusters.source, "isolation.level": "read_committed"}
    uncommitted = {**committed, "isolation.level": "read_uncommitted"}

    # One consumer for many partitions; an empty range is answered without reading.
    got = oldest_records(committed, {(topic, 0): (1, 7), (topic, 1): (1, 3), (topic, 2): (0, 0)})
    assert got == {(topic, 0): base + 1, (topic, 1): base + 101, (topic, 2): None}

    assert oldest_records(committed, {(topic, 0): (2, 3)}) == {(topic, 0): None}, "only a commit marker"
    assert oldest_records(committed, {(topic, 0): (3, 6)}) == {(topic, 0): None}, "aborted records and a marker"
    assert oldest_records(committed, {(topic, 0): (3, 7)}) == {(topic, 0): base + 6}
    assert oldest_records(uncommitted, {(topic, 0): (3, 6)}) == {(topic, 0): base + 3}, "aborted ones are seen"


def test_oldest_records_leaves_out_what_it_cannot_tell_in_time(clusters, create_topic, unique):
    topic = f"probe-late-{unique}"
    create_topic("A", topic, 1)
    producer = Producer({"bootstrap.servers": clusters.source})
    producer.produce(topic, value=b"only", partition=0)
    assert producer.flush(30) == 0
    # Offsets 1..2 are not written yet: no record and no position past them within the timeout.
    got = oldest_records({"bootstrap.servers": clusters.source}, {(topic, 0): (1, 3)}, SHORT_TIMEOUT_S)
    assert got == {}
