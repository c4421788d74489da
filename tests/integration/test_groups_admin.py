"""Consumer-group admin calls and the internal-topic reader against a real cluster."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from sparkmirror.errors import AdminOperationError, ClusterUnreachableError
from sparkmirror.kafka.groups import ConsumerGroups, GroupState
from sparkmirror.kafka.internal_log import InternalTopicReader, InternalTopicWriter, read_internal_topic
from sparkmirror.testing.records import produce

from .conftest import records, wait_until


def consume_and_commit(bootstrap: str, topic: str, group: str, offsets: list[TopicPartition]) -> None:
    """Join `group`, read until the assignment arrives, commit `offsets` and leave: the group ends EMPTY."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": "false",
                         "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        wait_until(lambda: consumer.poll(0.2) is not None or consumer.assignment(), 30, f"{group} to be assigned")
        consumer.commit(offsets=offsets, asynchronous=False)
    finally:
        consumer.close()


@contextlib.contextmanager
def active_member(bootstrap: str, topic: str, group: str) -> Iterator[None]:
    """A subscribed consumer of `group` polling in the background until the block ends."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": "false",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            consumer.poll(0.1)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(30)
        consumer.close()


@pytest.fixture
def groups(clusters) -> ConsumerGroups:
    return ConsumerGroups("A", {"bootstrap.servers": clusters.source})


def test_committed_group_is_listed_with_offsets_and_metadata(clusters, create_topic, groups, unique):
    topic, group, missing = f"grp-{unique}", f"grp-{unique}", f"grp-missing-{unique}"
    create_topic("A", topic, 2)
    produce(clusters.source, topic, records(unique, 10, partitions=2))
    consume_and_commit(clusters.source, topic, group,
                       [TopicPartition(topic, 0, 4, metadata="meta-p0"), TopicPartition(topic, 1, 6)])

    assert group in groups.list_groups()
    assert missing not in groups.list_groups()
    asked = [(topic, 0), (topic, 1)]
    assert groups.committed([group, missing], asked) == {group: {(topic, 0): (4, "meta-p0"), (topic, 1): (6, "")},
                                                         missing: {}}
    # Kafka reports a group that does not exist as DEAD, without an error.
    assert groups.describe([group, missing]) == {group: GroupState("EMPTY", 0), missing: GroupState("DEAD", 0)}
    assert groups.states([group, missing]) == {group: "EMPTY", missing: "DEAD"}  # the same from the listing


def test_committed_returns_only_the_asked_partitions_and_without_them_every_partition(clusters, create_topic,
                                                                                     groups, unique):
    topic, other, group = f"grp-part-{unique}", f"grp-part-other-{unique}", f"grp-part-{unique}"
    create_topic("A", topic, 3)
    create_topic("A", other, 1)
    groups.alter_offsets(group, {(topic, 0): (1, "a"), (topic, 2): (3, "c"), (other, 0): (7, "")})

    assert groups.committed([group], [(topic, 2), (other, 0), (topic, 1)]) == {
        group: {(topic, 2): (3, "c"), (other, 0): (7, "")}}
    assert groups.committed([group], [(f"grp-nowhere-{unique}", 0)]) == {group: {}}
    assert groups.committed([group], []) == {group: {}}
    # None: every partition of every topic the cluster lists.
    assert groups.committed([group]) == {group: {(topic, 0): (1, "a"), (topic, 2): (3, "c"), (other, 0): (7, "")}}


def test_offsets_committed_in_a_transaction_read_once_it_commits_not_while_it_is_open(clusters, create_topic,
                                                                                      groups, unique):
    """As exactly once commits its positions: Producer.send_offsets_to_transaction. The read asks for committed
    offsets, not stable ones: an open transaction's offsets do not hold it up, nor show."""
    topic, group = f"grp-txn-{unique}", f"grp-txn-{unique}"
    create_topic("A", topic, 1)
    producer = Producer({"bootstrap.servers": clusters.source, "transactional.id": f"grp-txn-{unique}"})
    member = Consumer({"bootstrap.servers": clusters.source, "group.id": group})  # its metadata; never subscribes
    try:
        producer.init_transactions(30)
        for offset, end in ((5, producer.commit_transaction), (9, None)):
            producer.begin_transaction()
            producer.produce(topic, value=b"v", partition=0)
            producer.send_offsets_to_transaction([TopicPartition(topic, 0, offset, metadata="in-txn")],
                                                 member.consumer_group_metadata(), 30)
            if end is not None:
                end(30)
        assert groups.committed([group], [(topic, 0)], timeout_s=10) == {group: {(topic, 0): (5, "in-txn")}}
        producer.abort_transaction(30)
    finally:
        member.close()
        producer.flush(10)


