"""The coordination group's member: a refusal is named once, with the grant that fixes it (no broker here)."""

from __future__ import annotations

import logging

from confluent_kafka import KafkaError

from sparkmirror.kafka.membership import GroupMembership


def test_a_refused_group_is_named_once_with_the_grant_and_a_transient_error_only_in_the_debug_log(caplog):
    member = GroupMembership("B", {"bootstrap.servers": "localhost:1"}, "__sparkmirror-coordination-x", 10_000,
                             "sparkmirror-h-1")
    assert member.heartbeat_interval_ms == 1000
    with caplog.at_level(logging.DEBUG, logger="sparkmirror.kafka.membership"):
        member._error(KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED))
        member._error(KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED))
        member._error(KafkaError(KafkaError._TRANSPORT))
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert "READ and DESCRIBE on the group '__sparkmirror-coordination-x'" in errors[0].getMessage()
    assert "cluster 'B'" in errors[0].getMessage()
    assert [r.levelno for r in caplog.records].count(logging.DEBUG) == 1
