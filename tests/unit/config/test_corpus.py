"""The properties files under tests/data/mm2: valid ones load as MM2 reads them, broken ones fail with
exactly the messages written at their top (`# expect: ...`)."""

from pathlib import Path

import pytest

from sparkmirror.config.client_settings import HIDDEN
from sparkmirror.config.mm2 import MirrorMakerConfig, load_config
from sparkmirror.errors import ConfigError

DATA = Path(__file__).parents[2] / "data" / "mm2"
BROKEN = sorted((DATA / "broken").glob("*.properties"))
ENV = {"MIRROR_A_BOOTSTRAP": "a-1.example:9092"}


def valid(name: str, env: dict[str, str] | None = None) -> MirrorMakerConfig:
    return load_config(DATA / "valid" / name, env=ENV if env is None else env)


@pytest.fixture(autouse=True)
def _relative_secret_paths(monkeypatch):
    monkeypatch.chdir(DATA)  # ${file:secrets/...} paths are relative to the working directory, as in Kafka


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_broken_file_reports_exactly_its_expected_problems(path):
    expected = [line.removeprefix("# expect: ") for line in path.read_text().splitlines()
                if line.startswith("# expect: ")]
    assert expected, f"{path.name} has no '# expect:' line"
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    assert sorted(info.value.problems) == sorted(expected)


def test_active_passive():
    config = valid("active_passive.properties")
    [flow] = config.enabled_flows()
    assert flow.name == "primary->secondary"
    assert flow.topics == ("billing-events", "ledger-.*")
    assert flow.source_consumer["bootstrap.servers"] == "kafka-p1.example:9092,kafka-p2.example:9092"
    assert flow.target_producer["bootstrap.servers"] == "kafka-s1.example:9092"
    assert not config.flow("secondary", "primary").enabled  # flows are off unless enabled, as in MM2
    assert config.unused_keys == () and config.warnings == ()


def test_per_flow_overrides_beat_top_level_defaults():
    config = valid("per_flow_overrides.properties")
    west_east, east_west = config.flow("us-west", "us-east"), config.flow("us-east", "us-west")
    assert west_east.topics == ("inventory.*", "shipments")
    assert east_west.topics == (".*",)
    assert (west_east.tasks_max, east_west.tasks_max) == (8, 5)
    assert west_east.replication_factor == east_west.replication_factor == 3
    assert west_east.emit_checkpoints.interval_s == 15 and east_west.emit_checkpoints.interval_s == 5  # our default
    assert east_west.sync_group_offsets.enabled and not west_east.sync_group_offsets.enabled
    assert not west_east.sync_topic_acls.enabled and not east_west.sync_topic_acls.enabled
    # Connect worker keys are read and named in one warning list, never fatal; the offsets topic of a target's
    # worker is where `sparkmirror takeover` reads MM2's positions
    assert config.unused_keys == ("offset.flush.interval.ms",)
    assert east_west.mm2_offsets_topic == "mm2-offsets-west" and west_east.mm2_offsets_topic == ""


def test_per_flow_client_settings_follow_mm2_precedence():
    flow = valid("per_flow_overrides.properties").flow("us-west", "us-east")
    # us-west.consumer.* beats us-west->us-east.consumer.* (MM2 copies cluster settings into source.consumer.*)
    assert flow.source_consumer["max.poll.records"] == "2000"
    assert flow.source_consumer["fetch.min.bytes"] == "65536"
    # the replication producer is the target's worker producer, overridden per flow by producer.override.*
    assert flow.target_producer["compression.type"] == "zstd"
    assert flow.target_producer["linger.ms"] == "50"
    assert config_origin(flow.target_producer, "linger.ms") == "us-west->us-east.producer.override.linger.ms"


def config_origin(settings, key):
    return settings.origin(key).split(" (")[0]


