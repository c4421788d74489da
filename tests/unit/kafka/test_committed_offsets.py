"""ConsumerGroups.committed reads committed offsets with short-lived consumers of each group, never with
AdminClient.list_consumer_group_offsets: librdkafka (2.16, issue #5040) crashes the whole process with SIGSEGV
when an admin client's OffsetFetch is answered NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE."""

from __future__ import annotations

import threading
import time

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

from sparkmirror.errors import AdminOperationError
from sparkmirror.kafka import groups as groups_module
from sparkmirror.kafka.groups import ConsumerGroups


class _FakeConsumer:
    """Records how it was made and asked; answers from `answers` (group -> TopicPartitions or an exception)."""

    made: list[_FakeConsumer] = []
    answers: dict[str, object] = {}
    lock = threading.Lock()

    def __init__(self, conf: dict) -> None:
        self.conf = dict(conf)
        self.asked: list[tuple[list[tuple[str, int]], float]] = []
        self.subscribed = False
        self.polled = 0
        self.closed = False
        with self.lock:
            self.made.append(self)

    def committed(self, partitions: list[TopicPartition], timeout: float | None = None) -> list[TopicPartition]:
        self.asked.append(([(tp.topic, tp.partition) for tp in partitions], timeout))
        answer = self.answers[self.conf["group.id"]]
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            return answer(partitions)
        return answer

    def subscribe(self, *args: object, **kwargs: object) -> None:
        self.subscribed = True

    def poll(self, timeout: float) -> None:
        self.polled += 1

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def consumers(monkeypatch) -> type[_FakeConsumer]:
    def no_admin_offsets(*args: object, **kwargs: object) -> None:
        raise AssertionError("AdminClient.list_consumer_group_offsets must not be used (librdkafka #5040)")

    monkeypatch.setattr(AdminClient, "list_consumer_group_offsets", no_admin_offsets)
    monkeypatch.setattr(_FakeConsumer, "made", [])
    monkeypatch.setattr(_FakeConsumer, "answers", {})
    monkeypatch.setattr(groups_module, "Consumer", _FakeConsumer, raising=False)
    return _FakeConsumer


SETTINGS = {"bootstrap.servers": "127.0.0.1:9", "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
            "sasl.username": "u", "sasl.password": "p", "client.id": "mirror"}


def test_each_group_is_read_by_its_own_consumer_that_never_joins_and_is_closed(consumers):
    consumers.answers = {
        "app": [TopicPartition("orders", 0, 40, metadata="meta"), TopicPartition("orders", 1, -1001),
                TopicPartition("orders", 2, 7)],
        "idle": [TopicPartition("orders", 0, -1001), TopicPartition("orders", 1, -1001),
                 TopicPartition("orders", 2, -1001)],
    }
    groups = ConsumerGroups("A", SETTINGS)

    got = groups.committed(["app", "idle", "app"], [("orders", 2), ("orders", 0), ("orders", 1)], timeout_s=10)

    assert got == {"app": {("orders", 0): (40, "meta"), ("orders", 2): (7, "")}, "idle": {}}
    assert sorted(c.conf["group.id"] for c in consumers.made) == ["app", "idle"]
    for consumer in consumers.made:
        assert consumer.conf["enable.auto.commit"] == "false"
        assert consumer.conf["isolation.level"] == "read_uncommitted"  # committed offsets, not only stable ones
        for key, value in SETTINGS.items():  # the cluster's own settings, security ones too
            assert consumer.conf[key] == value
        assert callable(consumer.conf["error_cb"]) and consumer.conf["logger"] is not None
        assert [asked for asked, _ in consumer.asked] == [[("orders", 0), ("orders", 1), ("orders", 2)]]
        assert 0 < consumer.asked[0][1] <= 10
        assert not consumer.subscribed and consumer.closed


def test_no_groups_or_no_partitions_make_no_consumer(consumers):
    groups = ConsumerGroups("A", SETTINGS)
    assert groups.committed([], [("orders", 0)]) == {}
    assert groups.committed(["app"], []) == {"app": {}}
    assert consumers.made == []


