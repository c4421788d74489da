"""failures.py: librdkafka errors as sparkmirror errors, with the texts operators see."""

from __future__ import annotations

from confluent_kafka import KafkaError, KafkaException

from sparkmirror.errors import AdminOperationError, ClusterUnreachableError
from sparkmirror.kafka.failures import describe, error_code, kafka_error, operation_error, unreachable_error

DENIED = KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)


def test_a_failure_is_described_by_librdkafka_text_and_the_code_name():
    assert describe(DENIED) == describe(KafkaException(DENIED)) == f"{DENIED.str()} (TOPIC_AUTHORIZATION_FAILED)"
    assert describe(KafkaException("no error object")) == "no error object"
    assert error_code(KafkaException(DENIED)) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert kafka_error(KafkaException("no error object")) is None and error_code(None) is None


def test_an_operation_error_names_operation_cluster_and_the_hint_for_its_code():
    error = operation_error("B", "write to 't'", KafkaException(DENIED), {DENIED.code(): "Grant WRITE on 't'"})
    assert isinstance(error, AdminOperationError)
    assert str(error) == f"write to 't' on cluster 'B' failed: {describe(DENIED)}. Grant WRITE on 't'"
    assert str(operation_error("B", "list topics", DENIED)) == f"list topics on cluster 'B' failed: {describe(DENIED)}"


def test_an_unreachable_error_says_what_was_being_done():
    timed_out = KafkaError(KafkaError._TIMED_OUT)
    error = unreachable_error("A", "a:9092", timed_out, "reading 'syncs'")
    assert isinstance(error, ClusterUnreachableError)
    assert f"at bootstrap.servers=a:9092: reading 'syncs': {describe(timed_out)}. Check" in str(error)
    assert f"a:9092: {describe(timed_out)}. Check" in str(unreachable_error("A", "a:9092", timed_out))
