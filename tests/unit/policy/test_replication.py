from sparkmirror.policy.filters import TopicFilter
from sparkmirror.policy.replication import DefaultReplicationPolicy, IdentityReplicationPolicy, is_cycle


def test_default_policy_names_and_reads_back():
    policy = DefaultReplicationPolicy()
    assert policy.format_remote_topic("A", "orders") == "A.orders"
    assert policy.topic_source("B.A.orders") == "B"
    assert policy.upstream_topic("B.A.orders") == "A.orders"
    assert policy.topic_source("orders") is None


def test_custom_separator():
    policy = DefaultReplicationPolicy("__")
    assert policy.format_remote_topic("A", "orders") == "A__orders"
    assert policy.topic_source("A__orders") == "A"


def test_cycle_detection_walks_the_origin_chain():
    policy = DefaultReplicationPolicy()
    assert is_cycle(policy, "B.orders", "B")
    assert is_cycle(policy, "C.B.orders", "B")
    assert not is_cycle(policy, "C.orders", "B")
    assert not is_cycle(policy, "orders", "B")


def test_identity_policy_keeps_names():
    policy = IdentityReplicationPolicy()
    assert policy.format_remote_topic("A", "orders") == "orders"
    assert not is_cycle(policy, "orders", "A")


def test_topic_filter_full_match_and_excludes():
    f = TopicFilter((r"orders", r"pay.*"), (r".*[\-\.]internal", r"__.*"))
    assert f.should_replicate_topic("orders")
    assert not f.should_replicate_topic("orders2")  # full match, as Java's Pattern.matches
    assert f.should_replicate_topic("payments")
    assert not f.should_replicate_topic("pay.internal")
    assert not f.should_replicate_topic("__consumer_offsets")
    assert not TopicFilter(()).should_replicate_topic("orders")
