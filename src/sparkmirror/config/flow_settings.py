"""Every MM2 flow setting sparkmirror reads, in one table: its file key, FlowConfig field, default and parser,
whether a running flow takes a new value live, and why it has no effect here when it has none.

The table drives the builder (what is read and how), the known-key list (FLOW_KEYS), the reload diff (its key
names and LIVE_FIELDS) and the load warnings for settings sparkmirror does not act on. A new setting is a row
here plus its FlowConfig field; tests/unit/config/test_flow_settings.py fails when the two disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sparkmirror.config import keys


@dataclass(frozen=True, slots=True)
class Schedule:
    """A periodic MM2 job: `<name>.enabled` and `<name>.interval.seconds`."""

    enabled: bool
    interval_s: int


def comma_list(value: str) -> tuple[str, ...]:
    """A comma-separated MM2 list value, items stripped, empty items dropped."""
    return tuple(item.strip() for item in value.split(",") if item.strip())


class FlowReader(Protocol):
    """Typed reads of one flow's settings; a bad value is reported as a problem naming the key, and the default
    is used instead so that reading goes on and every problem is found."""

    def bool(self, key: str, default: bool) -> bool: ...

    def int(self, key: str, default: int | None, minimum: int, hint: str = "") -> int | None: ...

    def choice(self, key: str, default: str, allowed: tuple[str, ...], case_sensitive: bool = False) -> str: ...

    def patterns(self, key: str, default: tuple[str, ...]) -> tuple[str, ...]: ...

    def replication_factor(self, key: str, default: int) -> int: ...

    def schedule(self, name: str, default: Schedule) -> Schedule: ...

    def policy(self, key: str, default: str) -> str: ...

    def separator(self, key: str, default: str) -> str: ...


Read = Callable[[FlowReader, "FlowSetting"], Any]


@dataclass(frozen=True, slots=True)
class FlowSetting:
    """One flow setting. `key` is the name after `A->B.` (a job's name for a Schedule, which has two keys);
    `no_effect`, when set, says why sparkmirror does not act on it: a load warning when the file sets it."""

    key: str
    field: str
    default: Any
    read: Read
    live: bool = False
    no_effect: str = ""

    @property
    def file_keys(self) -> tuple[str, ...]:
        """The keys a file may set for this setting."""
        if isinstance(self.default, Schedule):
            return f"{self.key}.enabled", f"{self.key}.interval.seconds"
        return (self.key,)


def _bool(r: FlowReader, s: FlowSetting) -> bool:
    return r.bool(s.key, s.default)


def _patterns(r: FlowReader, s: FlowSetting) -> tuple[str, ...]:
    return r.patterns(s.key, s.default)


def _replication_factor(r: FlowReader, s: FlowSetting) -> int:
    return r.replication_factor(s.key, s.default)


def _schedule(r: FlowReader, s: FlowSetting) -> Schedule:
    return r.schedule(s.key, s.default)


def _policy(r: FlowReader, s: FlowSetting) -> str:
    return r.policy(s.key, s.default)


def _separator(r: FlowReader, s: FlowSetting) -> str:
    return r.separator(s.key, s.default)


def _int(minimum: int) -> Read:
    return lambda r, s: r.int(s.key, s.default, minimum)


def _choice(*allowed: str, case_sensitive: bool = False) -> Read:
    return lambda r, s: r.choice(s.key, s.default, allowed, case_sensitive)


def _job(name: str, no_effect: str = "") -> FlowSetting:
    """A periodic job: its field is its name with underscores; every job's schedule applies live."""
    return FlowSetting(name, name.replace(".", "_"), Schedule(*keys.DEFAULT_SCHEDULES[name]), _schedule, live=True,
                       no_effect=no_effect)


FLOW_SETTINGS: tuple[FlowSetting, ...] = (
    FlowSetting(keys.ENABLED, "enabled", False, _bool),
    FlowSetting(keys.TOPICS, "topics", (keys.DEFAULT_TOPICS,), _patterns, live=True),
    FlowSetting(keys.TOPICS_EXCLUDE, "topics_exclude", comma_list(keys.DEFAULT_TOPICS_EXCLUDE), _patterns, live=True),
    FlowSetting(keys.GROUPS, "groups", (keys.DEFAULT_GROUPS,), _patterns),
    FlowSetting(keys.GROUPS_EXCLUDE, "groups_exclude", comma_list(keys.DEFAULT_GROUPS_EXCLUDE), _patterns),
    FlowSetting(keys.CONFIG_PROPERTIES_EXCLUDE, "config_properties_exclude",
                comma_list(keys.DEFAULT_CONFIG_PROPERTIES_EXCLUDE), _patterns, live=True),
    FlowSetting(keys.USE_DEFAULTS_FROM, "use_defaults_from", "target", _choice("target", "source"), live=True),
    FlowSetting(keys.REPLICATION_POLICY_CLASS, "replication_policy", "default", _policy),  # default, identity, a class
    FlowSetting(keys.REPLICATION_POLICY_SEPARATOR, "separator", keys.DEFAULT_SEPARATOR, _separator),
    FlowSetting(keys.INTERNAL_TOPIC_SEPARATOR_ENABLED, "internal_topic_separator_enabled", True, _bool),
    FlowSetting(keys.REPLICATION_FACTOR, "replication_factor", keys.DEFAULT_REPLICATION_FACTOR, _replication_factor),
    FlowSetting(keys.OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR, "offset_syncs_topic_replication_factor",
                keys.DEFAULT_INTERNAL_TOPIC_REPLICATION_FACTOR, _replication_factor),
    FlowSetting(keys.CHECKPOINTS_TOPIC_REPLICATION_FACTOR, "checkpoints_topic_replication_factor",
                keys.DEFAULT_INTERNAL_TOPIC_REPLICATION_FACTOR, _replication_factor),
    FlowSetting(keys.HEARTBEATS_TOPIC_REPLICATION_FACTOR, "heartbeats_topic_replication_factor",
                keys.DEFAULT_INTERNAL_TOPIC_REPLICATION_FACTOR, _replication_factor),
    FlowSetting(keys.OFFSET_SYNCS_TOPIC_LOCATION, "offset_syncs_topic_location", "source",
                _choice("source", "target", case_sensitive=True)),
    FlowSetting(keys.EMIT_OFFSET_SYNCS_ENABLED, "emit_offset_syncs_enabled", True, _bool),
    FlowSetting(keys.OFFSET_LAG_MAX, "offset_lag_max", keys.DEFAULT_OFFSET_LAG_MAX, _int(0),
                no_effect="offset syncs are written from the record path's reports, one around every offset "
                          "discontinuity, so translation is exact rather than up to offset.lag.max records "
                          "behind; remove it"),
    FlowSetting(keys.HEARTBEATS_REPLICATION_ENABLED, "heartbeats_replication_enabled", True, _bool, live=True),
    # `required` is refused before a flow starts (runtime/capabilities.py), so it needs no warning here.
    FlowSetting(keys.EXACTLY_ONCE_SUPPORT, "exactly_once_support", "requested", _choice("requested", "required")),
    _job(keys.EMIT_HEARTBEATS),
    _job(keys.EMIT_CHECKPOINTS),
    _job(keys.SYNC_GROUP_OFFSETS),
    _job(keys.SYNC_TOPIC_CONFIGS),
    _job(keys.SYNC_TOPIC_ACLS),
    _job(keys.REFRESH_TOPICS),
    _job(keys.REFRESH_GROUPS, no_effect="the checkpoint job lists the source's consumer groups on every "
                                        "emit.checkpoints round; remove it"),
    # The longest one poll of sparkmirror's source waits (MM2: of its replication consumer); Spark's Kafka source
    # (sparkmirror.source.reader = spark-kafka) polls with its own. MM2's setting, not a consumer one.
    FlowSetting(keys.CONSUMER_POLL_TIMEOUT_MS, "consumer_poll_timeout_ms", keys.DEFAULT_CONSUMER_POLL_TIMEOUT_MS,
                _int(0)),
    FlowSetting(keys.ADMIN_TIMEOUT_MS, "admin_timeout_ms", keys.DEFAULT_ADMIN_TIMEOUT_MS, _int(1),
                no_effect="its librdkafka admin calls have timeouts of their own; remove it. It is MM2's bound "
                          "on its admin tasks, not an admin client setting, so no client is given it"),
    # MM2's tasks.max; here the most Spark tasks one micro-batch of the flow uses (None: all cores).
    FlowSetting(keys.TASKS_MAX, "tasks_max", None, _int(1)),
    FlowSetting(keys.MAX_OFFSETS_PER_TRIGGER, "max_offsets_per_trigger", None, _int(1)),
    # "auto" (on with the identity policy only) | "true" | "false"
    FlowSetting(keys.PROVENANCE_HEADER_ENABLED, "provenance_header", "auto", _choice("auto", "true", "false")),
    FlowSetting(keys.TRIGGER_MODE, "trigger_mode", keys.TRIGGER_MODES[0], _choice(*keys.TRIGGER_MODES)),
    # Spark refuses Real-Time Mode epochs shorter than spark.sql.streaming.realTimeMode.minBatchDuration.
    FlowSetting(keys.REAL_TIME_EPOCH_MS, "real_time_epoch_ms", keys.DEFAULT_REAL_TIME_EPOCH_MS, _int(5000)),
    FlowSetting(keys.REAL_TIME_BATCH_FETCHES, "real_time_batch_fetches", keys.DEFAULT_REAL_TIME_BATCH_FETCHES,
                _int(0)),
    FlowSetting(keys.SCHEMAS, "schemas", keys.SCHEMAS_MODES[0], _choice(*keys.SCHEMAS_MODES)),
    FlowSetting(keys.SCHEMAS_UNKNOWN_IDS, "schemas_unknown_ids", keys.SCHEMAS_UNKNOWN_IDS_CHOICES[0],
                _choice(*keys.SCHEMAS_UNKNOWN_IDS_CHOICES)),
    FlowSetting(keys.SOURCE_READER, "source_reader", keys.SOURCE_READERS[0], _choice(*keys.SOURCE_READERS)),
    FlowSetting(keys.ON_RECORDS_REMOVED, "on_records_removed", keys.ON_RECORDS_REMOVED_CHOICES[0],
                _choice(*keys.ON_RECORDS_REMOVED_CHOICES)),
    FlowSetting(keys.REPORT_INTERVAL_MS, "report_interval_ms", keys.DEFAULT_REPORT_INTERVAL_MS, _int(10)),
    FlowSetting(keys.MEASURE_LAG, "measure_lag", Schedule(*keys.DEFAULT_SCHEDULES[keys.MEASURE_LAG]), _schedule,
                live=True),
    # KIP-1280: `legacy` (MM2's kafka.connect.mirror names), `new` (kafka.connect:type=plugins) or both.
    FlowSetting(keys.METRIC_NAMES_FORMATS, "metric_names_formats", "legacy",
                _choice("legacy", "new", "legacy,new", "new,legacy"), live=True),
)

# Flow (connector) keys a file may hold; top-level ones apply to every flow, as in MM2. The plugin classes
# are checked by the builder.
FLOW_KEYS = frozenset({
    *(k for s in FLOW_SETTINGS for k in s.file_keys),
    *keys.DEFAULT_PLUGIN_CLASSES, *keys.DEPRECATED_ALIASES,
})
# Flow settings MM2 drops when set at the top level, and why: a top-level key reaches a flow only when it is
# named in one of the three connectors' ConfigDefs (MirrorMakerConfig.connectorBaseConfig keeps allConfigNames()).
# Checked against Kafka 4.3.1's connect-mirror jar (FLOW_KEYS minus allConfigNames(), less sparkmirror's own keys
# and the 3.x aliases MM2 4.0 removed).
TOP_LEVEL_IGNORED = {
    keys.USE_DEFAULTS_FROM: "only DefaultConfigPropertyFilter defines it, so MM2 keeps it for a flow only when it "
                            "is set per flow",
    keys.EXACTLY_ONCE_SUPPORT: "Connect's source connector settings define it, not MM2's connectors, so MM2 keeps "
                               "it for a flow only when it is set per flow",
}
# Fields a running flow reads again on each use; a setting added later restarts its flow unless marked live.
LIVE_FIELDS = frozenset(s.field for s in FLOW_SETTINGS if s.live)
# The file key of each field, so messages and log lines name what the user edits.
FIELD_KEYS = {s.field: s.key for s in FLOW_SETTINGS}
