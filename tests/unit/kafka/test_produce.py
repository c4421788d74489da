"""AcknowledgedProducer against a fake librdkafka Producer: forced settings, a full queue, a bounded flush."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from sparkmirror.kafka import produce
from sparkmirror.kafka.produce import AcknowledgedProducer, DeliveryFailed, Message


class FakeProducer:
    """Refuses the first `full` produce calls with BufferError; delivers with the queued error, if any."""

    def __init__(self, conf: dict[str, object]) -> None:
        self.conf = conf
        self.full = 0
        self.polls = 0
        self.sent: list[dict[str, object]] = []
        self.error: KafkaError | None = None
        self.unanswered = 0
        self._pending: list[object] = []

    def produce(self, topic: str, **kwargs: object) -> None:
        if self.full:
            self.full -= 1
            raise BufferError("queue full")
        self.sent.append({"topic": topic, **kwargs})
        self._pending.append(kwargs["on_delivery"])

    def poll(self, _timeout: float) -> int:
        self.polls += 1
        return 0

    def flush(self, _timeout: float) -> int:
        for callback in self._pending:
            callback(self.error, None)  # type: ignore[operator]
        self._pending = []
        return self.unanswered


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> list[FakeProducer]:
    made: list[FakeProducer] = []

    def make(conf: dict[str, object]) -> FakeProducer:
        made.append(FakeProducer(conf))
        return made[-1]

    monkeypatch.setattr(produce, "Producer", make)
    return made


def test_acks_all_and_idempotence_are_forced_over_settings_which_are_over_defaults(fake):
    AcknowledgedProducer({"bootstrap.servers": "b:1", "acks": "1", "enable.idempotence": "false", "linger.ms": "5"},
                         defaults={"linger.ms": "0", "batch.size": "1000"})
    conf = fake[0].conf
    assert (conf["acks"], conf["enable.idempotence"], conf["linger.ms"], conf["batch.size"]) == \
        ("all", "true", "5", "1000")


def test_a_full_queue_is_waited_out_and_headers_are_passed_as_a_list(fake):
    producer = AcknowledgedProducer({})
    fake[0].full = 3
    assert producer.write("t", [Message(2, b"k", b"v", (("h", b"1"),), timestamp=42), Message(0, None, b"v", ())],
                          1.0) == 2
    assert fake[0].polls == 3
    assert [(m["partition"], m["headers"], m["timestamp"]) for m in fake[0].sent] == \
        [(2, [("h", b"1")], 42), (0, None, 0)]


def test_a_write_raises_with_its_refused_records_errors_and_the_unanswered_count(fake):
    producer = AcknowledgedProducer({})
    fake[0].error = KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)
    fake[0].unanswered = 1
    with pytest.raises(DeliveryFailed) as failed:
        producer.write("t", [Message(0, None, b"v")], 1.0)
    assert [e.code() for e in failed.value.errors] == [KafkaError.TOPIC_AUTHORIZATION_FAILED]
    assert failed.value.remaining == 1
    fake[0].error, fake[0].unanswered = None, 0
    assert producer.write("t", [Message(0, None, b"v")], 1.0) == 1, "an earlier write's failures are its own"
