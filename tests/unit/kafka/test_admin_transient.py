"""Which admin errors are waited out (retried to the call's deadline) rather than raised at once."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from sparkmirror.kafka.admin import _is_transient


@pytest.mark.parametrize("code", [KafkaError.UNKNOWN_LEADER_EPOCH, KafkaError.FENCED_LEADER_EPOCH,
                                  KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError._TRANSPORT])
def test_a_restarting_brokers_answers_are_waited_out(code):
    assert _is_transient(KafkaError(code))


def test_a_refusal_is_raised_at_once():
    assert not _is_transient(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED))
