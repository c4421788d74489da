"""One flow A->B end to end on real brokers and a local Spark."""

from __future__ import annotations

import logging
import re
import time

import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME
from confluent_kafka.admin import AdminClient, NewTopic

from sparkmirror.control.configs import ConfigAlteration
from sparkmirror.errors import PipelineError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord, NewTopicSpec
from sparkmirror.testing.records import produce, read_all

from .conftest import SOURCE_READERS, TRIGGER_MODES, count_records, wait_until

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


@pytest.mark.parametrize("source_reader", SOURCE_READERS)
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


def test_a_record_its_own_topic_accepts_is_copied_whatever_the_flows_smaller_topics_accept(clusters, create_topic,
                                                                                          replicate, unique):
    """A 1.5 MB record of a topic allowed 3 MB, in a flow that also copies a topic with the broker's 1 MB default:
    each record is held to its own remote topic's limit, not to the flow's smallest."""
    from confluent_kafka import Producer

    big, small = f"large-{unique}", f"small-{unique}"
    create_topic("A", big, 1, {"max.message.bytes": "3000000"})
    create_topic("A", small, 1)
    producer = Producer({"bootstrap.servers": clusters.source, "message.max.bytes": "4000000"})
    large = b"L" * 1_500_000
    producer.produce(big, value=b"before", partition=0)
    producer.produce(big, value=large, partition=0)
    producer.produce(big, value=b"after", partition=0)
    producer.produce(small, value=b"small", partition=0)
    assert producer.flush(30) == 0
    replicate(topics=f"{big}, {small}")
    assert [r.value for r in read_all(clusters.target, f"A.{big}", 1)[0]] == [b"before", large, b"after"]
    assert [r.value for r in read_all(clusters.target, f"A.{small}", 1)[0]] == [b"small"]


@pytest.mark.parametrize("limit_drops", [False, True], ids=["limit-at-start", "limit-drops-while-running"])
def test_a_record_the_target_refuses_keeps_partition_order_and_the_retry_copies_it_after_the_fix(
        clusters, create_topic, mm2_properties, running, unique, limit_drops, trigger_mode):
    """Nothing behind a record the target refuses may be written (the retry would put it behind them); once
    the limit is raised, the failed flow's retry copies the rest, in order. The producer refuses a record
    over the limit known at the query's start at once; a limit lowered while it runs is the broker's to
    refuse, the producer retrying (here for 5 s, in each of Spark's four task attempts) before it gives up."""
    if limit_drops and trigger_mode == "real-time":
        pytest.skip("the same JVM writer rule as micro-batch; Real-Time Mode's four task attempts would each "
                    "wait for the producer's delivery time-out")
    topic = f"refused-{unique}"
    create_topic("A", topic, 1)
    target = ClusterAdmin("B", {"bootstrap.servers": clusters.target})
    remote = f"A.{topic}"
    first_limit = "50000" if limit_drops else "2000"
    assert target.create_topics([NewTopicSpec(remote, 1, 1, {"max.message.bytes": first_limit})])[remote] is None
    values = [f"small-{i}".encode() for i in range(5)] + [b"x" * 10_000] + \
             [f"after-{i}".encode() * 10 for i in range(3_000)]  # many batches behind the refused one

    def write(part: list[bytes]) -> None:
        produce(clusters.source, topic, [KafkaRecord(0, -1, None, v, (), TIMESTAMP_CREATE_TIME, BASE_TS)
                                         for v in part])

    def on_b() -> list[bytes]:
        return [r.value for r in read_all(clusters.target, remote, 1)[0]]

    def set_limit(value: str) -> None:
        alteration = ConfigAlteration("max.message.bytes", "SET", value)
        assert target.alter_topic_configs({remote: [alteration]}) == {remote: None}

    write(values[:5])
    path = mm2_properties(topic, "B.producer.delivery.timeout.ms = 5000\nB.producer.request.timeout.ms = 3000\n")
    with running(path) as supervisor:
        runner = supervisor.flows["A->B"]
        wait_until(lambda: len(on_b()) == 5, 90, "the first records")
        if limit_drops:
            set_limit("2000")
        write(values[5:])
        wait_until(lambda: runner.failure is not None, 90, "the refused record to fail the flow")
        assert f"{topic}-0@5" in runner.failure, runner.failure
        time.sleep(2)  # anything still on its way to B lands now
        # Every task attempt and the flow's retry start after what an earlier one reported: no duplicates.
        assert on_b() == values[:5], "records behind the refused one, or earlier ones again, were written"

        set_limit("50000")
        wait_until(lambda: len(on_b()) >= len(values), 120, "the retry to copy the rest")
        copied = on_b()
        assert list(dict.fromkeys(copied)) == list(dict.fromkeys(values)), "partition order broken"
        assert runner.failure is None and runner.progress.snapshot().retries >= 1


@pytest.mark.parametrize("trigger_mode", ["real-time"])
def test_a_retried_real_time_task_reads_again_a_poll_not_its_epoch(
        clusters, create_topic, mm2_properties, running, unique, trigger_mode, caplog):
    """A task Spark retries reads its partition again from its epoch's start. Its writer skips what an earlier
    attempt reported and tells the reader, which seeks past it (SkipAhead): each of the 3 retries reads about a
    poll again (at most 500 records), not the 20,000 the epoch had copied."""
    topic = f"retried-{unique}"
    create_topic("A", topic, 1)
    target = ClusterAdmin("B", {"bootstrap.servers": clusters.target})
    remote = f"A.{topic}"
    assert target.create_topics([NewTopicSpec(remote, 1, 1, {"max.message.bytes": "2000"})])[remote] is None
    copied = 20_000

    def write(values: list[bytes]) -> None:
        produce(clusters.source, topic, [KafkaRecord(0, -1, None, v, (), TIMESTAMP_CREATE_TIME, BASE_TS)
                                         for v in values])

    write([f"before-{i}".encode() for i in range(copied)])
    with caplog.at_level(logging.INFO, logger="sparkmirror.runtime.flow_runner"), running(mm2_properties(topic)) \
            as supervisor:
        runner = supervisor.flows["A->B"]
        wait_until(lambda: count_records(clusters.target, remote) == copied, 120, "the first records")
        write([b"x" * 10_000])  # refused by the writer at once: the task fails, Spark retries it 3 times
        wait_until(lambda: runner.failure is not None, 120, "the refused record to fail the flow")
    skipped = [int(m.group(1)) for r in caplog.records if (m := re.search(r"(\d+) skipped", r.getMessage()))]
    assert 0 < sum(skipped) <= 3 * 500, f"retries read again {sum(skipped)} records (each report: {skipped})"
    assert count_records(clusters.target, remote) == copied, "an earlier record was written twice"
