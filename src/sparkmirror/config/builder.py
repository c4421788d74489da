"""Builds the typed model from a properties file's flat map, collecting every problem before it fails.

Every map is resolved with MM2's own rules (see config/resolution.py): a flow setting `k` of A->B comes from
`A->B.k`, else the top-level `k`, else MM2's default; each client of a flow gets its settings the way
MirrorConnectorConfig builds them, and its librdkafka translation with them. Values from config providers are
resolved here and never shown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import NamedTuple

from sparkmirror.config import keys
from sparkmirror.config.client_settings import HIDDEN, ClientSettings
from sparkmirror.config.flow_settings import FLOW_KEYS, FLOW_SETTINGS, Schedule, comma_list
from sparkmirror.config.model import ClusterConfig, FlowConfig, reset_policy
from sparkmirror.config.properties import Properties
from sparkmirror.config.providers import resolve_providers
from sparkmirror.config.resolution import (
    client_props,
    cluster_admin_props,
    cluster_props,
    connector_props,
    worker_producer_props,
)
from sparkmirror.errors import ConfigError

_FLOW_KEY = re.compile(r"^([^.\s]+?)->([^.\s]+?)\.(.+)$")
_ALIAS = re.compile(r"^[A-Za-z0-9_\-]+$")
_POLICIES = {keys.DEFAULT_REPLICATION_POLICY: "default", keys.IDENTITY_REPLICATION_POLICY: "identity"}


class Built(NamedTuple):
    """What a properties file yields: the fields of config/mm2.MirrorMakerConfig."""

    clusters: Mapping[str, ClusterConfig]
    flows: tuple[FlowConfig, ...]
    spark: Mapping[str, str]
    unused_keys: tuple[str, ...]
    warnings: tuple[str, ...]
    source: str
    metrics_port: int | None


def build(props: Properties, env: Mapping[str, str] | None = None) -> Built:
    """Build and validate; raises ConfigError listing every problem found, in file order."""
    return _Builder(props, env).build()


@dataclass(frozen=True, slots=True)
class _Sourced:
    """A value and the file key it came from, carried through MM2's resolution rules."""

    value: str
    key: str


# Flow-level prefixes of client settings (MirrorConnectorConfig and Connect's client overrides).
_FLOW_CLIENT_PREFIXES = tuple(
    [f"{r}." for r in keys.CLIENT_ROLES] + [f"{s}.{r}." for s in ("source", "target") for r in keys.CLIENT_ROLES]
    + [keys.SOURCE_CLUSTER_PREFIX, keys.TARGET_CLUSTER_PREFIX])


def _is_connector_key(key: str) -> bool:
    """Top-level keys kept in every flow's connector map (MM2: the connectors' ConfigDef names)."""
    return key in FLOW_KEYS or key in keys.CONNECT_CONNECTOR_KEYS or keys.is_client_key(key)


