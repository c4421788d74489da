"""Subjects on the target registry under the flow's replication policy."""

from __future__ import annotations

from sparkmirror.policy.replication import DefaultReplicationPolicy
from sparkmirror.policy.subjects import SubjectCopy, SubjectTopic, flow_subjects, target_subject, topic_subject

TOPICS = ["orders", "a-b", "payments.eu"]


def remote(topic: str) -> str:
    return DefaultReplicationPolicy().format_remote_topic("A", topic)


def test_topic_name_strategy_subjects_follow_the_remote_topic():
    assert target_subject("orders-value", TOPICS, remote) == "A.orders-value"
    assert target_subject("orders-key", TOPICS, remote) == "A.orders-key"
    assert target_subject("payments.eu-value", TOPICS, remote) == "A.payments.eu-value"


def test_a_dash_in_the_topic_name_is_read_against_the_flows_topics():
    assert topic_subject("a-b-value", TOPICS) == SubjectTopic("a-b", is_key=False)
    assert topic_subject("a-key", TOPICS) is None  # no topic `a` is replicated
    assert target_subject("a-b-key", TOPICS, remote) == "A.a-b-key"


def test_other_strategies_and_other_topics_keep_their_names():
    assert target_subject("com.acme.Order", TOPICS, remote) == "com.acme.Order"  # RecordNameStrategy
    assert target_subject("orders-com.acme.Order", TOPICS, remote) == "orders-com.acme.Order"  # TopicRecordName
    assert target_subject("invoices-value", TOPICS, remote) == "invoices-value"  # not a replicated topic


def test_a_flow_syncs_its_topics_subjects_only():
    assert flow_subjects(["invoices-value", "orders-value", "com.acme.Order", "a-b-key", "orders-key"], TOPICS) == [
        "a-b-key", "orders-key", "orders-value"]


def test_a_subject_copy_registers_the_versions_the_target_lacks_in_order():
    copy = SubjectCopy("orders-value", "A.orders-value", (1, 2, 3), frozenset({2}))
    assert copy.missing == (1, 3)
    assert SubjectCopy("s", "s", (1,), frozenset({1})).missing == ()
