"""The table of flow settings against FlowConfig, and the load warnings for settings sparkmirror does not act on."""

import dataclasses

import pytest

from sparkmirror.config.client_settings import ClientSettings
from sparkmirror.config.flow_settings import FIELD_KEYS, FLOW_KEYS, FLOW_SETTINGS, LIVE_FIELDS, Schedule
from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.model import FlowConfig
from sparkmirror.config.properties import parse_properties

TWO = "clusters = a, b\na.bootstrap.servers = servers-one\nb.bootstrap.servers = servers-two\n"
# Record shaping is read by config/transforms.py (lists of aliases with settings of their own, not one key each),
# the file's own classes by config/custom_classes.py.
_SHAPING_FIELDS = {"transforms", "errors_tolerance", "plugin_path", "sql_rules", "custom_classes"}
# The clusters' schema registries, read from `<alias>.sparkmirror.schema.registry.*` (a flow change when they change).
_REGISTRY_FIELDS = {"source_registry", "target_registry"}
_SETTING_FIELDS = [f for f in dataclasses.fields(FlowConfig) if f.compare and f.type != "ClientSettings"
                   and f.name not in {"source", "target", *_SHAPING_FIELDS, *_REGISTRY_FIELDS}]


def load(text: str) -> MirrorMakerConfig:
    return MirrorMakerConfig.from_properties(parse_properties(text, "mm2.properties"), {})


def test_the_table_and_flowconfig_name_the_same_settings_in_the_same_order():
    assert [s.field for s in FLOW_SETTINGS] == [f.name for f in _SETTING_FIELDS]
    assert len({s.key for s in FLOW_SETTINGS}) == len(FLOW_SETTINGS)


def test_every_other_flowconfig_field_is_a_client_or_derived():
    others = {f.name for f in dataclasses.fields(FlowConfig)} - {s.field for s in FLOW_SETTINGS}
    clients = {f.name for f in dataclasses.fields(FlowConfig) if f.type in ("ClientSettings", ClientSettings)}
    derived = {f.name for f in dataclasses.fields(FlowConfig) if not f.compare}
    assert others == {"source", "target"} | clients | derived | _SHAPING_FIELDS | _REGISTRY_FIELDS
    # the others: settings of the target cluster's dedicated MM2 worker, not a flow's
    assert derived == {"_reset_policy", "exactly_once_source_support", "mm2_workers_group", "mm2_offsets_topic"}


def test_a_file_without_flow_settings_gives_the_tables_defaults():
    flow = load(TWO).flow("a", "b")
    assert {s.field: getattr(flow, s.field) for s in FLOW_SETTINGS} == {s.field: s.default for s in FLOW_SETTINGS}


def test_the_table_drives_known_keys_reload_labels_and_live_fields():
    assert {"topics", "emit.heartbeats.enabled", "emit.heartbeats.interval.seconds", "admin.timeout.ms",
            "topics.blacklist", "metric.names.formats"} <= FLOW_KEYS
    assert "emit.heartbeats" not in FLOW_KEYS  # a job's name alone is not a key
    assert FIELD_KEYS["max_offsets_per_trigger"] == "sparkmirror.max.offsets.per.trigger"
    assert FIELD_KEYS["sync_topic_acls"] == "sync.topic.acls"
    jobs = {s.field for s in FLOW_SETTINGS if isinstance(s.default, Schedule)}
    assert set(LIVE_FIELDS) == {"topics", "topics_exclude", "config_properties_exclude", "use_defaults_from",
                                "heartbeats_replication_enabled", "metric_names_formats", *jobs}


@pytest.mark.parametrize(("line", "text"), [
    ("admin.timeout.ms = 5000", "admin.timeout.ms (mm2.properties:4) has no effect in sparkmirror: its "
                                "librdkafka admin calls have timeouts of their own; remove it. It is MM2's bound on "
                                "its admin tasks, not an admin client setting, so no client is given it"),
    ("offset.lag.max = 0", "offset.lag.max (mm2.properties:4) has no effect in sparkmirror: offset syncs are "
                           "written from the record path's reports, one around every offset discontinuity, so "
                           "translation is exact rather than up to offset.lag.max records behind; remove it"),
    ("refresh.groups.interval.seconds = 5", "refresh.groups.interval.seconds (mm2.properties:4) has no effect in "
                                            "sparkmirror: the checkpoint job lists the source's consumer groups on "
                                            "every emit.checkpoints round; remove it"),
])
def test_settings_sparkmirror_does_not_act_on_are_a_warning_once(line: str, text: str):
    config = load(TWO + line + "\n")
    assert config.warnings == (text,)  # once, although every flow reads a top-level setting


def test_defaults_and_settings_acted_on_give_no_warning():
    config = load(TWO + "a->b.enabled = true\nsync.topic.acls.enabled = false\nemit.heartbeats.interval.seconds = 2\n"
                        "a->b.exactly.once.support = requested\ntasks.max = 2\n")
    assert config.warnings == ()


def test_the_metrics_port_is_process_wide_and_metric_names_formats_is_a_flow_setting():
    config = load(TWO + "sparkmirror.metrics.port = 0\nmetric.names.formats = legacy,new\n"
                        "b->a.metric.names.formats = new\n")
    assert config.metrics_port == 0 and config.unused_keys == ()
    assert config.flow("a", "b").metric_names_formats == "legacy,new"
    assert config.flow("b", "a").metric_names_formats == "new"
    assert load(TWO).metrics_port is None and load(TWO).flow("a", "b").metric_names_formats == "legacy"
