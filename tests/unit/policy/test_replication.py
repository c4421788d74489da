"""Replication policies against MM2 4.3.1's behaviour.

Cases restate MM2's own tests (ReplicationPolicyTest; MirrorSourceConnectorTest's testNoCycles,
testIdentityReplication and heartbeat tests) plus edge cases of Java's Pattern.split. Every expectation
was also checked against Kafka 4.3.1's DefaultReplicationPolicy/IdentityReplicationPolicy/
MirrorSourceConnector classes run on the JVM.
"""

from __future__ import annotations

import pytest

from sparkmirror.policy.filters import TopicFilter
from sparkmirror.policy.replication import (
    DefaultReplicationPolicy,
    IdentityReplicationPolicy,
    ReplicationPolicy,
    is_cycle,
    policy_for,
    should_replicate_topic,
)

DOT = DefaultReplicationPolicy()
UNDERSCORES = DefaultReplicationPolicy("__")
UNDERSCORES_DOT_INTERNALS = DefaultReplicationPolicy("__", internal_separator_enabled=False)
DASH = DefaultReplicationPolicy("-")
IDENTITY = IdentityReplicationPolicy()
IDENTITY_FROM_A = IdentityReplicationPolicy(source_alias="A")
EVERYTHING, NOTHING = TopicFilter((".*",)), TopicFilter(())


@pytest.mark.parametrize(("policy", "topic", "source", "upstream", "original"), [
    (DOT, "orders", None, None, "orders"),
    (DOT, "A.orders", "A", "orders", "orders"),
    (DOT, "B.A.orders", "B", "A.orders", "orders"),
    (DOT, "A.", None, None, "A."),  # Pattern.split drops trailing empty strings
    (DOT, "A..", None, None, "A.."),
    (DOT, ".", None, None, "."),
    (DOT, "", None, None, ""),
    (DOT, ".orders", "", "orders", "orders"),  # a leading separator gives the empty alias
    (DOT, "..b", "", ".b", "b"),
    (DOT, "A..b", "A", ".b", "b"),  # ".b" is itself remote, from ""
    (UNDERSCORES, "A__orders", "A", "orders", "orders"),
    (UNDERSCORES, "B__A__orders", "B", "A__orders", "orders"),
    (UNDERSCORES, "A.orders", None, None, "A.orders"),
    (UNDERSCORES, "A___b", "A", "_b", "_b"),  # matches are taken left to right, without overlap
    (UNDERSCORES, "A__", None, None, "A__"),
    (UNDERSCORES, "__A", "", "A", "A"),
    (DASH, "A-B-orders", "A", "B-orders", "orders"),
    (DASH, "A--b", "A", "-b", "b"),
    (DOT, "é.ü.注文", "é", "ü.注文", "注文"),
])
def test_default_policy_reads_names_back(policy, topic, source, upstream, original):
    assert (policy.topic_source(topic), policy.upstream_topic(topic), policy.original_topic(topic)) == (
        source, upstream, original)


@pytest.mark.parametrize(("policy", "source_alias", "topic", "remote"), [
    (DOT, "A", "orders", "A.orders"),
    (DOT, "B", "A.orders", "B.A.orders"),
    (UNDERSCORES, "A", "orders", "A__orders"),
    (DASH, "us-west", "orders", "us-west-orders"),
    (IDENTITY, "A", "orders", "orders"),
    (IDENTITY, "B", "A.orders", "A.orders"),
    (IDENTITY, "A", "heartbeats", "A.heartbeats"),  # heartbeats keep default naming
    (IDENTITY, "B", "A.heartbeats", "B.A.heartbeats"),
    (IdentityReplicationPolicy("__"), "A", "heartbeats", "A__heartbeats"),
])
def test_remote_topic_names(policy, source_alias, topic, remote):
    assert policy.format_remote_topic(source_alias, topic) == remote


@pytest.mark.parametrize(("policy", "topic", "source", "upstream", "original"), [
    (IDENTITY, "orders", None, "orders", "orders"),
    (IDENTITY, "B.A.orders", None, "B.A.orders", "B.A.orders"),
    (IDENTITY_FROM_A, "orders", "A", "orders", "orders"),
    (IDENTITY_FROM_A, "B.A.heartbeats", "B", "A.heartbeats", "heartbeats"),
    (IDENTITY_FROM_A, "heartbeats", None, None, "heartbeats"),
    (IDENTITY_FROM_A, "xheartbeats", None, None, "xheartbeats"),  # looks like one, but is not remote
])
def test_identity_policy_reads_names_back(policy, topic, source, upstream, original):
    assert (policy.topic_source(topic), policy.upstream_topic(topic), policy.original_topic(topic)) == (
        source, upstream, original)


