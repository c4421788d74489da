"""The model: MM2's precedence rules, pinned against MirrorMakerConfigTest's cases, and validation."""

import pytest

from sparkmirror.config import keys
from sparkmirror.config.client_settings import HIDDEN
from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.properties import parse_properties
from sparkmirror.errors import ConfigError

TWO = "clusters = a, b\na.bootstrap.servers = servers-one\nb.bootstrap.servers = servers-two\n"


def load(text: str, env: dict[str, str] | None = None) -> MirrorMakerConfig:
    return MirrorMakerConfig.from_properties(parse_properties(text, "mm2.properties"), env or {})


def test_top_level_client_settings_are_defaults_for_every_cluster():
    # MirrorMakerConfigTest.testClusterConfigProperties
    flow = load(TWO + "security.protocol = SSL\nreplication.factor = 4\n").flow("a", "b")
    assert flow.source_consumer["bootstrap.servers"] == "servers-one"
    assert flow.target_producer["bootstrap.servers"] == "servers-two"
    assert flow.source_consumer["security.protocol"] == flow.target_admin["security.protocol"] == "SSL"
    assert flow.replication_factor == 4


def test_cluster_beats_top_level_and_role_beats_cluster():
    # MirrorMakerConfigTest.testClientConfigProperties
    config = load(TWO + "security.protocol = SSL\na.security.protocol = PLAINTEXT\n"
                        "a.producer.security.protocol = SSL\nxxx = zzz\na.xxx = yyy\n")
    assert config.cluster("a").admin["security.protocol"] == "PLAINTEXT"
    assert config.flow("a", "b").source_consumer["security.protocol"] == "PLAINTEXT"
    assert config.flow("b", "a").target_producer["security.protocol"] == "SSL"
    assert config.cluster("b").admin["security.protocol"] == "SSL"
    assert "xxx" not in config.cluster("a").admin  # unknown keys are not client settings
    assert config.unused_keys == ("a.xxx", "xxx")


def test_worker_producer_takes_target_cluster_and_top_level_security():
    # MirrorMakerConfigTest.testWorkerConfigs: b.producer.* and top-level ssl.* reach the producer writing to b
    config = load(TWO + "b.producer.client.id = client-one\nb.security.protocol = PLAINTEXT\n"
                        "b.producer.security.protocol = SASL_SSL\nssl.truststore.password = secret1\n")
    producer, consumer = config.flow("a", "b").target_producer, config.flow("b", "a").source_consumer
    assert producer["client.id"] == "client-one"
    assert producer["security.protocol"] == "SASL_SSL"
    assert consumer["security.protocol"] == "PLAINTEXT"
    assert producer["ssl.truststore.password"] == "secret1"
    assert producer.redacted()["ssl.truststore.password"] == HIDDEN


def test_cluster_level_client_overrides_beat_flow_level_ones():
    # MirrorConnectorConfig.sourceConsumerConfig: source.cluster.* < consumer.* (flow) < source.consumer.*
    # (from a.consumer.*), and a.<client setting> is copied into source.consumer.* by clusterProps.
    config = load(TWO + "a.consumer.max.poll.records = 500\na->b.consumer.max.poll.records = 10\n"
                        "a->b.consumer.fetch.min.bytes = 7\n"
                        "a.security.protocol = SSL\na->b.consumer.security.protocol = PLAINTEXT\n")
    consumer = config.flow("a", "b").source_consumer
    assert consumer["max.poll.records"] == "500"
    assert consumer["fetch.min.bytes"] == "7"  # a flow-level setting applies where the cluster sets none
    assert consumer["security.protocol"] == "SSL"
    assert consumer.origin("max.poll.records") == "a.consumer.max.poll.records (mm2.properties:4)"


def test_flow_source_consumer_prefix_beats_the_cluster():
    config = load(TWO + "a.consumer.max.poll.records = 500\na->b.source.consumer.max.poll.records = 42\n")
    assert config.flow("a", "b").source_consumer["max.poll.records"] == "42"
    assert config.flow("a", "b").source_admin.get("max.poll.records") is None


def test_generic_cluster_keys_are_not_client_settings():
    # clusterProps copies only bootstrap/security/ssl/sasl into the clients; a.linger.ms is a worker key
    config = load(TWO + "b.linger.ms = 99\nb.producer.linger.ms = 5\n")
    assert config.flow("a", "b").target_producer["linger.ms"] == "5"
    assert config.unused_keys == ("b.linger.ms",)


def test_producer_override_wins_for_the_replication_producer_only():
    config = load(TWO + "b.producer.linger.ms = 5\na->b.producer.override.linger.ms = 50\n"
                        "a->b.producer.batch.size = 1\n")
    flow = config.flow("a", "b")
    assert flow.target_producer["linger.ms"] == "50"
    assert "batch.size" not in flow.target_producer  # flow-level producer.* is MM2's offset-syncs producer
    assert config.flow("b", "a").target_producer.get("linger.ms") is None


