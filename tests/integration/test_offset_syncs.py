"""Offset syncs in MM2's topic and format are exact, also where upstream offsets have gaps."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from sparkmirror.offsets.syncs import decode_offset_sync
from sparkmirror.testing.records import produce, read_all

from .conftest import SOURCE_READERS, TRIGGER_MODES, records

SYNCS_TOPIC = "mm2-offset-syncs.B.internal"



@pytest.fixture(params=TRIGGER_MODES)
def trigger_mode(request) -> str:
    """Every test here runs in both record-path modes: micro-batch and Real-Time Mode."""
    return request.param


@pytest.fixture(params=SOURCE_READERS)
def source_reader(request) -> str:
    """... and on both sources: Spark's Kafka source and sparkmirror's (a few tasks of many partitions)."""
    return request.param

def read_syncs(bootstrap: str, topic: str) -> list[tuple[int, int, int]]:
    """(partition, upstream, downstream) of every sync for `topic`, in the order they were written."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"syncs-{time.time_ns()}",
                         "enable.auto.commit": "false"})
    try:
        _, end = consumer.get_watermark_offsets(TopicPartition(SYNCS_TOPIC, 0), timeout=30)
        consumer.assign([TopicPartition(SYNCS_TOPIC, 0, OFFSET_BEGINNING)])
        out, position, deadline = [], 0, time.monotonic() + 60
        while position < end and time.monotonic() < deadline:
            for msg in consumer.consume(1000, timeout=0.5):
                if msg.error():
                    continue
                position = msg.offset() + 1
                sync = decode_offset_sync(msg.key(), msg.value())
                if sync.topic == topic:
                    out.append((sync.partition, sync.upstream_offset, sync.downstream_offset))
        assert position >= end, "the offset-syncs topic could not be read to its end"
        return out
    finally:
        consumer.close()


def transactional_writes(bootstrap: str, topic: str, partitions: int) -> list[bytes]:
    """Committed and aborted transactions of varied sizes: markers and aborted records leave offset gaps.

    Returns the values of the committed records (the ones a read_committed mirror copies)."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"tx-{topic}"})
    producer.init_transactions(30)
    committed = []
    for txn in range(12):
        producer.begin_transaction()
        values = [f"{topic}-t{txn}-r{i}".encode() for i in range(1 + txn % 4)]
        for i, value in enumerate(values):
            producer.produce(topic, key=b"k", value=value, partition=(txn + i) % partitions)
        if txn % 3 == 2:
            producer.abort_transaction(30)
        else:
            producer.commit_transaction(30)
            committed += values
    producer.flush(30)
    return committed


def assert_syncs_exact(clusters, topic: str, partitions: int) -> int:
    syncs = read_syncs(clusters.source, topic)
    source = {p: {r.offset: r for r in rs} for p, rs in read_all(clusters.source, topic, partitions).items()}
    target = {p: {r.offset: r for r in rs} for p, rs in read_all(clusters.target, f"A.{topic}", partitions).items()}
    assert syncs, "no offset syncs were written"
    for partition, upstream, downstream in syncs:
        up, down = source[partition].get(upstream), target[partition].get(downstream)
        assert up is not None and down is not None, f"sync {partition}:{upstream}->{downstream} names no record"
        assert (up.key, up.value, up.timestamp) == (down.key, down.value, down.timestamp), \
            f"sync {partition}:{upstream}->{downstream} pairs different records"
    return len(syncs)


def test_every_offset_sync_pairs_the_same_record_on_both_sides(clusters, create_topic, replicate, unique):
    topic = f"syncs-{unique}"
    create_topic("A", topic, 3)
    produce(clusters.source, topic, records("plain", 600, 3))
    replicate(topics=topic)
    assert assert_syncs_exact(clusters, topic, 3) >= 3


def test_syncs_stay_exact_across_transaction_markers_and_aborted_records(clusters, create_topic, replicate, unique):
    topic = f"syncs-tx-{unique}"
    create_topic("A", topic, 2)
    committed = transactional_writes(clusters.source, topic, 2)
    replicate(topics=topic, extra="A.consumer.isolation.level = read_committed\n")
    mirrored = sorted(r.value for rs in read_all(clusters.target, f"A.{topic}", 2).values() for r in rs)
    assert mirrored == sorted(committed), "only committed records are mirrored, each once"
    syncs = assert_syncs_exact(clusters, topic, 2)
    assert syncs > 4, "gaps must produce syncs on both sides of each gap"
