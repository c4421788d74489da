"""InternalTopicReader's watermark query against a fake librdkafka Consumer: a partition whose leader is not yet
known (a topic created a moment ago) is retried; a missing topic reads as empty; other failures are not retried."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException

from sparkmirror.errors import AdminOperationError
from sparkmirror.kafka import internal_log
from sparkmirror.kafka.internal_log import InternalTopicReader


class FakeConsumer:
    """Fails `get_watermark_offsets` with each code of `failures` in turn (with `forever`, always with its last),
    then answers (0, 0)."""

    failures: list[int] = []
    forever = False

    def __init__(self, _conf: dict[str, object]) -> None:
        self.queries = 0

    def get_watermark_offsets(self, _partition: object, timeout: float) -> tuple[int, int]:
        assert timeout > 0
        self.queries += 1
        if self.failures:
            raise KafkaException(KafkaError(self.failures[0] if self.forever else self.failures.pop(0)))
        return 0, 0

    def assign(self, _partitions: object) -> None:
        pass

    def list_topics(self, *_args: object, **_kwargs: object) -> object:
        raise AssertionError("only a missing topic asks the cluster")

    def close(self) -> None:
        pass


@pytest.fixture
def reader(monkeypatch: pytest.MonkeyPatch) -> InternalTopicReader:
    FakeConsumer.forever = False
    monkeypatch.setattr(internal_log, "Consumer", FakeConsumer)
    return InternalTopicReader("B", {"bootstrap.servers": "127.0.0.1:1"}, "A.checkpoints.internal")


def test_a_partition_without_a_known_leader_is_retried(reader: InternalTopicReader) -> None:
    FakeConsumer.failures = [KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE]
    assert reader.read_new(5.0) == []
    assert reader._consumer.queries == 3


def test_leadership_that_never_settles_fails_naming_the_topic_after_the_deadline(reader: InternalTopicReader) -> None:
    FakeConsumer.failures, FakeConsumer.forever = [KafkaError.NOT_LEADER_FOR_PARTITION], True
    with pytest.raises(AdminOperationError, match="A.checkpoints.internal.*NOT_LEADER"):
        reader.read_new(0.3)
    assert reader._consumer.queries > 1


def test_other_failures_are_not_retried(reader: InternalTopicReader) -> None:
    FakeConsumer.failures = [KafkaError.TOPIC_AUTHORIZATION_FAILED]
    with pytest.raises(AdminOperationError, match="Grant READ and DESCRIBE on 'A.checkpoints.internal'"):
        reader.read_new(5.0)
    assert reader._consumer.queries == 1


class Message:
    def __init__(self, offset: int, error: KafkaError | None = None) -> None:
        self._offset, self._error = offset, error

    def error(self) -> KafkaError | None:
        return self._error

    def offset(self) -> int:
        return self._offset

    def key(self) -> bytes:
        return b"k"

    def value(self) -> bytes:
        return b"v"

    def headers(self) -> None:
        return None

    def timestamp(self) -> tuple[int, int]:
        return 1, 7


class GroupDeniedConsumer(FakeConsumer):
    """Two records, preceded by what librdkafka reports when the principal may not describe the reader's group."""

    def get_watermark_offsets(self, _partition: object, timeout: float) -> tuple[int, int]:
        return 0, 2

    def consume(self, num_messages: int, timeout: float) -> list[Message]:
        return [Message(-1, KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED)), Message(0), Message(1)]

    def position(self, partitions: list) -> list:
        return [type("Position", (), {"offset": 2})()]


def test_a_principal_without_rights_on_the_unused_group_still_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """MM2's readers have no group.id and need no group ACL; librdkafka's consumer has one it never joins."""
    monkeypatch.setattr(internal_log, "Consumer", GroupDeniedConsumer)
    reader = InternalTopicReader("A", {"bootstrap.servers": "127.0.0.1:1"}, "mm2-offset-syncs.B.internal")
    assert [r.offset for r in reader.read_new(5.0)] == [0, 1]


def test_a_read_refused_on_the_topic_fails_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    class TopicDenied(GroupDeniedConsumer):
        def consume(self, num_messages: int, timeout: float) -> list[Message]:
            return [Message(-1, KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED))]

    monkeypatch.setattr(internal_log, "Consumer", TopicDenied)
    reader = InternalTopicReader("A", {"bootstrap.servers": "127.0.0.1:1"}, "mm2-offset-syncs.B.internal")
    with pytest.raises(AdminOperationError, match="Grant READ and DESCRIBE on 'mm2-offset-syncs.B.internal'"):
        reader.read_new(5.0)


def test_a_topic_the_principal_may_not_describe_is_a_failure_not_an_empty_topic(
        monkeypatch: pytest.MonkeyPatch) -> None:
    class Undescribable(FakeConsumer):
        def get_watermark_offsets(self, _partition: object, timeout: float) -> tuple[int, int]:
            raise KafkaException(KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART))  # what librdkafka's cache says

        def list_topics(self, topic: str, timeout: float) -> object:
            denied = type("Topic", (), {"error": KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED), "partitions": {}})
            return type("Metadata", (), {"topics": {topic: denied}})()

    monkeypatch.setattr(internal_log, "Consumer", Undescribable)
    reader = InternalTopicReader("B", {"bootstrap.servers": "127.0.0.1:1"}, "A.checkpoints.internal")
    with pytest.raises(AdminOperationError, match="Grant READ and DESCRIBE on 'A.checkpoints.internal'"):
        reader.read_new(5.0)


class RefusingProducer:
    """An AcknowledgedProducer whose every write the broker refuses with `code`."""

    code = KafkaError.TOPIC_AUTHORIZATION_FAILED

    def __init__(self, *_args: object, **_kwargs: object) -> None:
        pass

    def write(self, _topic: str, messages, _timeout_s: float) -> int:
        list(messages)
        raise internal_log.DeliveryFailed([KafkaError(self.code)], 0, 30.0)


@pytest.mark.parametrize(("code", "grant"), [
    (KafkaError.TOPIC_AUTHORIZATION_FAILED, "Grant WRITE on '__sparkmirror-acl-ledger' to the principal used for "
                                            "cluster 'B'$"),
    # no WRITE on any topic: the idempotent producer is refused its producer id before the topic is asked
    (KafkaError.CLUSTER_AUTHORIZATION_FAILED, "Grant WRITE on '__sparkmirror-acl-ledger' to the principal used for "
                                              r"cluster 'B' \(or IDEMPOTENT_WRITE on the cluster\)$"),
])
def test_a_refused_write_names_the_topic_the_cluster_and_the_grant(monkeypatch: pytest.MonkeyPatch, code: int,
                                                                   grant: str) -> None:
    monkeypatch.setattr(internal_log, "AcknowledgedProducer", RefusingProducer)
    monkeypatch.setattr(RefusingProducer, "code", code)
    writer = internal_log.InternalTopicWriter("B", {"bootstrap.servers": "127.0.0.1:1"})
    with pytest.raises(AdminOperationError, match=f"^write to '__sparkmirror-acl-ledger' on cluster 'B' failed: "
                                                  f".*{KafkaError(code).name()}.*{grant}"):
        writer.write("__sparkmirror-acl-ledger", [(b"A->B", b"{}")])
