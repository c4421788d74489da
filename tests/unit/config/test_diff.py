"""diff_configs: which flows a reload adds, removes, restarts or changes live; describe_diff hides secrets."""

from pathlib import Path

import pytest
from tests.unit.properties_text import THREE_CLUSTERS

from sparkmirror.config.diff import ConfigDiff, FlowChange, describe_diff, diff_configs
from sparkmirror.config.mm2 import MirrorMakerConfig, load_config
from sparkmirror.errors import ConfigError

BASE = THREE_CLUSTERS + "A->B.enabled = true\nA->B.topics = orders\nB->A.enabled = true\n"


@pytest.fixture
def load(tmp_path: Path):
    counter = iter(range(1_000))

    def load(text: str) -> MirrorMakerConfig:
        path = tmp_path / f"mm2-{next(counter)}.properties"
        path.write_text(text, encoding="utf-8")
        return load_config(path)

    return load


def diff(load, old: str, new: str, target_clusters: tuple[str, ...] | None = None) -> ConfigDiff:
    return diff_configs(load(old), load(new), target_clusters)


def test_identical_files_give_an_empty_diff(load):
    d = diff(load, BASE, BASE)
    assert d.is_empty
    assert d == ConfigDiff(unchanged=("A->B", "B->A"))
    assert describe_diff(d) == []


def test_moved_lines_and_comments_are_no_change(load):
    # ClientSettings compare by content: the file line each setting came from does not count.
    reordered = "# reordered\n" + "\n".join(reversed(BASE.splitlines())) + "\n"
    assert diff(load, BASE + "B.producer.acks = all\n", reordered + "\nB.producer.acks = all\n").is_empty


def test_enabled_and_disabled_flows_are_added_and_removed(load):
    d = diff(load, BASE, BASE.replace("B->A.enabled = true", "B->A.enabled = false") + "A->C.enabled = true\n")
    assert (d.added, d.removed, d.unchanged, dict(d.changed)) == (("A->C",), ("B->A",), ("A->B",), {})
    # B->A now only beats (MM2's cluster pairs); A->C beats as the flow it became
    assert (d.heartbeats_added, d.heartbeats_removed) == (("B->A",), ("A->C",))
    assert describe_diff(d) == ["flow A->C added", "flow B->A removed",
                                "heartbeats of B->A started (not a flow this process runs)",
                                "heartbeats of A->C stopped"]


def test_heartbeat_only_pairs_follow_their_settings(load):
    assert diff(load, BASE, BASE + "A->C.topics = other\n").is_empty  # a pair only beats: its topics do not count
    d = diff(load, BASE, BASE + "C->A.emit.heartbeats.interval.seconds = 5\nC.producer.acks = 1\n"
                                "A->C.emit.heartbeats.enabled = false\n")
    assert (d.heartbeats_added, d.heartbeats_removed) == ((), ("A->C",))
    assert d.heartbeats_changed == ("B->C", "C->A")  # C's producer writes the beats into C; C->A's interval
    assert not d.changed and not d.is_empty
    assert describe_diff(d)[-1] == "heartbeats of C->A restart with their new settings"


def test_heartbeat_only_pairs_of_other_targets_are_not_this_process(load):
    d = diff(load, BASE, BASE + "emit.heartbeats.enabled = false\n", target_clusters=("B",))
    assert d.heartbeats_removed == ("C->B",)  # C->A, A->C, B->C beat into clusters this process does not serve


def test_widening_the_topics_regex_is_applied_live(load):
    d = diff(load, BASE, BASE.replace("A->B.topics = orders", "A->B.topics = orders|payments"))
    assert dict(d.changed) == {"A->B": FlowChange(("topics",), restart=False,
                                                  details={"topics": "('orders' -> 'orders|payments')"})}
    assert d.unchanged == ("B->A",)
    assert d.restarts == ()
    assert describe_diff(d) == ["flow A->B: topics changed ('orders' -> 'orders|payments'), applied live"]


def test_schedules_and_filters_are_live(load):
    d = diff(load, BASE, BASE + "emit.heartbeats.interval.seconds = 5\nsync.topic.acls.enabled = false\n"
                                "A->B.config.properties.exclude = retention.ms\n"
                                "heartbeats.replication.enabled = false\nuse.defaults.from = source\n")
    assert set(d.changed) == {"A->B", "B->A"}
    assert not any(change.restart for change in d.changed.values())
    assert "emit.heartbeats changed ('every 1 s' -> 'every 5 s')" in describe_diff(d)[0]
    assert "sync.topic.acls changed ('every 600 s' -> 'disabled')" in describe_diff(d)[0]


