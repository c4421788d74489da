from sparkmirror.control.topics import plan_topics, remote_topic_configs
from sparkmirror.model import NewTopicSpec, TopicConfigEntry
from sparkmirror.policy.filters import ConfigPropertyFilter, TopicFilter
from sparkmirror.policy.replication import DefaultReplicationPolicy


def plan(source, target, include=(".*",)):
    return plan_topics(source, target, TopicFilter(include, ("__.*",)), DefaultReplicationPolicy(),
                       target_alias="B", source_alias="A", replication_factor=1)


def test_missing_remote_topics_are_created_with_source_partition_count():
    p = plan({"orders": 3, "payments": 12, "__consumer_offsets": 50}, {})
    assert dict(p.remote_topics) == {"orders": "A.orders", "payments": "A.payments"}
    assert p.create == (NewTopicSpec("A.orders", 3, 1), NewTopicSpec("A.payments", 12, 1))


def test_existing_remote_topics_grow_but_never_shrink():
    p = plan({"orders": 6, "payments": 2}, {"A.orders": 3, "A.payments": 4})
    assert p.create == ()
    assert dict(p.add_partitions) == {"A.orders": 6}


def test_topics_that_came_from_the_target_are_not_sent_back():
    p = plan({"B.orders": 3, "orders": 3}, {})
    assert dict(p.remote_topics) == {"orders": "A.orders"}


def test_non_matching_topics_are_left_alone():
    p = plan({"orders": 3, "audit": 1}, {}, include=("orders",))
    assert [s.name for s in p.create] == ["A.orders"]


def test_new_remote_topics_get_the_source_configs_the_filter_lets_through():
    entries = {"orders": [TopicConfigEntry("cleanup.policy", "compact", False),
                          TopicConfigEntry("min.insync.replicas", "2", False),
                          TopicConfigEntry("retention.ms", "604800000", True),
                          TopicConfigEntry("segment.bytes", "1000", False)]}
    config_filter = ConfigPropertyFilter((r"min\.insync\.replicas", r"segment\..*"))
    p = plan_topics({"orders": 3}, {}, TopicFilter((".*",)), DefaultReplicationPolicy(), target_alias="B",
                    source_alias="A", replication_factor=1, source_configs=entries, config_filter=config_filter)
    assert dict(p.create[0].configs) == {"cleanup.policy": "compact"}
    # use.defaults.from = source: values at their default are set explicitly too (MM2's KIP-894)
    assert remote_topic_configs(entries["orders"], ConfigPropertyFilter((), "source")) == {
        "cleanup.policy": "compact", "min.insync.replicas": "2", "retention.ms": "604800000", "segment.bytes": "1000"}