class _Builder:
    """Collects every problem while building, so validation reports them all at once."""

    def __init__(self, props: Properties, env: Mapping[str, str] | None) -> None:
        self.props = props
        self.raw = props.values
        resolved = resolve_providers(props.values, env)
        self.v = resolved.values
        self.secret = resolved.secret_keys
        self.problems: list[str] = []
        self.problem_lines: list[int] = []  # parallel to problems, to report them in file order
        self.warnings: list[str] = []
        for key, text in resolved.problems:
            self.problem(key, text)
        self.sourced = {k: _Sourced(v, k) for k, v in self.v.items()}

    # -- messages ------------------------------------------------------------------------------------
    def where(self, key: str) -> str:
        return f"{key} ({self.props.where(key)})" if key in self.props.lines else key

    def problem(self, key: str, text: str) -> None:
        message = f"{key}: {text} ({self.props.where(key)})"
        if message not in self.problems:  # a top-level key is resolved once per flow
            self.problems.append(message)
            self.problem_lines.append(self.props.lines.get(key, 1 << 30))  # keys not in the file last

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    def shown(self, key: str) -> str:
        """A value fit for a message: the text as written for provider values, nothing for secrets."""
        if keys.is_sensitive(key):
            return HIDDEN
        return self.raw.get(key, "") if key in self.secret else self.v.get(key, "")

    # -- build ---------------------------------------------------------------------------------------
    def build(self) -> Built:
        self._duplicates()
        aliases = self._aliases()
        clusters = {a: self._cluster(a) for a in aliases}
        if keys.CLUSTERS in self.v:
            self._flow_keys(aliases)
        self._security_protocols()
        flows = [self._flow(s, t) for s in aliases for t in aliases if s != t]
        unused = self._unused_keys(aliases)
        metrics_port = self._metrics_port()
        if self.problems:
            ordered = sorted(zip(self.problem_lines, range(len(self.problems)), self.problems, strict=True))
            raise ConfigError([p for _, _, p in ordered], self.props.source)
        spark = {k: v for k, v in self.v.items() if k.startswith(keys.SPARK_PREFIX)}
        return Built(
            clusters=MappingProxyType(clusters), flows=tuple(flows), spark=MappingProxyType(spark),
            unused_keys=tuple(sorted(unused)), warnings=tuple(self.warnings), source=self.props.source,
            metrics_port=metrics_port)

    def _metrics_port(self) -> int | None:
        """The process's metrics and web view port (`sparkmirror.metrics.port`; 0 = any free port)."""
        raw = self.v.get(keys.METRICS_PORT)
        if raw is None or not raw.strip():
            return None
        try:
            port = int(raw.strip())
        except ValueError:
            port = -1
        if not 0 <= port <= 65535:
            self.problem(keys.METRICS_PORT, f"'{raw}' is not a port number; use 0-65535 (0: any free port), "
                                            f"or remove it to serve no metrics")
            return None
        return port

    def _duplicates(self) -> None:
        for key, occurrences in self.props.duplicates.items():
            lines = ", ".join(str(line) for line, _ in occurrences)
            if len({value for _, value in occurrences}) > 1:
                self.problem(key, f"set {len(occurrences)} times with different values (lines {lines}); "
                                  f"MM2 silently uses the last one. Keep one")
            else:
                self.warn(f"{key} is set {len(occurrences)} times with the same value (lines {lines})")

    def _aliases(self) -> tuple[str, ...]:
        raw = self.v.get(keys.CLUSTERS)
        if raw is None:
            self.problem(keys.CLUSTERS, "missing; list the cluster aliases, e.g. 'clusters = A, B'")
            return ()
        aliases = comma_list(raw)
        if not aliases:
            self.problem(keys.CLUSTERS, "no cluster alias listed")
        for a in aliases:
            if "#" in a:
                self.problem(keys.CLUSTERS, f"alias '{a}' contains '#': in a properties file '#' starts a "
                                            f"comment only at the beginning of a line; move the comment to its "
                                            f"own line")
            elif not _ALIAS.match(a):
                self.problem(keys.CLUSTERS, f"alias '{a}' may only use letters, digits, '_' and '-'")
        if len(set(aliases)) != len(aliases):
            self.problem(keys.CLUSTERS, "an alias is listed twice")
        return tuple(a for a in dict.fromkeys(aliases) if _ALIAS.match(a))

    def _settings(self, sourced: Mapping[str, _Sourced], role: str) -> ClientSettings:
        return ClientSettings({k: s.value for k, s in sourced.items()}, role,
                              origins={k: self.where(s.key) for k, s in sourced.items()},
                              hidden=frozenset(k for k, s in sourced.items() if s.key in self.secret))

    def _cluster(self, alias: str) -> ClusterConfig:
        bootstrap = cluster_props(self.sourced, alias).get(keys.BOOTSTRAP_SERVERS)
        if bootstrap is None or not bootstrap.value.strip():
            self.problem(f"{alias}.{keys.BOOTSTRAP_SERVERS}", f"missing; every cluster in "
                         f"'{keys.CLUSTERS}' needs one, e.g. {alias}.bootstrap.servers = host:9092")
        return ClusterConfig(alias=alias, bootstrap_servers=bootstrap.value.strip() if bootstrap else "",
                             admin=self._settings(cluster_admin_props(self.sourced, alias), "admin"))

    def _flow_keys(self, aliases: tuple[str, ...]) -> None:
        for k in self.v:
            m = _FLOW_KEY.match(k)
            if not m:
                continue
            src, tgt, _ = m.groups()
            for alias in dict.fromkeys((src, tgt)):
                if alias not in aliases:
                    self.problem(k, f"unknown cluster alias '{alias}'; '{keys.CLUSTERS}' lists: "
                                    f"{', '.join(aliases) or '(none)'}")
            if src == tgt and src in aliases:
                self.problem(k, f"a flow from cluster '{src}' to itself is not allowed")

    def _security_protocols(self) -> None:
        for k, v in self.v.items():
            is_protocol = k == keys.SECURITY_PROTOCOL or k.endswith("." + keys.SECURITY_PROTOCOL)
            if is_protocol and v.strip().upper() not in keys.SECURITY_PROTOCOLS:
                self.problem(k, f"'{self.shown(k)}' is not a security protocol; use one of "
                                f"{', '.join(keys.SECURITY_PROTOCOLS)}")

    # -- one flow ------------------------------------------------------------------------------------
    def _flow(self, source: str, target: str) -> FlowConfig:
        conn = connector_props(self.sourced, source, target, _is_connector_key)
        self._deprecated_aliases(conn)
        r = _FlowReader(self, conn)
        settings = {s.field: s.read(r, s) for s in FLOW_SETTINGS}
        self._no_effect(conn)
        clients = self._clients(conn, target, settings["offset_syncs_topic_location"])
        consumer = clients["source_consumer"]
        try:
            reset: str | ConfigError = reset_policy(consumer, consumer.origin)
        except ConfigError as exc:  # refused when the flow is about to run (it may be disabled, or never run)
            reset = exc
        flow = FlowConfig(source=source, target=target, **settings, **clients, _reset_policy=reset)
        r.plugin_classes()
        r.offset_syncs_consistency(flow)
        return flow

    def _clients(self, conn: Mapping[str, _Sourced], target: str, location: str) -> dict[str, ClientSettings]:
        """Each client of the flow, resolved as MM2 resolves that client and translated for its role."""
        resolved = {
            "source_consumer": ("consumer", client_props(conn, "source", "consumer")),
            "source_admin": ("admin", client_props(conn, "source", "admin")),
            "target_admin": ("admin", client_props(conn, "target", "admin")),
            "target_producer": ("producer", worker_producer_props(self.sourced, conn, target)),
            "offset_syncs_producer": ("producer", client_props(conn, location, "producer")),
            "heartbeats_producer": ("producer", client_props(conn, "target", "producer")),  # MM2's heartbeat task
        }
        return {name: self._settings(props, role) for name, (role, props) in resolved.items()}

    def _no_effect(self, conn: Mapping[str, _Sourced]) -> None:
        """Settings sparkmirror reads but does not act on: a warning naming the key as written, and why."""
        for setting in FLOW_SETTINGS:
            for key in setting.file_keys if setting.no_effect else ():
                if key in conn:
                    self.warn(f"{self.where(conn[key].key)} has no effect in sparkmirror: {setting.no_effect}")

    def _deprecated_aliases(self, conn: dict[str, _Sourced]) -> None:
        for alias, new in keys.DEPRECATED_ALIASES.items():
            if alias not in conn:
                continue
            old = conn.pop(alias)
            if new in conn:
                self.warn(f"{self.where(old.key)} is ignored because {self.where(conn[new].key)} is set "
                          f"('{alias}' was removed in MM2 4.0)")
            else:
                conn[new] = old
                self.warn(f"{self.where(old.key)} is deprecated (removed in MM2 4.0); rename it to "
                          f"'{old.key[:-len(alias)]}{new}'")

    def _unused_keys(self, aliases: tuple[str, ...]) -> set[str]:
        unused = set()
        for k in self.v:
            m = _FLOW_KEY.match(k)
            if m:
                rest = m.group(3)
                used = rest in FLOW_KEYS or rest.startswith(_FLOW_CLIENT_PREFIXES)
            elif any(k.startswith(a + ".") for a in aliases):
                rest = k.split(".", 1)[1]
                used = keys.is_client_key(rest) or rest.startswith(tuple(f"{r}." for r in keys.CLIENT_ROLES))
            else:
                used = (k in (keys.CLUSTERS, keys.METRICS_PORT) or k in FLOW_KEYS or keys.is_client_key(k)
                        or k.startswith((keys.CONFIG_PROVIDERS, keys.SPARK_PREFIX, "replication.policy")))
            if not used:
                unused.add(k)
        return unused