def test_six_cluster_xdcr_with_nearby_clusters():
    config = valid("xdcr_six_clusters.properties")
    assert list(config.clusters) == ["west-1", "west-2", "east-1", "east-2", "north-1", "north-2"]
    assert len(config.flows) == 30 and len(config.enabled_flows()) == 12
    west = config.enabled_flows(("west-1", "west-2"))
    assert sorted(f.name for f in west) == ["east-1->west-1", "north-1->west-1", "west-1->west-2", "west-2->west-1"]
    assert all(f.target in ("west-1", "west-2") for f in west)
    east = {f.name for f in config.enabled_flows(("east-1", "east-2"))}
    assert east == {"east-1->east-2", "east-2->east-1", "west-1->east-1", "north-1->east-1"}
    with pytest.raises(ConfigError, match="--clusters names unknown cluster alias"):
        config.enabled_flows(("south-1",))


def test_ssl_and_sasl_settings_reach_every_client_of_the_cluster():
    flow = valid("ssl_sasl.properties").enabled_flows()[0]
    consumer = flow.source_consumer
    assert consumer["security.protocol"] == "SASL_SSL"
    assert consumer["sasl.mechanism"] == "SCRAM-SHA-512"
    assert "ScramLoginModule" in consumer["sasl.jaas.config"]
    assert consumer["ssl.truststore.type"] == "PKCS12"
    assert flow.source_admin["ssl.truststore.location"] == "/etc/kafka/onprem-truststore.p12"
    assert flow.target_producer["security.protocol"] == "SSL"
    assert flow.target_producer["ssl.keystore.location"] == "/etc/kafka/cloud-client.pem"
    assert flow.target_admin["ssl.keystore.location"] == "/etc/kafka/cloud-admin.pem"  # cloud.admin.* wins
    shown = repr(flow) + str(consumer.redacted()) + str(flow.target_producer.redacted())
    for secret in ("s3cr3t-onprem", "trust-pass", "key-pass"):
        assert secret not in shown
    assert consumer.redacted()["sasl.jaas.config"] == HIDDEN


def test_secrets_from_config_providers_are_resolved_and_never_shown():
    config = valid("secrets_from_providers.properties")
    flow = config.enabled_flows()[0]
    assert flow.source_consumer["bootstrap.servers"] == "a-1.example:9092"
    jaas = flow.source_consumer["sasl.jaas.config"]
    assert 'username="mirror-a"' in jaas and 'password="pa55-from-file"' in jaas
    assert 'password="pa55-from-dir"' in flow.target_producer["sasl.jaas.config"]
    # a provider value is hidden even under a key that is not secret by name
    assert flow.source_consumer.redacted()["bootstrap.servers"] == HIDDEN
    text = repr(config) + str(flow.source_consumer.redacted()) + str(flow.target_admin.redacted())
    assert "pa55" not in text and "a-1.example" not in text


def test_env_provider_allowlist_and_missing_variable():
    with pytest.raises(ConfigError, match="environment variable 'MIRROR_A_BOOTSTRAP' is not set"):
        valid("secrets_from_providers.properties", env={})


def test_deprecated_aliases_apply_with_a_warning_and_lose_to_the_new_name():
    config = valid("deprecated_aliases.properties")
    a_b, b_a = config.flow("A", "B"), config.flow("B", "A")
    assert a_b.topics_exclude == (r".*\.tmp", "scratch-.*")
    assert a_b.groups_exclude == ("test-.*",)
    assert b_a.config_properties_exclude == (r"segment\.bytes",)
    assert any("topics.blacklist" in w and "rename it to 'topics.exclude'" in w for w in config.warnings)
    assert any("B->A.config.properties.blacklist" in w and "is ignored" in w for w in config.warnings)