def test_polling_member_makes_the_group_stable_and_its_offsets_unalterable(clusters, create_topic, groups, unique):
    topic, group = f"grp-active-{unique}", f"grp-active-{unique}"
    create_topic("A", topic, 1)
    with active_member(clusters.source, topic, group):
        wait_until(lambda: groups.describe([group])[group] == GroupState("STABLE", 1), 30, "a stable group")
        assert groups.states([group]) == {group: "STABLE"}
        with pytest.raises(AdminOperationError) as raised:
            groups.alter_offsets(group, {(topic, 0): (0, "")})
        # the group sync's commit, as a consumer that never joins, is refused too
        with pytest.raises(AdminOperationError, match="UNKNOWN_MEMBER_ID"):
            groups.commit(group, {(topic, 0): (0, "")}, keep=False)
    message = str(raised.value)
    assert f"group '{group}' has active members on cluster 'A'" in message
    assert "must be stopped first" in message
    wait_until(lambda: groups.describe([group])[group] == GroupState("EMPTY", 0), 30, "the member to leave")


def test_alter_offsets_of_an_empty_group_and_of_a_new_one(clusters, create_topic, groups, unique):
    topic, empty, new = f"grp-alter-{unique}", f"grp-alter-{unique}", f"grp-alter-new-{unique}"
    create_topic("A", topic, 2)
    produce(clusters.source, topic, records(unique, 10, partitions=2))
    consume_and_commit(clusters.source, topic, empty, [TopicPartition(topic, 0, 1)])

    groups.alter_offsets(empty, {(topic, 0): (3, "synced"), (topic, 1): (5, "")})
    groups.alter_offsets(new, {(topic, 1): (2, "fresh")})

    assert groups.committed([empty, new], [(topic, 0), (topic, 1)]) == {
        empty: {(topic, 0): (3, "synced"), (topic, 1): (5, "")}, new: {(topic, 1): (2, "fresh")}}
    assert groups.describe([new]) == {new: GroupState("EMPTY", 0)}
    assert new in groups.list_groups()


def test_alter_offsets_of_a_missing_topic_names_the_partition(create_topic, groups, unique):
    with pytest.raises(AdminOperationError, match=rf"grp-nowhere-{unique}-0 on cluster 'A'.*UNKNOWN_TOPIC_OR_PART"):
        groups.alter_offsets(f"grp-{unique}", {(f"grp-nowhere-{unique}", 0): (1, "")})


def test_group_calls_on_an_unreachable_cluster_name_it_with_a_hint():
    groups = ConsumerGroups("Z", {"bootstrap.servers": "127.0.0.1:1"})
    with pytest.raises(AdminOperationError, match=r"list consumer groups on cluster 'Z'.*reachable"):
        groups.list_groups(timeout_s=2)
    with pytest.raises(AdminOperationError,
                       match=r"read committed offsets of group 'g1' on cluster 'Z'.*_TIMED_OUT.*reachable"):
        groups.committed(["g1", "g2"], [("t", 0)], timeout_s=2)


def test_read_internal_topic_returns_records_with_headers_in_order(clusters, create_topic, unique):
    topic = f"internal-{unique}"
    create_topic("A", topic, 1)
    settings = {"bootstrap.servers": clusters.source}
    writer = InternalTopicWriter("A", settings)
    headers = [("origin", b"A"), ("empty", None)]
    assert writer.write(topic, [(b"k0", b"v0"), (b"k1", b"v1", headers), (None, None, [])]) == 3
    writer.close()

    read = read_internal_topic("A", settings, topic)
    assert [(r.offset, r.key, r.value, r.headers) for r in read] == [
        (0, b"k0", b"v0", ()), (1, b"k1", b"v1", (("origin", b"A"), ("empty", None))), (2, None, None, ())]
    assert all(r.timestamp_ms > time.time() * 1000 - 600_000 for r in read)
    assert read_internal_topic("A", settings, f"internal-missing-{unique}") == []


def test_reader_returns_only_records_appended_since_the_last_call(clusters, create_topic, unique):
    topic = f"internal-tail-{unique}"
    settings = {"bootstrap.servers": clusters.source}
    writer = InternalTopicWriter("A", settings)
    with InternalTopicReader("A", settings, topic) as reader:
        assert reader.read_new() == []  # not created yet
        create_topic("A", topic, 1)
        writer.write(topic, [(b"k", f"v{i}".encode()) for i in range(3)])
        assert [r.value for r in reader.read_new()] == [b"v0", b"v1", b"v2"]
        writer.write(topic, [(b"k", b"v3"), (b"k", b"v4")])
        assert [(r.offset, r.value) for r in reader.read_new()] == [(3, b"v3"), (4, b"v4")]
        assert reader.read_new() == []
    writer.close()


def test_reading_an_unreachable_cluster_raises_with_a_hint():
    with pytest.raises(ClusterUnreachableError, match=r"cluster 'Z' is unreachable.*reading 'anything'"):
        read_internal_topic("Z", {"bootstrap.servers": "127.0.0.1:1"}, "anything", timeout_s=2)
