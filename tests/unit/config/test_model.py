"""What follows from a flow's settings: its policy, internal topic names, filters, offset syncs' home, where a
new flow starts reading, and which of its clients librdkafka builds."""

import pytest

from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.model import reset_policy
from sparkmirror.config.properties import parse_properties
from sparkmirror.errors import ConfigError
from sparkmirror.policy.replication import IdentityReplicationPolicy

TWO = "clusters = a, b\na.bootstrap.servers = servers-one\nb.bootstrap.servers = servers-two\na->b.enabled = true\n"


def load(text: str) -> MirrorMakerConfig:
    return MirrorMakerConfig.from_properties(parse_properties(text, "mm2.properties"), {})


def test_auto_offset_reset_chooses_where_a_new_flow_starts():
    assert reset_policy({"auto.offset.reset": "Latest"}) == "latest"
    assert reset_policy({}) == "earliest"  # MM2's default for its consumer
    with pytest.raises(ConfigError, match="A.consumer.auto.offset.reset: 'none' cannot start a new flow"):
        reset_policy({"auto.offset.reset": "none"}, describe=lambda k: f"A.consumer.{k}")


def test_a_flows_reset_policy_is_resolved_at_load_and_refused_when_read():
    assert load(TWO + "a.consumer.auto.offset.reset = LATEST\n").flow("a", "b").reset_policy == "latest"
    assert load(TWO).flow("a", "b").reset_policy == "earliest"
    flow = load(TWO + "a.consumer.auto.offset.reset = none\n").flow("a", "b")  # the load itself does not fail
    with pytest.raises(ConfigError) as info:
        _ = flow.reset_policy
    assert info.value.problems == ["a.consumer.auto.offset.reset (mm2.properties:5): 'none' cannot start a new flow; "
                                   "use earliest or latest"]


def test_internal_topics_and_where_the_offset_syncs_live():
    on_source = load(TWO).flow("a", "b")
    assert (on_source.offset_syncs_cluster, on_source.offset_syncs_topic) == ("a", "mm2-offset-syncs.b.internal")
    assert on_source.offset_syncs_admin is on_source.source_admin
    assert on_source.checkpoints_topic == "a.checkpoints.internal"
    assert on_source.heartbeats_topic == "heartbeats"
    on_target = load(TWO + "a->b.offset-syncs.topic.location = target\n").flow("a", "b")
    assert (on_target.offset_syncs_cluster, on_target.offset_syncs_topic) == ("b", "mm2-offset-syncs.a.internal")
    assert on_target.offset_syncs_admin is on_target.target_admin


def test_policy_and_filters_follow_the_settings():
    flow = load(TWO + "replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy\n"
                      "replication.policy.separator = _\ntopics = orders.*\ntopics.exclude = orders-tmp\n"
                      "groups = app-.*\nconfig.properties.exclude = retention\\\\.ms\n").flow("a", "b")
    assert isinstance(flow.policy, IdentityReplicationPolicy)
    assert flow.policy.format_remote_topic("a", "orders") == "orders"
    assert flow.checkpoints_topic == "a_checkpoints_internal"
    assert flow.offset_syncs_topic == "mm2-offset-syncs_b_internal"
    assert flow.topic_filter.should_replicate_topic("orders-1")
    assert not flow.topic_filter.should_replicate_topic("orders-tmp")
    assert flow.group_filter.should_replicate_group("app-1") and not flow.group_filter.should_replicate_group("x")
    assert not flow.config_filter.should_replicate_config_property("retention.ms")
    assert flow.config_filter.should_replicate_config_property("cleanup.policy")


def test_the_clients_librdkafka_builds_depend_on_the_jobs_that_are_on():
    flow = load(TWO).flow("a", "b")
    assert flow.rdkafka_clients == (flow.source_admin, flow.target_admin, flow.offset_syncs_producer,
                                    flow.heartbeats_producer, flow.source_consumer, flow.target_consumer,
                                    flow.target_producer)  # the checkpointer's syncs reader, reader and writer
    syncs_on_target = load(TWO + "emit.heartbeats.enabled = false\noffset-syncs.topic.location = target\n"
                                 "sparkmirror.trigger.mode = real-time\n").flow("a", "b")
    assert syncs_on_target.rdkafka_clients == (
        syncs_on_target.source_admin, syncs_on_target.target_admin, syncs_on_target.offset_syncs_producer,
        syncs_on_target.target_consumer, syncs_on_target.target_producer, syncs_on_target.source_consumer)
    quiet = load(TWO + "emit.offset-syncs.enabled = false\nemit.checkpoints.enabled = false\n"
                       "emit.heartbeats.enabled = false\nsparkmirror.trigger.mode = real-time\n").flow("a", "b")
    assert quiet.rdkafka_clients == (quiet.source_admin, quiet.target_admin, quiet.target_consumer,
                                     quiet.target_producer, quiet.source_consumer)  # the ACL ledger's reader, writer
    no_acl_sync = load(TWO + "emit.offset-syncs.enabled = false\nemit.checkpoints.enabled = false\n"
                             "emit.heartbeats.enabled = false\nsync.topic.acls.enabled = false\n").flow("a", "b")
    assert no_acl_sync.rdkafka_clients == (no_acl_sync.source_admin, no_acl_sync.target_admin)


def test_clients_carry_their_role_and_translation():
    config = load(TWO + "a.consumer.isolation.level = read_committed\nb.producer.linger.ms = 7\n")
    flow = config.flow("a", "b")
    roles = {name: getattr(flow, name).role for name in ("source_consumer", "source_admin", "target_admin",
                                                         "target_producer", "offset_syncs_producer",
                                                         "heartbeats_producer", "target_consumer")}
    assert roles == {"source_consumer": "consumer", "source_admin": "admin", "target_admin": "admin",
                     "target_producer": "producer", "offset_syncs_producer": "producer",
                     "heartbeats_producer": "producer", "target_consumer": "consumer"}
    assert config.cluster("a").admin.role == "admin"
    assert flow.source_consumer.rdkafka["isolation.level"] == "read_committed"
    assert flow.target_producer.rdkafka["linger.ms"] == "7"
    assert flow.source_admin.rdkafka["bootstrap.servers"] == "servers-one"
