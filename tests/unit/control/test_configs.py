from sparkmirror.config.keys import DEFAULT_CONFIG_PROPERTIES_EXCLUDE
from sparkmirror.control.configs import ConfigAlteration, plan_config_alterations, plan_topic_config_sync
from sparkmirror.model import TopicConfigEntry
from sparkmirror.policy.filters import ConfigPropertyFilter

MM2_DEFAULT_EXCLUDE = tuple(p.strip() for p in DEFAULT_CONFIG_PROPERTIES_EXCLUDE.split(","))


def entry(name, value, default=False):
    return TopicConfigEntry(name, value, default)


def test_a_changed_source_value_is_set_on_the_target():
    source = [entry("retention.bytes", "1048576"), entry("cleanup.policy", "compact")]
    target = [entry("retention.bytes", "-1", default=True), entry("cleanup.policy", "compact")]
    assert plan_config_alterations(source, target, ConfigPropertyFilter()) == (
        ConfigAlteration("retention.bytes", "SET", "1048576"),)


def test_a_config_missing_from_the_target_view_is_set():
    source = [entry("retention.bytes", "1048576")]
    assert plan_config_alterations(source, [], ConfigPropertyFilter()) == (
        ConfigAlteration("retention.bytes", "SET", "1048576"),)


def test_an_excluded_config_is_left_alone_on_the_target_even_when_it_differs():
    source = [entry("delete.retention.ms", "1000"), entry("retention.bytes", "10")]
    target = [entry("delete.retention.ms", "86400000", default=True), entry("retention.bytes", "10")]
    config_filter = ConfigPropertyFilter((r"delete\.retention\.ms",))
    assert plan_config_alterations(source, target, config_filter) == ()

    target_override = [entry("delete.retention.ms", "5"), entry("retention.bytes", "10")]
    source_default = [entry("delete.retention.ms", "86400000", default=True), entry("retention.bytes", "10")]
    assert plan_config_alterations(source_default, target_override, config_filter) == ()


def test_a_target_side_edit_of_a_synced_config_is_reverted():
    source = [entry("retention.bytes", "1048576")]
    target = [entry("retention.bytes", "999")]
    assert plan_config_alterations(source, target, ConfigPropertyFilter()) == (
        ConfigAlteration("retention.bytes", "SET", "1048576"),)


def test_defaults_from_target_reset_a_target_override_of_a_config_at_default_on_the_source():
    source = [entry("retention.ms", "604800000", default=True), entry("segment.ms", "604800000", default=True)]
    target = [entry("retention.ms", "1000"), entry("segment.ms", "604800000", default=True)]
    config_filter = ConfigPropertyFilter(use_defaults_from="target")
    assert plan_config_alterations(source, target, config_filter) == (ConfigAlteration("retention.ms", "DELETE"),)


def test_defaults_from_target_do_not_delete_what_the_target_does_not_report():
    source = [entry("retention.ms", "604800000", default=True)]
    assert plan_config_alterations(source, [], ConfigPropertyFilter()) == ()


def test_defaults_from_source_copy_source_defaults():
    source = [entry("retention.ms", "604800000", default=True), entry("segment.ms", "604800000", default=True)]
    target = [entry("retention.ms", "86400000", default=True), entry("segment.ms", "604800000", default=True)]
    config_filter = ConfigPropertyFilter(use_defaults_from="source")
    assert plan_config_alterations(source, target, config_filter) == (
        ConfigAlteration("retention.ms", "SET", "604800000"),)


def test_nothing_is_planned_when_the_target_already_matches():
    source = [entry("cleanup.policy", "compact"), entry("retention.bytes", "10"),
              entry("retention.ms", "604800000", default=True)]
    target = [entry("cleanup.policy", "compact"), entry("retention.bytes", "10"),
              entry("retention.ms", "604800000", default=True)]
    assert plan_config_alterations(source, target, ConfigPropertyFilter()) == ()
    assert plan_config_alterations(source, target, ConfigPropertyFilter(use_defaults_from="source")) == ()


def test_mm2_default_excludes_keep_broker_sensitive_configs_out():
    source = [entry("min.insync.replicas", "2"), entry("unclean.leader.election.enable", "true"),
              entry("message.timestamp.type", "LogAppendTime"),
              entry("leader.replication.throttled.replicas", "0:1"),
              entry("follower.replication.throttled.replicas", "0:1"),
              entry("message.timestamp.difference.max.ms", "1000"),
              entry("retention.bytes", "10")]
    target = [entry("min.insync.replicas", "1", default=True),
              entry("unclean.leader.election.enable", "false", default=True)]
    assert plan_config_alterations(source, target, ConfigPropertyFilter(MM2_DEFAULT_EXCLUDE)) == (
        ConfigAlteration("retention.bytes", "SET", "10"),)


def test_alterations_come_in_name_order():
    source = [entry("segment.bytes", "1000"), entry("cleanup.policy", "compact"), entry("retention.bytes", "1")]
    names = [a.name for a in plan_config_alterations(source, [], ConfigPropertyFilter())]
    assert names == ["cleanup.policy", "retention.bytes", "segment.bytes"]


def test_topic_sync_is_keyed_by_remote_topic_and_skips_unchanged_and_missing_remote_topics():
    source_configs = {"orders": [entry("retention.bytes", "10")],
                      "payments": [entry("retention.bytes", "20")],
                      "audit": [entry("retention.bytes", "30")]}
    target_configs = {"A.orders": [entry("retention.bytes", "-1", default=True)],
                      "A.payments": [entry("retention.bytes", "20")]}
    remote_topics = {"orders": "A.orders", "payments": "A.payments", "audit": "A.audit"}
    plan = plan_topic_config_sync(source_configs, target_configs, remote_topics, ConfigPropertyFilter())
    assert plan == {"A.orders": (ConfigAlteration("retention.bytes", "SET", "10"),)}


def test_topic_sync_skips_source_topics_whose_configs_were_not_observed():
    plan = plan_topic_config_sync({}, {"A.orders": []}, {"orders": "A.orders"}, ConfigPropertyFilter())
    assert plan == {}