def test_flow_setting_beats_top_level_which_beats_default():
    # testReplicationConfigProperties / testIncludesConnectorConfigProperties / testIncludesTopicFilterProperties
    config = load(TWO + "tasks.max = 100\ntopics = topic-1\ngroups = group-2\nreplication.policy.separator = __\n"
                        "config.properties.exclude = property-3\na->b.tasks.max = 123\n"
                        "a->b.topics = topic1, topic2\na->b.topics.exclude = topic3\n")
    a_b, b_a = config.flow("a", "b"), config.flow("b", "a")
    assert (a_b.tasks_max, b_a.tasks_max) == (123, 100)
    assert (a_b.topics, b_a.topics) == (("topic1", "topic2"), ("topic-1",))
    assert a_b.topics_exclude == ("topic3",)
    assert b_a.topics_exclude == ("mm2.*\\.internal", ".*\\.replica", "__.*")  # Kafka 4.3's default
    assert a_b.groups == ("group-2",) and a_b.separator == "__"
    assert a_b.config_properties_exclude == ("property-3",)


def test_defaults_are_mm2_4_3s():
    flow = load(TWO + "a->b.enabled = true\n").flow("a", "b")
    assert flow.enabled and not load(TWO).flow("a", "b").enabled
    assert flow.replication_factor == 2 and flow.replication_policy == "default" and flow.separator == "."
    assert (flow.emit_heartbeats.enabled, flow.emit_heartbeats.interval_s) == (True, 1)
    assert (flow.emit_checkpoints.enabled, flow.emit_checkpoints.interval_s) == (True, 5)  # MM2: 60
    assert (flow.sync_group_offsets.enabled, flow.sync_group_offsets.interval_s) == (False, 5)  # MM2: 60
    assert flow.sync_topic_configs.interval_s == 600
    assert flow.refresh_topics.interval_s == 5  # ours: new topics are picked up in seconds, not MM2's 600 s
    assert flow.groups_exclude == ("console-consumer-.*", "connect-.*", "__.*")
    assert "log\\.message\\.timestamp\\.after\\.max\\.ms" in flow.config_properties_exclude
    assert flow.offset_lag_max == 100 and flow.offset_syncs_topic_location == "source"
    assert flow.offset_syncs_topic_replication_factor == 3 and flow.exactly_once_support == "requested"


def test_empty_topics_list_replicates_nothing_as_in_mm2():
    assert load(TWO + "topics =\n").flow("a", "b").topics == ()


def test_every_problem_is_reported_in_file_order_with_key_and_line():
    text = ("clusters = A, B\n"
            "A.bootstrap.servers = a:1\n"
            "A->C.enabled = true\n"
            "A->B.topics = foo[\n"
            "A->A.enabled = true\n"
            "replication.factor = 0\n"
            "A->B.sync.topic.acls.interval.seconds = 0\n")
    with pytest.raises(ConfigError) as info:
        load(text)
    problems = info.value.problems
    assert [p.split(":")[0] for p in problems] == [
        "A->C.enabled", "A->B.topics", "A->A.enabled", "replication.factor",
        "A->B.sync.topic.acls.interval.seconds", "B.bootstrap.servers"]
    assert "mm2.properties:3" in problems[0] and "mm2.properties:7" in problems[4]


def test_messages_show_the_reference_not_the_resolved_secret(tmp_path):
    secrets = tmp_path / "s.properties"
    secrets.write_text("flag = top-secret-value\n")
    text = (TWO + "config.providers = file\n"
            f"config.providers.file.class = {keys.FILE_CONFIG_PROVIDER}\n"
            f"a->b.enabled = ${{file:{secrets}:flag}}\n")
    with pytest.raises(ConfigError) as info:
        load(text)
    assert "top-secret-value" not in str(info.value)
    assert f"got '${{file:{secrets}:flag}}'" in str(info.value)


def test_unknown_keys_are_listed_not_fatal():
    config = load(TWO + "offset.storage.topic = x\nspark.master = local[1]\nb->a.errors.log.enable = true\n"
                        "a->b.replication.factor = 1\nsparkmirror.max.offsets.per.trigger = 10\n")
    assert config.unused_keys == ("b->a.errors.log.enable", "offset.storage.topic")
    assert config.spark == {"spark.master": "local[1]"}
    assert config.flow("a", "b").max_offsets_per_trigger == 10


def test_clusters_filter_restricts_to_targets():
    config = load(TWO + "a->b.enabled = true\nb->a.enabled = true\n")
    assert [f.name for f in config.enabled_flows(("a",))] == ["b->a"]
    with pytest.raises(ConfigError, match="unknown cluster alias"):
        config.enabled_flows(("Z",))


