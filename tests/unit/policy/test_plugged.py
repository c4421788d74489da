"""The file's own MM2 classes behind sparkmirror's policy and filter interfaces (the JVM is a port: here an
in-memory host answering as a suffix-naming policy and a prefix filter would)."""

from __future__ import annotations

import pytest

from sparkmirror.errors import ConfigError
from sparkmirror.policy import plugged
from sparkmirror.policy.filters import TopicFilter
from sparkmirror.policy.plugged import ClassSpec, check_class, use_class_host
from sparkmirror.policy.replication import is_cycle, should_replicate_topic

POLICY = ClassSpec("replication.policy.class", "com.example.Suffix", "ReplicationPolicy", (("k", "v"),), ())
FILTER = ClassSpec("A->B.topic.filter.class", "com.example.Prefix", "TopicFilter", (), ())


class SuffixHost:
    """Answers as Java classes would: `t` from A is `t--from-A`; topics starting `acme-` replicate."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, tuple[str, ...]]] = []

    def call(self, spec: ClassSpec, method: str, *args: str):
        self.calls.append((spec.class_name, method, args))
        sep = "--from-"
        answers = {
            "formatRemoteTopic": lambda a, t: f"{t}{sep}{a}",
            "topicSource": lambda t: t.rsplit(sep, 1)[1] if sep in t else None,
            "upstreamTopic": lambda t: t.rsplit(sep, 1)[0] if sep in t else None,
            "isInternalTopic": lambda t: t.startswith("__"),
            "isHeartbeatsTopic": lambda t: t.startswith("beats"),
            "shouldReplicateTopic": lambda t: t.startswith("acme-"),
            "toString": lambda: spec.class_name,
        }
        return answers[method](*args)


@pytest.fixture
def host():
    saved = list(plugged._host)
    plugged.plugged.cache_clear()
    host = SuffixHost()
    use_class_host(host)
    yield host
    plugged._host[:] = saved
    plugged.plugged.cache_clear()


def test_names_come_from_the_class(host):
    policy = plugged.plugged(POLICY)
    assert policy.format_remote_topic("A", "orders") == "orders--from-A"
    assert (policy.topic_source("orders--from-A"), policy.upstream_topic("orders--from-A")) == ("A", "orders")
    assert policy.topic_source("orders") is None


def test_each_question_is_asked_once(host):
    policy = plugged.plugged(POLICY)
    for _ in range(3):
        plugged.plugged(POLICY).format_remote_topic("A", "orders")
    assert plugged.plugged(POLICY) is policy
    assert host.calls == [("com.example.Suffix", "formatRemoteTopic", ("A", "orders"))]


def test_mm2s_rules_run_on_the_classes_names(host):
    policy, topics = plugged.plugged(POLICY), plugged.plugged(FILTER)
    assert is_cycle(policy, "orders--from-B--from-A", "B")
    assert not is_cycle(policy, "orders--from-A", "B")
    assert should_replicate_topic("acme-orders", topics, policy, "B")
    assert not should_replicate_topic("orders", topics, policy, "B")
    assert not should_replicate_topic("acme-orders--from-B", topics, policy, "B")  # would return to B
    assert should_replicate_topic("beats", TopicFilter(()), policy, "B")  # heartbeats, by the class's rule


def test_without_a_jvm_a_class_is_an_error_naming_its_key():
    saved = list(plugged._host)
    plugged._host.clear()
    plugged.plugged.cache_clear()
    try:
        with pytest.raises(ConfigError, match="replication.policy.class: 'com.example.Suffix' is a Java class"):
            check_class(POLICY)
        with pytest.raises(ConfigError, match="A->B.topic.filter.class"):
            plugged.plugged(FILTER).should_replicate_topic("x")
    finally:
        plugged._host[:] = saved


def test_a_spec_shows_its_key_and_class_never_its_config():
    secret = ClassSpec("k", "com.example.C", "TopicFilter", (("sasl.jaas.config", "password=hunter2"),), ())
    assert str(secret) == "k = com.example.C"
    assert "hunter2" not in repr(secret)
