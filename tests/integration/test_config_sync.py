"""Topic config sync (MM2 `sync.topic.configs`) and topic ids, against real brokers."""

from __future__ import annotations

import time

import pytest

from sparkmirror.config.keys import DEFAULT_CONFIG_PROPERTIES_EXCLUDE
from sparkmirror.control.config_sync import sync_topic_configs
from sparkmirror.control.configs import ConfigAlteration
from sparkmirror.errors import AdminOperationError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import TopicConfigEntry
from sparkmirror.policy.filters import ConfigPropertyFilter

from .topic_configs import alter, config

VISIBLE_TIMEOUT_S = 15.0
DELETE_TIMEOUT_S = 30.0
KAFKA_DEFAULT_RETENTION_MS = "604800000"
MM2_DEFAULT_EXCLUDE = tuple(p.strip() for p in DEFAULT_CONFIG_PROPERTIES_EXCLUDE.split(","))


def wait_until(observe, accept, timeout_s: float, what: str):
    """Poll `observe()` until `accept(value)`; return the value, or fail with the last one observed."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = observe()
        if accept(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}; last observed: {value!r}")
        time.sleep(0.1)


def wait_for_config(admin: ClusterAdmin, topic: str, key: str, value: str, is_default: bool = False) -> None:
    wait_until(lambda: config(admin, topic, key), lambda e: e == TopicConfigEntry(key, value, is_default),
               VISIBLE_TIMEOUT_S, f"{key}={value} (default={is_default}) on '{topic}' of cluster {admin.alias}")


@pytest.fixture
def admins(clusters) -> tuple[ClusterAdmin, ClusterAdmin]:
    return (ClusterAdmin("A", {"bootstrap.servers": clusters.source}),
            ClusterAdmin("B", {"bootstrap.servers": clusters.target}))


def test_sync_copies_filtered_configs_reverts_target_edits_and_follows_the_source(admins, create_topic, unique):
    source, target = admins
    topic, remote = f"cfg-{unique}", f"A.cfg-{unique}"
    create_topic("A", topic, 1, {"cleanup.policy": "compact", "retention.bytes": "1048576",
                                 "delete.retention.ms": "1000"})
    create_topic("B", remote, 1, {"delete.retention.ms": "7000"})
    config_filter = ConfigPropertyFilter(MM2_DEFAULT_EXCLUDE + (r"delete\.retention\.ms",))

    applied = sync_topic_configs(source, target, {topic: remote}, config_filter)

    assert applied == {remote: (ConfigAlteration("cleanup.policy", "SET", "compact"),
                                ConfigAlteration("retention.bytes", "SET", "1048576"))}
    wait_for_config(target, remote, "retention.bytes", "1048576")
    wait_for_config(target, remote, "cleanup.policy", "compact")
    assert config(target, remote, "delete.retention.ms") == TopicConfigEntry("delete.retention.ms", "7000", False)
    assert sync_topic_configs(source, target, {topic: remote}, config_filter) == {}

    alter(target, remote, ConfigAlteration("retention.bytes", "SET", "5"))
    wait_for_config(target, remote, "retention.bytes", "5")
    assert sync_topic_configs(source, target, {topic: remote}, config_filter) == {
        remote: (ConfigAlteration("retention.bytes", "SET", "1048576"),)}
    wait_for_config(target, remote, "retention.bytes", "1048576")

    alter(source, topic, ConfigAlteration("retention.bytes", "SET", "2097152"))
    wait_for_config(source, topic, "retention.bytes", "2097152")
    assert sync_topic_configs(source, target, {topic: remote}, config_filter) == {
        remote: (ConfigAlteration("retention.bytes", "SET", "2097152"),)}
    wait_for_config(target, remote, "retention.bytes", "2097152")
    assert config(target, remote, "delete.retention.ms") == TopicConfigEntry("delete.retention.ms", "7000", False)


def test_defaults_from_target_reset_a_target_override_to_the_target_default(admins, create_topic, unique):
    source, target = admins
    topic, remote = f"dft-{unique}", f"A.dft-{unique}"
    create_topic("A", topic, 1)
    create_topic("B", remote, 1, {"retention.ms": "1000"})

    applied = sync_topic_configs(source, target, {topic: remote}, ConfigPropertyFilter(MM2_DEFAULT_EXCLUDE))

    assert applied == {remote: (ConfigAlteration("retention.ms", "DELETE"),)}
    wait_for_config(target, remote, "retention.ms", KAFKA_DEFAULT_RETENTION_MS, is_default=True)
    assert sync_topic_configs(source, target, {topic: remote}, ConfigPropertyFilter(MM2_DEFAULT_EXCLUDE)) == {}


def test_defaults_from_source_copy_the_source_default_as_an_override(admins, create_topic, unique):
    source, target = admins
    topic, remote = f"dfs-{unique}", f"A.dfs-{unique}"
    create_topic("A", topic, 1)
    create_topic("B", remote, 1, {"retention.ms": "1000"})
    config_filter = ConfigPropertyFilter(MM2_DEFAULT_EXCLUDE, use_defaults_from="source")

    applied = sync_topic_configs(source, target, {topic: remote}, config_filter)

    assert applied == {remote: (ConfigAlteration("retention.ms", "SET", KAFKA_DEFAULT_RETENTION_MS),)}
    wait_for_config(target, remote, "retention.ms", KAFKA_DEFAULT_RETENTION_MS, is_default=False)
    assert sync_topic_configs(source, target, {topic: remote}, config_filter) == {}


def test_topics_missing_on_either_side_are_skipped(admins, create_topic, unique):
    source, target = admins
    topic = f"only-source-{unique}"
    create_topic("A", topic, 1, {"retention.bytes": "1048576"})
    remote_topics = {topic: f"A.{topic}", f"gone-{unique}": f"A.gone-{unique}"}
    assert sync_topic_configs(source, target, remote_topics, ConfigPropertyFilter()) == {}


def test_a_failed_topic_is_reported_by_name_after_the_others_are_applied(admins, create_topic, unique):
    source, target = admins
    good, bad = f"good-{unique}", f"bad-{unique}"
    create_topic("A", good, 1, {"retention.bytes": "1048576"})
    create_topic("A", bad, 1, {"max.compaction.lag.ms": "1000"})
    create_topic("B", f"A.{good}", 1)
    create_topic("B", f"A.{bad}", 1, {"min.compaction.lag.ms": "5000"})  # the broker requires min <= max
    config_filter = ConfigPropertyFilter((r"min\.compaction\.lag\.ms",))

    with pytest.raises(AdminOperationError) as caught:
        sync_topic_configs(source, target, {good: f"A.{good}", bad: f"A.{bad}"}, config_filter)

    assert f"alter configs of 'A.{bad}' on cluster 'B'" in str(caught.value)
    assert f"A.{good}" not in str(caught.value)
    assert "INVALID_CONFIG" in str(caught.value)
    wait_for_config(target, f"A.{good}", "retention.bytes", "1048576")


def test_invalid_alteration_names_topic_and_cluster(admins, create_topic, unique):
    _, target = admins
    topic = f"invalid-{unique}"
    create_topic("B", topic, 1)
    results = target.alter_topic_configs({topic: [ConfigAlteration("retention.bytes", "SET", "lots")],
                                          f"missing-{unique}": [ConfigAlteration("retention.bytes", "SET", "1")]})
    assert f"alter configs of '{topic}' on cluster 'B' failed" in str(results[topic])
    assert "INVALID_CONFIG" in str(results[topic])
    assert "UNKNOWN_TOPIC_OR_PART" in str(results[f"missing-{unique}"])


def test_topic_id_changes_when_a_topic_is_deleted_and_recreated(admins, create_topic, unique):
    source, _ = admins
    topic, missing = f"ids-{unique}", f"never-{unique}"
    create_topic("A", topic, 1)
    first = source.topic_ids([topic, missing])
    assert list(first) == [topic]
    assert len(first[topic]) == 22 and "+" not in first[topic] and "/" not in first[topic]  # Java's Uuid form

    assert source.delete_topics([topic, missing]) == {topic: None, missing: None}
    wait_until(lambda: (source.topic_ids([topic]), topic in source.topic_partitions()),
               lambda seen: seen == ({}, False), DELETE_TIMEOUT_S, f"'{topic}' to be deleted")
    create_topic("A", topic, 1)
    second = wait_until(lambda: source.topic_ids([topic]), lambda ids: topic in ids, VISIBLE_TIMEOUT_S,
                        f"'{topic}' to be re-created")
    assert second[topic] != first[topic]