def test_identity_migration_reads_every_mm2_knob():
    flow = valid("identity_migration.properties").flow("old", "new")
    assert flow.replication_policy == "identity" and flow.separator == "_"
    assert not flow.emit_heartbeats.enabled
    assert flow.sync_group_offsets.enabled and flow.sync_group_offsets.interval_s == 10
    assert flow.offset_syncs_topic_location == "target"
    assert flow.offset_lag_max == 0
    assert flow.use_defaults_from == "source"
    assert not flow.heartbeats_replication_enabled
    assert flow.refresh_topics.interval_s == 30 and flow.refresh_topics.enabled


def test_dotted_aliases_resolve_by_prefix_as_mm2():
    config = valid("dotted_aliases.properties")
    assert list(config.clusters) == ["us.east", "us.west", "eu"]
    assert [f.name for f in config.enabled_flows()] == ["us.east->us.west", "eu->us.east"]
    east_west = config.flow("us.east", "us.west")
    assert east_west.topics == ("orders.*", "payments") and east_west.sync_group_offsets.enabled
    assert east_west.source_consumer["bootstrap.servers"] == "east-1.example:9092,east-2.example:9092"
    assert east_west.source_consumer["max.poll.records"] == "700"
    assert east_west.source_consumer["fetch.min.bytes"] == "1024"
    assert east_west.target_producer["linger.ms"] == "20"
    assert east_west.checkpoints_topic == "us.east_checkpoints_internal"
    assert east_west.offset_syncs_topic == "mm2-offset-syncs_us.west_internal"
    assert east_west.policy.topic_source(east_west.policy.format_remote_topic("us.east", "orders")) == "us.east"
    assert config.flow("eu", "us.east").replication_factor == 3
    assert len(config.heartbeat_pairs) == 6  # every ordered pair beats (MM2's clusterPairs)
    assert config.unused_keys == () and config.warnings == ()


def test_negative_intervals_turn_jobs_off_with_a_warning():
    config = valid("negative_intervals.properties")
    a_b, b_a = config.flow("A", "B"), config.flow("B", "A")
    assert not a_b.sync_topic_acls.enabled and not b_a.sync_topic_acls.enabled
    assert not a_b.emit_checkpoints.enabled and b_a.emit_checkpoints.enabled
    assert a_b.sync_group_offsets.enabled  # as MM2 reads it; with no checkpoints there is no group offset sync
    assert a_b.emit_heartbeats.enabled and not b_a.emit_heartbeats.enabled
    assert [f.name for f in config.heartbeat_pairs] == ["A->B"]
    assert a_b.refresh_topics.interval_s == b_a.refresh_topics.interval_s == 30
    assert sorted(w.split(" (")[0] for w in config.warnings) == [
        "A->B.emit.checkpoints.interval.seconds", "B->A.emit.heartbeats.interval.seconds",
        "sync.topic.acls.interval.seconds"]
    assert all(w.endswith("is off, as in MM2") for w in config.warnings)


def test_disabled_flows_still_emit_heartbeats_with_their_own_settings():
    config = valid("disabled_flows.properties")
    assert [f.name for f in config.enabled_flows()] == ["primary->backup", "primary->dr"]
    assert [f.name for f in config.heartbeat_pairs] == ["primary->backup", "primary->dr", "backup->primary",
                                                        "dr->primary"]
    dr_primary = config.flow("dr", "primary")
    assert not dr_primary.enabled and dr_primary.emit_heartbeats.interval_s == 5
    assert dr_primary.heartbeats_topic == "heartbeats" and dr_primary.heartbeats_topic_replication_factor == 1
    assert dr_primary.heartbeats_producer["bootstrap.servers"] == "p-1.example:9092"
    assert dr_primary.heartbeats_producer["acks"] == "1"
    assert config.flow("primary", "backup").heartbeats_producer.get("acks") is None
    # the top-level use.defaults.from is ignored, as in MM2; per flow it applies
    assert config.flow("primary", "backup").use_defaults_from == "source"
    assert config.flow("primary", "dr").use_defaults_from == "target"
    assert [w.split(" (")[0] for w in config.warnings] == ["use.defaults.from"]
    assert config.unused_keys == ()