@pytest.mark.parametrize(("policy", "offset_syncs", "checkpoints"), [
    (DOT, "mm2-offset-syncs.B.internal", "B.checkpoints.internal"),
    (UNDERSCORES, "mm2-offset-syncs__B__internal", "B__checkpoints__internal"),
    (UNDERSCORES_DOT_INTERNALS, "mm2-offset-syncs.B.internal", "B.checkpoints.internal"),
    (DASH, "mm2-offset-syncs-B-internal", "B-checkpoints-internal"),
    (IdentityReplicationPolicy("__"), "mm2-offset-syncs__B__internal", "B__checkpoints__internal"),
])
def test_internal_topic_names_follow_the_internal_separator(policy, offset_syncs, checkpoints):
    assert policy.offset_syncs_topic("B") == offset_syncs
    assert policy.checkpoints_topic("B") == checkpoints
    assert policy.is_checkpoints_topic(checkpoints)
    assert policy.is_mm2_internal_topic(offset_syncs) and policy.is_internal_topic(offset_syncs)
    assert policy.heartbeats_topic() == "heartbeats"  # never affected by the separator


@pytest.mark.parametrize(("policy", "topic", "internal"), [
    (DOT, "__consumer_offsets", True),
    (DOT, ".hiddentopic", True),
    (DOT, "mm2-offset-syncs.B.internal", True),
    (DOT, "mm2-offsets.CLUSTER.internal", True),
    (DOT, "A.checkpoints.internal", True),
    # Since KAFKA-17200 (Kafka 4.0) other *.internal / *-internal names are user topics.
    (DOT, "mm2-offsets-CLUSTER-internal", False),
    (DOT, "connect-offsets-internal", False),
    (DOT, "orders.internal", False),
    (DOT, "mm2-offsets_CLUSTER_internal", False),
    (DOT, "heartbeats", False),
    (DOT, "orders", False),
    (UNDERSCORES, "mm2-offset-syncs__B__internal", True),
    (UNDERSCORES, "A__checkpoints__internal", True),
    (UNDERSCORES, "mm2-offset-syncs.B.internal", False),
    (UNDERSCORES, "A.checkpoints.internal", False),
    (UNDERSCORES_DOT_INTERNALS, "mm2-offset-syncs.B.internal", True),
    (UNDERSCORES_DOT_INTERNALS, "A.checkpoints.internal", True),
    (UNDERSCORES_DOT_INTERNALS, "mm2-offset-syncs__B__internal", False),
    (DASH, "mm2-offsets-CLUSTER-internal", True),
    (DASH, "connect-offsets-internal", False),
    (IDENTITY, "__consumer_offsets", True),
    (IDENTITY, "mm2-offset-syncs.B.internal", True),
    (IDENTITY, "connect-offsets-internal", False),
])
def test_internal_topics(policy, topic, internal):
    assert policy.is_internal_topic(topic) is internal


@pytest.mark.parametrize(("policy", "topic", "heartbeats"), [
    (DOT, "heartbeats", True),
    (DOT, "A.heartbeats", True),
    (DOT, "B.A.heartbeats", True),
    (DOT, "xheartbeats", False),
    (DOT, "A.heartbeats.x", False),
    (DOT, "heartbeats.internal", False),
    (UNDERSCORES, "B__A__heartbeats", True),
    (UNDERSCORES, "us-west.heartbeats", False),
    (DefaultReplicationPolicy("_"), "us-west.heartbeats", False),
    (IDENTITY, "B.A.heartbeats", True),
    (IDENTITY, "A.orders", False),
])
def test_heartbeats_topics_through_any_number_of_hops(policy, topic, heartbeats):
    assert policy.is_heartbeats_topic(topic) is heartbeats


@pytest.mark.parametrize(("policy", "topic", "replicates"), [
    # MirrorSourceConnectorTest.testNoCycles, flow source -> target
    (DOT, "target.topic1", False),
    (DOT, "target.source.topic1", False),
    (DOT, "source.target.topic1", False),
    (DOT, "target.source.target.topic1", False),
    (DOT, "source.target.source.topic1", False),
    (DOT, "topic1", True),
    (DOT, "source.topic1", True),
    # testIdentityReplication: names carry no origin, so only heartbeats can be recognised as cycles
    (IDENTITY, "target.topic1", True),
    (IDENTITY, "source.target.source.topic1", True),
    (IDENTITY, "topic1", True),
    (IDENTITY, "othersource.topic1", True),
    (IDENTITY, "target.heartbeats", False),
    (IDENTITY, "target.source.heartbeats", False),
    (IDENTITY, "source.target.heartbeats", False),
    (IDENTITY, "source.target.source.heartbeats", False),
    (IDENTITY, "heartbeats", True),
    (IDENTITY, "othersource.heartbeats", True),
    (IdentityReplicationPolicy(source_alias="source"), "target.topic1", True),
    # internal topics never replicate, whatever the filter says
    (DOT, "__consumer_offsets", False),
    (DOT, "mm2-offset-syncs.B.internal", False),
    (DOT, "A.checkpoints.internal", False),
    (DOT, "connect-offsets-internal", True),  # left to topics.exclude since Kafka 4.0
    (UNDERSCORES, "target__topic1", False),
    (UNDERSCORES, "target.topic1", True),
])
def test_should_replicate_topic_with_a_filter_that_accepts_everything(policy, topic, replicates):
    assert should_replicate_topic(topic, EVERYTHING, policy, "target") is replicates