def test_producer_setting_restarts_only_the_flow_writing_with_it(load):
    d = diff(load, BASE, BASE + "A->B.producer.override.acks = all\n")
    assert list(d.changed) == ["A->B"]
    # Connect's worker producer writes the records and, in MM2, the heartbeats too
    assert d.changed["A->B"].fields == ("target_producer", "heartbeats_producer")
    assert d.restarts == ("A->B",)
    assert d.unchanged == ("B->A",)
    assert describe_diff(d)[0].startswith("flow A->B: target producer settings changed (acks)")


def test_a_live_change_with_a_restart_change_restarts(load):
    d = diff(load, BASE, BASE.replace("orders", "orders|payments") + "A->B.tasks.max = 4\n")
    change = d.changed["A->B"]
    assert (change.fields, change.restart) == (("topics", "tasks_max"), True)
    assert describe_diff(d) == ["flow A->B: topics changed ('orders' -> 'orders|payments'); "
                                "tasks.max changed ('unset' -> '4'), flow restarts"]


@pytest.mark.parametrize(("line", "field"), [
    ("replication.policy.separator = _", "separator"),
    ("replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy", "replication_policy"),
    ("offset.lag.max = 7", "offset_lag_max"),
    ("groups = app-.*", "groups"),
])
def test_other_flow_settings_restart(load, line, field):
    d = diff(load, BASE, BASE + line + "\n")
    assert {name: (c.fields, c.restart) for name, c in d.changed.items()} == {
        "A->B": ((field,), True), "B->A": ((field,), True)}


def test_bootstrap_servers_change_restarts_every_flow_using_the_cluster(load):
    d = diff(load, BASE + "C->B.enabled = true\n",
             BASE.replace("a:9092", "a2:9092") + "C->B.enabled = true\n")
    assert d.restarts == ("A->B", "B->A")
    assert d.unchanged == ("C->B",)
    assert {"source_consumer", "source_admin"} <= set(d.changed["A->B"].fields)
    assert {"target_admin", "target_producer"} <= set(d.changed["B->A"].fields)
    lines = describe_diff(d)
    assert lines[0].startswith("flow A->B: source consumer settings changed (bootstrap.servers); "
                               "source admin settings changed (bootstrap.servers)")
    assert lines[0].endswith(", flow restarts")
    assert not any("a2:9092" in line for line in lines)


def test_target_clusters_restrict_the_diff_to_flows_into_them(load):
    d = diff(load, BASE, BASE.replace("orders", "orders|payments") + "C->A.enabled = true\n", ("A",))
    assert (d.added, d.changed, d.unchanged) == (("C->A",), {}, ("B->A",))
    with pytest.raises(ConfigError, match="unknown cluster alias"):
        diff(load, BASE, BASE, ("Z",))


def test_spark_change_needs_a_process_restart_and_no_flow_restart(load):
    d = diff(load, BASE + "spark.sql.shuffle.partitions = 2\nspark.hadoop.fs.s3a.secret.key = k1\n",
             BASE + "spark.sql.shuffle.partitions = 4\nspark.hadoop.fs.s3a.secret.key = k2\nspark.ui.port = 1\n")
    assert d.spark_changed and not d.is_empty
    assert d.spark_keys == ("spark.hadoop.fs.s3a.secret.key", "spark.sql.shuffle.partitions", "spark.ui.port")
    assert (d.changed, d.unchanged) == ({}, ("A->B", "B->A"))
    assert describe_diff(d) == [
        "spark settings changed (spark.hadoop.fs.s3a.secret.key, spark.sql.shuffle.partitions, spark.ui.port): "
        "they apply only after a process restart; the running session keeps the old values"]


def test_secret_values_never_appear_in_the_description(load):
    jaas = ('A.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required '
            'username="u" password="{}";\n')
    security = "A.security.protocol = SASL_SSL\nA.sasl.mechanism = PLAIN\nB.ssl.truststore.password = {}\n"
    d = diff(load, BASE + security.format("trust-one") + jaas.format("s3cret-one"),
             BASE + security.format("trust-two") + jaas.format("s3cret-two"))
    assert d.restarts == ("A->B", "B->A")
    text = "\n".join(describe_diff(d))
    assert "sasl.jaas.config" in text and "ssl.truststore.password" in text
    for secret in ("s3cret", "trust-"):
        assert secret not in text
        assert all(secret not in detail for c in d.changed.values() for detail in c.details.values())
