import pytest

from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.properties import parse_properties
from sparkmirror.errors import ConfigError

TWO_CLUSTERS = """\
# two clusters, one flow
clusters = A, B
A.bootstrap.servers = a1:9092,a2:9092
B.bootstrap.servers = b1:9092
A->B.enabled = true
A->B.topics = orders, payments.*
replication.factor = 1
A.consumer.max.poll.records = 500
A.security.protocol = PLAINTEXT
"""


def load(text: str) -> MirrorMakerConfig:
    return MirrorMakerConfig.from_properties(parse_properties(text, "mm2.properties"))


def test_two_cluster_file_resolves_flows_and_clusters():
    config = load(TWO_CLUSTERS)
    assert list(config.clusters) == ["A", "B"]
    assert config.cluster("A").bootstrap_servers == "a1:9092,a2:9092"
    [flow] = config.enabled_flows()
    assert (flow.source, flow.target, flow.topics) == ("A", "B", ("orders", "payments.*"))
    assert flow.replication_factor == 1
    b_to_a = next(f for f in config.flows if f.source == "B")
    assert not b_to_a.enabled  # flows are off unless enabled, as in MM2


def test_role_settings_merge_cluster_and_role_overrides():
    config = load(TWO_CLUSTERS)
    consumer = config.cluster("A").role_settings("consumer")
    assert consumer == {"bootstrap.servers": "a1:9092,a2:9092", "security.protocol": "PLAINTEXT",
                        "max.poll.records": "500"}
    assert "max.poll.records" not in config.cluster("A").role_settings("producer")


def test_flow_setting_beats_top_level():
    config = load(TWO_CLUSTERS + "topics = other\nB->A.enabled = true\n")
    flows = {f.name: f for f in config.enabled_flows()}
    assert flows["A->B"].topics == ("orders", "payments.*")
    assert flows["B->A"].topics == ("other",)


def test_default_topic_filters_are_mm2s():
    config = load("clusters = A, B\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\nA->B.enabled=true\n")
    [flow] = config.enabled_flows()
    assert flow.topics == (".*",)
    assert flow.topics_exclude == (r".*[\-\.]internal", r".*\.replica", "__.*")
    assert flow.replication_factor == 2


def test_every_problem_is_reported_with_key_and_line():
    text = ("clusters = A, B\n"
            "A.bootstrap.servers = a:1\n"
            "A->C.enabled = true\n"
            "A->B.topics = foo[\n"
            "A->A.enabled = true\n"
            "replication.factor = 0\n")
    with pytest.raises(ConfigError) as info:
        load(text)
    problems = info.value.problems
    assert any("B.bootstrap.servers: missing" in p for p in problems)
    assert any(p.startswith("A->C.enabled: unknown cluster alias 'C'") and "mm2.properties:3" in p for p in problems)
    assert any("A->B.topics: invalid regex 'foo['" in p and "mm2.properties:4" in p for p in problems)
    assert any("to itself" in p and "mm2.properties:5" in p for p in problems)
    assert any(p.startswith("replication.factor") for p in problems)
    assert len(problems) == 5


def test_missing_clusters_key():
    with pytest.raises(ConfigError, match="clusters: missing"):
        load("A.bootstrap.servers = a:1\n")


def test_unknown_top_level_keys_are_listed_not_fatal():
    config = load(TWO_CLUSTERS + "offset.storage.topic = x\nspark.master = local[1]\n")
    assert config.unknown_keys == ("offset.storage.topic",)
    assert config.spark == {"spark.master": "local[1]"}


def test_clusters_filter_restricts_to_targets():
    config = load(TWO_CLUSTERS + "B->A.enabled = true\n")
    assert [f.name for f in config.enabled_flows(("A",))] == ["B->A"]
    with pytest.raises(ConfigError, match="unknown cluster alias"):
        config.enabled_flows(("Z",))


def test_identity_policy_by_class_name_and_bad_class():
    identity = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
    config = load(TWO_CLUSTERS + f"replication.policy.class = {identity}\n")
    assert config.enabled_flows()[0].replication_policy == "identity"
    with pytest.raises(ConfigError, match="unsupported replication policy class"):
        load(TWO_CLUSTERS + "replication.policy.class = com.example.Mine\n")


def test_last_duplicate_key_wins_like_java():
    config = load(TWO_CLUSTERS + "A->B.topics = later\n")
    assert config.enabled_flows()[0].topics == ("later",)


def test_tasks_max_resolves_per_flow_and_must_be_positive():
    config = load(TWO_CLUSTERS + "tasks.max = 4\nA->B.tasks.max = 2\n")
    assert config.enabled_flows()[0].tasks_max == 2
    assert load(TWO_CLUSTERS).enabled_flows()[0].tasks_max is None
    with pytest.raises(ConfigError, match="tasks.max: must be at least 1"):
        load(TWO_CLUSTERS + "tasks.max = 0\n")