@pytest.mark.parametrize(("policy", "topic_filter", "enabled", "topic", "replicates"), [
    (DOT, NOTHING, True, "heartbeats", True),  # heartbeats replicate despite the filter
    (DOT, NOTHING, True, "us-west.heartbeats", True),
    (DOT, NOTHING, True, "B.A.heartbeats", True),
    (DOT, NOTHING, True, "orders", False),
    (DefaultReplicationPolicy("_"), NOTHING, True, "heartbeats", True),
    (DefaultReplicationPolicy("_"), NOTHING, True, "us-west.heartbeats", False),
    (DOT, NOTHING, False, "heartbeats", False),  # heartbeats.replication.enabled = false
    (DOT, NOTHING, False, "us-west.heartbeats", False),
    (DOT, EVERYTHING, False, "heartbeats", True),  # ... unless the filter asks for them
    (DOT, EVERYTHING, False, "us-west.heartbeats", True),
    (DOT, NOTHING, True, "target.heartbeats", False),  # still no cycles
])
def test_heartbeats_replication(policy, topic_filter, enabled, topic, replicates):
    assert should_replicate_topic(topic, topic_filter, policy, "target", enabled) is replicates


@pytest.mark.parametrize(("policy", "topic", "target", "cycle"), [
    (DOT, "B.orders", "B", True),
    (DOT, "C.B.orders", "B", True),
    (DOT, "C.orders", "B", False),
    (DOT, "orders", "B", False),
    (DOT, "B.A.heartbeats", "B", True),
    (DOT, "B.A.heartbeats", "A", True),
    (DOT, "B.A.heartbeats", "C", False),
    (DOT, ".orders", "", True),
    (IDENTITY, "B.orders", "B", False),
    (IDENTITY_FROM_A, "orders", "B", False),  # upstream == topic stops the walk
    (IDENTITY_FROM_A, "orders", "A", True),  # the configured alias is the topic's source
    (IDENTITY_FROM_A, "B.A.heartbeats", "A", True),
])
def test_is_cycle(policy, topic, target, cycle):
    assert is_cycle(policy, topic, target) is cycle


def test_policy_for_builds_the_configured_policy():
    assert policy_for("default") == DefaultReplicationPolicy(".", True)
    assert policy_for("default", "__", internal_separator_enabled=False) == UNDERSCORES_DOT_INTERNALS
    assert policy_for("identity", "-", False, source_alias="A") == IdentityReplicationPolicy("-", False, "A")
    assert policy_for("identity") == IDENTITY


def test_an_empty_separator_is_rejected():
    with pytest.raises(ValueError, match="separator"):
        DefaultReplicationPolicy("")


class _SuffixPolicy(ReplicationPolicy):
    """A custom policy that implements only the three required methods: `orders` from A is `orders@A`."""

    def format_remote_topic(self, source_alias: str, topic: str) -> str:
        return f"{topic}@{source_alias}"

    def topic_source(self, topic: str) -> str | None:
        return topic.rpartition("@")[2] if "@" in topic else None

    def upstream_topic(self, topic: str) -> str | None:
        return topic.rpartition("@")[0] if "@" in topic else None


def test_custom_policies_inherit_mm2_interface_defaults():
    policy = _SuffixPolicy()
    assert policy.original_topic("heartbeats@A@B") == "heartbeats"
    assert policy.is_heartbeats_topic("heartbeats@A@B")
    assert policy.offset_syncs_topic("B") == "mm2-offset-syncs.B.internal"
    assert policy.checkpoints_topic("B") == "B.checkpoints.internal"
    assert policy.is_internal_topic("A.checkpoints.internal") and policy.is_internal_topic("mm2-x.internal")
    assert not policy.is_internal_topic("orders.internal")
    assert is_cycle(policy, "orders@A@B", "A") and not is_cycle(policy, "orders@A@B", "C")


def test_policies_are_frozen_values():
    with pytest.raises(AttributeError):
        DOT.separator = "_"  # type: ignore[misc]
    assert DefaultReplicationPolicy("__") == UNDERSCORES and hash(DefaultReplicationPolicy("__")) == hash(UNDERSCORES)


def test_topic_filter_full_match_and_excludes():
    f = TopicFilter((r"orders", r"pay.*"), (r".*[\-\.]internal", r"__.*"))
    assert f.should_replicate_topic("orders")
    assert not f.should_replicate_topic("orders2")  # full match, as Java's Pattern.matches
    assert f.should_replicate_topic("payments")
    assert not f.should_replicate_topic("pay.internal")
    assert not f.should_replicate_topic("__consumer_offsets")
    assert not TopicFilter(()).should_replicate_topic("orders")
