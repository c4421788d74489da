"""One flow A->B end to end on real brokers and a local Spark."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME
from confluent_kafka.admin import AdminClient, NewTopic

from sparkmirror.errors import PipelineError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.records import produce, read_all
from sparkmirror.model import KafkaRecord

from .conftest import TRIGGER_MODES

RECORDS = 10_000
PARTITIONS = 3
BASE_TS = int(time.time() * 1000) - 3_600_000  # recent: older records fall to retention.ms



@pytest.fixture(params=TRIGGER_MODES)
def trigger_mode(request) -> str:
    """Every test here runs in both record-path modes: micro-batch and Real-Time Mode."""
    return request.param

def sample(i: int) -> KafkaRecord:
    key = None if i % 10 == 3 else f"key-{i % 101}".encode()
    value = None if i == 4242 else f"value-{i}".encode() * (1 + i % 5)  # one tombstone
    headers = (("trace", f"t-{i}".encode()), ("empty", None if i % 2 else b""))
    return KafkaRecord(partition=i % PARTITIONS, offset=-1, key=key, value=value, headers=headers,
                       timestamp_type=TIMESTAMP_CREATE_TIME, timestamp=BASE_TS + 7 * i)


def comparable(records: list[KafkaRecord]) -> list[tuple]:
    return [(r.key, r.value, r.headers, r.timestamp_type, r.timestamp) for r in records]


def test_records_are_copied_exactly_partition_by_partition(clusters, create_topic, replicate, unique):
    topic, other = f"orders-{unique}", f"audit-{unique}"
    create_topic("A", topic, PARTITIONS)
    create_topic("A", other, 1)
    produce(clusters.source, topic, (sample(i) for i in range(RECORDS)))
    produce(clusters.source, other, [KafkaRecord(0, -1, b"k", b"v", (), TIMESTAMP_CREATE_TIME, BASE_TS)])

    supervisor = replicate(topics=topic)

    target_topics = ClusterAdmin("B", {"bootstrap.servers": clusters.target}).topic_partitions()
    assert target_topics[f"A.{topic}"] == PARTITIONS
    assert f"A.{other}" not in target_topics, "a topic outside A->B.topics must not be created on B"
    source = read_all(clusters.source, topic, PARTITIONS)
    target = read_all(clusters.target, f"A.{topic}", PARTITIONS)
    assert sum(len(v) for v in source.values()) == RECORDS
    for p in range(PARTITIONS):
        assert comparable(target[p]) == comparable(source[p]), f"partition {p} differs"
    assert any(r.value is None for rs in target.values() for r in rs), "the tombstone must survive"
    assert any(r.key is None for rs in target.values() for r in rs)
    assert supervisor.flows["A->B"].progress.snapshot().records == RECORDS


def test_record_larger_than_target_accepts_fails_with_a_clear_error(clusters, create_topic, replicate, unique):
    topic = f"big-{unique}"
    create_topic("A", topic, 1)
    admin = AdminClient({"bootstrap.servers": clusters.target})
    admin.create_topics([NewTopic(f"A.{topic}", 1, 1, config={"max.message.bytes": "2000"})])[f"A.{topic}"].result()
    records = [KafkaRecord(0, -1, b"k", (b"x" * 10_000 if i == 5 else b"small"), (), TIMESTAMP_CREATE_TIME,
                           BASE_TS + i) for i in range(10)]
    produce(clusters.source, topic, records)

    with pytest.raises(PipelineError) as info:
        replicate(topics=topic)

    message = str(info.value)
    assert f"{topic}-0@5" in message, message
    assert "larger than cluster 'B' accepts" in message
    assert "max.message.bytes" in message