def test_metadata_that_cannot_be_decoded_reads_as_none(consumers):
    class Undecodable:
        topic, partition, offset, error = "orders", 0, 12, None

        @property
        def metadata(self) -> str:
            raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    consumers.answers = {"app": [Undecodable()]}
    assert ConsumerGroups("A", SETTINGS).committed(["app"], [("orders", 0)]) == {"app": {("orders", 0): (12, "")}}


def test_a_failed_read_is_a_named_error_with_the_fix_and_the_consumer_is_closed(consumers):
    consumers.answers = {"app": KafkaException(KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED))}
    with pytest.raises(AdminOperationError) as raised:
        ConsumerGroups("A", SETTINGS).committed(["app"], [("orders", 0)], timeout_s=5)
    message = str(raised.value)
    assert "read committed offsets of group 'app' on cluster 'A' failed" in message
    assert "GROUP_AUTHORIZATION_FAILED" in message
    assert "Grant this principal DESCRIBE and READ on group 'app' of cluster 'A'" in message
    assert all(c.closed for c in consumers.made) and consumers.made[0].polled  # its callbacks were served


def test_a_timed_out_read_names_the_cluster_and_how_to_reach_it(consumers):
    consumers.answers = {"app": KafkaException(KafkaError(KafkaError._TIMED_OUT))}
    with pytest.raises(AdminOperationError, match=r"read committed offsets of group 'app' on cluster 'A' failed: "
                                                  r".*_TIMED_OUT.*Check that cluster 'A' is up and reachable"):
        ConsumerGroups("A", SETTINGS).committed(["app"], [("orders", 0)], timeout_s=5)
    assert all(c.closed for c in consumers.made)


def test_a_partition_error_names_the_partition(consumers):
    consumers.answers = {"app": [TopicPartition("orders", 0, 3),
                                 _with_error(TopicPartition("orders", 1, -1001), KafkaError.UNKNOWN_TOPIC_OR_PART)]}
    with pytest.raises(AdminOperationError, match=r"group 'app' for orders-1 on cluster 'A'.*UNKNOWN_TOPIC_OR_PART"):
        ConsumerGroups("A", SETTINGS).committed(["app"], [("orders", 0), ("orders", 1)])


def test_a_read_that_never_answers_becomes_a_named_error(consumers, monkeypatch):
    monkeypatch.setattr(groups_module, "ANSWER_BACKSTOP_S", 0.05)
    monkeypatch.setattr(groups_module, "_CLOSE_BACKSTOP_S", 0.05)
    release = threading.Event()

    def hang(partitions: list[TopicPartition]) -> list[TopicPartition]:
        release.wait(10)
        return []

    consumers.answers = {"app": hang}
    try:  # had it waited for the answer, it would have returned [] when released, without an error
        with pytest.raises(AdminOperationError, match=r"read committed offsets of group 'app' on cluster 'A' failed: "
                                                      r"no answer within 0 s.*reachable"):
            ConsumerGroups("A", SETTINGS).committed(["app"], [("orders", 0)], timeout_s=0.2)
    finally:
        release.set()
    deadline = time.monotonic() + 5
    while not consumers.made[0].closed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert consumers.made[0].closed  # closed once it returned


def test_many_groups_are_read_a_few_at_a_time(consumers):
    running, most = [0], [0]
    lock = threading.Lock()

    def slow(partitions: list[TopicPartition]) -> list[TopicPartition]:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.02)
        with lock:
            running[0] -= 1
        return [TopicPartition("orders", 0, 1)]

    names = [f"g{i}" for i in range(40)]
    consumers.answers = dict.fromkeys(names, slow)
    got = ConsumerGroups("A", SETTINGS).committed(names, [("orders", 0)], timeout_s=10)
    assert got == {name: {("orders", 0): (1, "")} for name in names}
    assert 1 < most[0] <= groups_module.MAX_CONCURRENT_GROUPS
    assert len(consumers.made) == 40 and all(c.closed for c in consumers.made)


def _with_error(tp: TopicPartition, code: int) -> object:
    class Failed:
        topic, partition, offset, metadata, error = tp.topic, tp.partition, tp.offset, None, KafkaError(code)
    return Failed()
