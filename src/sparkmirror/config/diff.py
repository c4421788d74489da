"""What changed between two configurations, flow by flow, and whether each change can be applied live.

Hot reload applies a new file without stopping flows it does not touch. A flow whose changes are all in
LIVE_FIELDS keeps running and is handed the new values (filters, periodic jobs); any other
change restarts that flow only. `spark.*` settings belong to the one SparkSession, so they need a
process restart. Client settings are compared by content, so a flow follows a change of its clusters'
`bootstrap.servers` (every flow client carries it). The heartbeats of pairs that are not running flows
(MirrorMakerConfig.heartbeat_only_pairs) are added, removed or, when what they write with changed, restarted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from sparkmirror.config.client_settings import ClientSettings
from sparkmirror.config.flow_settings import FIELD_KEYS, LIVE_FIELDS, Schedule
from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.model import FlowConfig

# Compared as equality compares flows: every setting and client, not values derived from them.
_COMPARED = tuple(f.name for f in dataclasses.fields(FlowConfig) if f.compare)
_CLIENT_FIELDS = frozenset(
    f.name for f in dataclasses.fields(FlowConfig) if f.type in ("ClientSettings", ClientSettings))


@dataclass(frozen=True, slots=True)
class FlowChange:
    """How one flow present in both configurations changed.

    `fields` are FlowConfig field names in declaration order; `restart` is False only when every one of them
    is in LIVE_FIELDS. `details` holds a printable note per field: old and new values for plain settings,
    only the changed key names for client settings (their values may be secrets).
    """

    fields: tuple[str, ...]
    restart: bool
    details: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class ConfigDiff:
    """Enabled flows of two configurations, by name (`A->B`); a flow enabled or disabled is added or removed.

    Each tuple follows the order of flows in the configuration (the old one for `removed`).
    `spark_keys` are the `spark.*` keys whose value differs; they need a process restart. `heartbeats_*` name
    the heartbeat-only pairs (`B->A`) to start, stop, or restart with new settings.
    """

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: Mapping[str, FlowChange] = field(default_factory=lambda: MappingProxyType({}))
    unchanged: tuple[str, ...] = ()
    spark_keys: tuple[str, ...] = ()
    heartbeats_added: tuple[str, ...] = ()
    heartbeats_removed: tuple[str, ...] = ()
    heartbeats_changed: tuple[str, ...] = ()

    @property
    def spark_changed(self) -> bool:
        """True when a `spark.*` setting changed: only a process restart applies it."""
        return bool(self.spark_keys)

    @property
    def is_empty(self) -> bool:
        """Nothing to apply: no flow or heartbeat pair added, removed or changed and no `spark.*` change."""
        return not (self.added or self.removed or self.changed or self.spark_keys or self.heartbeats_added
                    or self.heartbeats_removed or self.heartbeats_changed)

    @property
    def restarts(self) -> tuple[str, ...]:
        """Changed flows that must be restarted."""
        return tuple(name for name, change in self.changed.items() if change.restart)


def diff_configs(old: MirrorMakerConfig, new: MirrorMakerConfig,
                 target_clusters: tuple[str, ...] | None = None) -> ConfigDiff:
    """Compare the flows this process runs (enabled, restricted to `target_clusters` as `--clusters` does).

    Raises ConfigError when `target_clusters` names an alias one of the configurations does not define.
    """
    before = {f.name: f for f in old.enabled_flows(target_clusters)}
    after = {f.name: f for f in new.enabled_flows(target_clusters)}
    changed: dict[str, FlowChange] = {}
    unchanged: list[str] = []
    for name, flow in after.items():
        if name in before:
            change = _flow_change(before[name], flow)
            if change is None:
                unchanged.append(name)
            else:
                changed[name] = change
    beats_before = {p.name: p for p in old.heartbeat_only_pairs(target_clusters)}
    beats_after = {p.name: p for p in new.heartbeat_only_pairs(target_clusters)}
    return ConfigDiff(
        added=tuple(n for n in after if n not in before),
        removed=tuple(n for n in before if n not in after),
        changed=MappingProxyType(changed),
        unchanged=tuple(unchanged),
        spark_keys=_changed_keys(old.spark, new.spark),
        heartbeats_added=tuple(n for n in beats_after if n not in beats_before),
        heartbeats_removed=tuple(n for n in beats_before if n not in beats_after),
        heartbeats_changed=tuple(n for n, p in beats_after.items()
                                 if n in beats_before and _beats(beats_before[n]) != _beats(p)),
    )


def _beats(pair: FlowConfig) -> tuple[object, ...]:
    """What a heartbeat-only pair writes, where and with which clients (control/heartbeats.HeartbeatEmitter)."""
    return (pair.emit_heartbeats, pair.heartbeats_topic, pair.heartbeats_topic_replication_factor,
            pair.heartbeats_producer, pair.target_admin)


def _flow_change(old: FlowConfig, new: FlowConfig) -> FlowChange | None:
    details: dict[str, str] = {}
    for name in _COMPARED:
        a, b = getattr(old, name), getattr(new, name)
        if a == b:  # ClientSettings compare by content (Mapping equality), not by where a value came from
            continue
        if isinstance(a, ClientSettings) and isinstance(b, ClientSettings):
            details[name] = f"({', '.join(_changed_keys(a, b))})"
        else:
            details[name] = f"('{_show(a)}' -> '{_show(b)}')"
    if not details:
        return None
    return FlowChange(fields=tuple(details), restart=not LIVE_FIELDS.issuperset(details),
                      details=MappingProxyType(details))


def _changed_keys(old: Mapping[str, str], new: Mapping[str, str]) -> tuple[str, ...]:
    """Keys added, removed or set to another value; never the values themselves."""
    return tuple(sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k)))


def _show(value: object) -> str:
    if isinstance(value, tuple):
        return ", ".join(str(v) for v in value)
    if isinstance(value, Schedule):
        return f"every {value.interval_s} s" if value.enabled else "disabled"
    if isinstance(value, bool):
        return str(value).lower()
    return "unset" if value is None else str(value)


def _label(name: str) -> str:
    """`target_producer` -> `target producer settings`; a plain field -> its file key."""
    if name in _CLIENT_FIELDS:
        return f"{name.replace('_', ' ')} settings"
    return FIELD_KEYS.get(name, name)


def describe_diff(diff: ConfigDiff) -> list[str]:
    """Log lines for a diff, one per added, removed or changed flow; secret values never appear."""
    lines = [f"flow {name} added" for name in diff.added]
    lines += [f"flow {name} removed" for name in diff.removed]
    for name, change in diff.changed.items():
        what = "; ".join(f"{_label(f)} changed {change.details.get(f, '')}".rstrip() for f in change.fields)
        lines.append(f"flow {name}: {what}, {'flow restarts' if change.restart else 'applied live'}")
    lines += [f"heartbeats of {name} started (not a flow this process runs)" for name in diff.heartbeats_added]
    lines += [f"heartbeats of {name} stopped" for name in diff.heartbeats_removed]
    lines += [f"heartbeats of {name} restart with their new settings" for name in diff.heartbeats_changed]
    if diff.spark_keys:
        lines.append(f"spark settings changed ({', '.join(diff.spark_keys)}): they apply only after a "
                     f"process restart; the running session keeps the old values")
    return lines