def test_identity_policy_by_class_name():
    config = load(TWO + f"replication.policy.class = {keys.IDENTITY_REPLICATION_POLICY}\n")
    assert config.flow("a", "b").replication_policy == "identity"


def test_same_value_twice_is_a_warning_not_an_error():
    config = load(TWO + "topics = x\ntopics = x\n")
    assert config.flow("a", "b").topics == ("x",)
    assert config.warnings == ("topics is set 2 times with the same value (lines 4, 5)",)


def test_tasks_max_must_be_positive():
    with pytest.raises(ConfigError, match="tasks.max: must be at least 1"):
        load(TWO + "tasks.max = 0\n")


def test_default_plugin_classes_are_accepted():
    config = load(TWO + f"topic.filter.class = {keys.DEFAULT_PLUGIN_CLASSES[keys.TOPIC_FILTER_CLASS]}\n")
    assert config.unused_keys == ()


def test_offset_syncs_producer_writes_where_the_topic_lives_and_heartbeats_go_to_the_target():
    text = TWO + "a->b.enabled = true\na.producer.acks = 1\nb.producer.acks = all\n"
    on_source = load(text).flow("a", "b")
    on_target = load(text + "a->b.offset-syncs.topic.location = target\n").flow("a", "b")
    assert (on_source.offset_syncs_producer["bootstrap.servers"], on_source.offset_syncs_producer["acks"]) == \
        ("servers-one", "1")
    assert (on_target.offset_syncs_producer["bootstrap.servers"], on_target.offset_syncs_producer["acks"]) == \
        ("servers-two", "all")
    assert on_source.heartbeats_producer["bootstrap.servers"] == "servers-two"


def test_the_internal_topics_are_read_back_with_the_consumer_of_the_cluster_holding_them():
    """MirrorCheckpointConfig.offsetSyncsTopicConsumerConfig and CheckpointStore's targetConsumerConfig."""
    text = TWO + ("a->b.enabled = true\na.consumer.client.id = a-reader\nb.consumer.client.id = b-reader\n"
                  "a->b.consumer.fetch.min.bytes = 7\na->b.target.consumer.client.rack = r2\n")
    on_source = load(text).flow("a", "b")
    assert on_source.offset_syncs_consumer is on_source.source_consumer
    assert dict(on_source.target_consumer) == {"bootstrap.servers": "servers-two", "client.id": "b-reader",
                                               "fetch.min.bytes": "7", "client.rack": "r2"}
    on_target = load(text + "a->b.offset-syncs.topic.location = target\n").flow("a", "b")
    assert on_target.offset_syncs_consumer is on_target.target_consumer
    assert on_target.offset_syncs_consumer.rdkafka["client.id"] == "b-reader"
    assert on_source.offset_syncs_consumer.rdkafka["client.id"] == "a-reader"


def test_provenance_header_is_on_for_identity_names_unless_set():
    identity = "replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy\n"
    assert not load(TWO + "a->b.enabled = true\n").flow("a", "b").provenance_enabled
    assert load(TWO + identity + "a->b.enabled = true\n").flow("a", "b").provenance_enabled
    off = load(TWO + identity + "a->b.enabled = true\nsparkmirror.provenance.header.enabled = false\n")
    assert not off.flow("a", "b").provenance_enabled
    assert load(TWO + "a->b.enabled = true\na->b.sparkmirror.provenance.header.enabled = true\n") \
        .flow("a", "b").provenance_enabled


def test_trigger_mode_is_chosen_at_top_level_or_per_flow():
    both = TWO + "a->b.enabled = true\nb->a.enabled = true\n"
    config = load(both + "sparkmirror.trigger.mode = real-time\nb->a.sparkmirror.trigger.mode = micro-batch\n"
                         "sparkmirror.real.time.epoch.ms = 30000\n")
    assert config.flow("a", "b").trigger_mode == "real-time"
    assert config.flow("a", "b").real_time_epoch_ms == 30_000
    assert config.flow("b", "a").trigger_mode == "micro-batch"
    assert load(both).flow("a", "b").trigger_mode == "micro-batch"  # the default: backlogs and many partitions


def test_unknown_trigger_modes_and_too_short_epochs_are_refused():
    with pytest.raises(ConfigError) as info:
        load(TWO + "a->b.enabled = true\nsparkmirror.trigger.mode = continuous\n"
                   "sparkmirror.real.time.epoch.ms = 100\n")
    text = str(info.value)
    assert "sparkmirror.trigger.mode" in text and "'continuous' is not one of: micro-batch, real-time" in text
    assert "sparkmirror.real.time.epoch.ms" in text
