"""The coordination group's member: a refusal is named once, with the grant that fixes it; its group is described
by a child process (no broker here)."""

from __future__ import annotations

import logging
import sys

import pytest
from confluent_kafka import KafkaError

from sparkmirror.errors import AdminOperationError
from sparkmirror.kafka.group_describer import describe_isolated
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


def test_the_group_is_described_by_a_child_process_whose_abort_is_an_error_not_ours(tmp_path, monkeypatch):
    """librdkafka's describe may abort the process that asks (kafka/group_describer.py): a child asks, and
    whatever ends it (here a SIGABRT, as librdkafka's assertion) is an error of that call only."""
    with pytest.raises(AdminOperationError, match=r"describe coordination group '__sparkmirror-coordination-x'.*"
                                                  r"ended with 1"):
        describe_isolated("B", {"bootstrap.servers": "127.0.0.1:1", "socket.connection.setup.timeout.ms": "1000"},
                          "__sparkmirror-coordination-x", 2.0)
    aborting = tmp_path / "python"
    aborting.write_text("#!/bin/sh\nkill -ABRT $$\n")
    aborting.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(aborting))
    with pytest.raises(AdminOperationError, match=r"ended with -6"):
        describe_isolated("B", {"bootstrap.servers": "127.0.0.1:1"}, "__sparkmirror-coordination-x", 2.0)