class _FlowReader:
    """Typed reads from one flow's connector map; problems name the key as written in the file."""

    def __init__(self, builder: _Builder, conn: Mapping[str, _Sourced]) -> None:
        self.b = builder
        self.conn = conn

    def get(self, key: str) -> _Sourced | None:
        return self.conn.get(key)

    def bool(self, key: str, default: bool) -> bool:
        s = self.get(key)
        if s is None:
            return default
        value = s.value.strip().lower()
        if value not in ("true", "false"):
            self.b.problem(s.key, f"expected true or false, got '{self.b.shown(s.key)}'")
            return default
        return value == "true"

    def int(self, key: str, default: int | None, minimum: int, hint: str = "") -> int | None:
        s = self.get(key)
        if s is None:
            return default
        try:
            value = int(s.value.strip())
        except ValueError:
            self.b.problem(s.key, f"expected a whole number, got '{self.b.shown(s.key)}'")
            return default
        if value < minimum:
            self.b.problem(s.key, f"must be at least {minimum}, got {value}{hint}")
            return default
        return value

    def replication_factor(self, key: str, default: int) -> int:
        value = self.int(key, default, minimum=-1)
        if value == 0:
            self.b.problem(self.conn[key].key, "must be -1 (the broker's default) or at least 1")
            return default
        return value if value is not None else default

    def choice(self, key: str, default: str, allowed: tuple[str, ...], case_sensitive: bool = False) -> str:
        s = self.get(key)
        if s is None:
            return default
        value = s.value.strip() if case_sensitive else s.value.strip().lower()
        if value not in allowed:
            self.b.problem(s.key, f"'{self.b.shown(s.key)}' is not one of: {', '.join(allowed)}")
            return default
        return value

    def patterns(self, key: str, default: tuple[str, ...]) -> tuple[str, ...]:
        s = self.get(key)
        if s is None:
            return default
        patterns = comma_list(s.value)
        for p in patterns:
            try:
                re.compile(p)
            except re.error as exc:
                self.b.problem(s.key, f"invalid regex '{p}': {exc}")
        return patterns

    def schedule(self, name: str, default: Schedule) -> Schedule:
        enabled = self.bool(f"{name}.enabled", default.enabled)
        interval = self.int(f"{name}.interval.seconds", default.interval_s, minimum=1,
                            hint=f"; to turn it off set '{name}.enabled = false'")
        return Schedule(enabled, interval if interval is not None else default.interval_s)

    def policy(self, key: str, default: str) -> str:
        s = self.get(key)
        if s is None:
            return default
        policy = _POLICIES.get(s.value.strip())
        if policy is None:
            self.b.problem(s.key, f"replication policy class '{self.b.shown(s.key)}' cannot be used; use "
                                  f"{keys.DEFAULT_REPLICATION_POLICY} or {keys.IDENTITY_REPLICATION_POLICY}")
            return default
        return policy

    def separator(self, key: str, default: str) -> str:
        s = self.get(key)
        if s is None:
            return default
        if not s.value:
            self.b.problem(s.key, "the separator must not be empty")
            return default
        return s.value

    def plugin_classes(self) -> None:
        for key, default in keys.DEFAULT_PLUGIN_CLASSES.items():
            s = self.get(key)
            if s is not None and s.value.strip() != default:
                self.b.problem(s.key, f"custom class '{self.b.shown(s.key)}' cannot run here (only {default}); "
                                      f"express the rule with topics/groups/config.properties.exclude instead")

    def offset_syncs_consistency(self, flow: FlowConfig) -> None:
        """MM2 rejects offset-syncs settings when offset syncs are off; checkpoints then cannot run."""
        if flow.emit_offset_syncs_enabled:
            return
        off = self.conn[keys.EMIT_OFFSET_SYNCS_ENABLED]
        for key, s in self.conn.items():
            if key.startswith(keys.OFFSET_SYNCS_PREFIX):
                self.b.problem(s.key, f"is set while {off.key} = false; remove one of them")
        if flow.enabled and (flow.emit_checkpoints.enabled or flow.sync_group_offsets.enabled):
            self.b.warn(f"flow {flow.name}: no checkpoints or group offset syncs because {off.key} = false")
