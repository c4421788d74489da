"""A flow's own MM2 classes read from the file: found on plugin.path, configured with the flow's connector
config as MM2 configures them; MM2's own classes stay sparkmirror's Python rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkmirror.config import keys
from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.properties import parse_properties
from sparkmirror.errors import ConfigError
from sparkmirror.policy import plugged
from sparkmirror.policy.filters import GroupFilter, TopicFilter
from sparkmirror.policy.plugged import (
    PluggedConfigPropertyFilter,
    PluggedGroupFilter,
    PluggedReplicationPolicy,
    PluggedTopicFilter,
    use_class_host,
)
from sparkmirror.policy.replication import DefaultReplicationPolicy

TWO = "clusters = a, b\na.bootstrap.servers = servers-one\nb.bootstrap.servers = servers-two\na->b.enabled = true\n"


def load(text: str) -> MirrorMakerConfig:
    return MirrorMakerConfig.from_properties(parse_properties(text, "mm2.properties"), {})


@pytest.fixture
def plugins(tmp_path) -> Path:
    """A plugin.path folder with the classes' files (finding them is all a load does)."""
    for name in ("com/acme/Naming.class", "com/acme/Filters.class"):
        (tmp_path / "acme" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "acme" / name).write_bytes(b"\xca\xfe\xba\xbe")
    return tmp_path


def test_the_files_classes_replace_mm2s_rules(plugins):
    flow = load(TWO + f"plugin.path = {plugins}\nreplication.policy.class = com.acme.Naming\n"
                      f"a->b.topic.filter.class = com.acme.Filters\na->b.group.filter.class = com.acme.Filters\n"
                      f"a->b.config.property.filter.class = com.acme.Filters\n").flow("a", "b")
    assert [(c.key, c.interface) for c in flow.custom_classes] == [
        ("replication.policy.class", "ReplicationPolicy"), ("a->b.topic.filter.class", "TopicFilter"),
        ("a->b.group.filter.class", "GroupFilter"), ("a->b.config.property.filter.class", "ConfigPropertyFilter")]
    assert isinstance(flow.policy, PluggedReplicationPolicy)
    assert isinstance(flow.topic_filter, PluggedTopicFilter)
    assert isinstance(flow.group_filter, PluggedGroupFilter)
    assert isinstance(flow.config_filter, PluggedConfigPropertyFilter)
    assert flow.replication_policy == "com.acme.Naming"


def test_a_class_is_configured_with_the_flows_connector_config_and_both_aliases(plugins):
    flow = load(TWO + f"plugin.path = {plugins}\na->b.topic.filter.class = com.acme.Filters\n"
                      "a->b.acme.prefix = eu-\nreplication.policy.separator = _\nunrelated.top.level = x\n"
                ).flow("a", "b")
    configs = dict(flow.custom_classes[0].configs)
    assert configs["acme.prefix"] == "eu-"  # a flow's own keys reach it, as MM2's connector config holds them
    assert configs["replication.policy.separator"] == "_"
    assert (configs[keys.SOURCE_CLUSTER_ALIAS], configs[keys.TARGET_CLUSTER_ALIAS]) == ("a", "b")
    assert "unrelated.top.level" not in configs  # MM2 keeps only the connector's own top-level keys
    assert flow.custom_classes[0].plugin_path == tuple(str(p) for p in (plugins, plugins / "acme"))


def test_a_flows_own_keys_are_its_classes_and_not_unused(plugins):
    text = TWO + "a->b.acme.prefix = eu-\n"
    assert load(text).unused_keys == ("a->b.acme.prefix",)
    assert load(text + f"plugin.path = {plugins}\na->b.topic.filter.class = com.acme.Filters\n").unused_keys == ()


def test_mm2s_own_classes_stay_sparkmirrors_rules(plugins):
    flow = load(TWO + f"a->b.topic.filter.class = {keys.DEFAULT_PLUGIN_CLASSES[keys.TOPIC_FILTER_CLASS]}\n"
                      f"replication.policy.class = {keys.DEFAULT_REPLICATION_POLICY}\n").flow("a", "b")
    assert flow.custom_classes == ()
    assert isinstance(flow.policy, DefaultReplicationPolicy)
    assert isinstance(flow.topic_filter, TopicFilter) and isinstance(flow.group_filter, GroupFilter)


def test_a_class_missing_from_plugin_path_is_a_problem_naming_its_key(plugins):
    with pytest.raises(ConfigError, match="a->b.group.filter.class: class 'com.acme.Other' was not found on "
                                          "plugin.path"):
        load(TWO + f"plugin.path = {plugins}\na->b.group.filter.class = com.acme.Other\n")


class _NamingHost:
    """A policy class that keeps names (`keep`) or prefixes them, as the JVM would answer."""

    def __init__(self, keep: bool) -> None:
        self.keep = keep

    def call(self, spec, method: str, *args: str):
        assert method == "formatRemoteTopic"
        return args[1] if self.keep else f"{args[0]}.{args[1]}"


@pytest.mark.parametrize("keep", [True, False])
def test_a_policy_of_the_files_own_gets_provenance_when_it_keeps_names(plugins, keep):
    saved = list(plugged._host)
    plugged.plugged.cache_clear()
    use_class_host(_NamingHost(keep))
    try:
        flow = load(TWO + f"plugin.path = {plugins}\nreplication.policy.class = com.acme.Naming\n").flow("a", "b")
        assert flow.provenance_enabled is keep
    finally:
        plugged._host[:] = saved
        plugged.plugged.cache_clear()
