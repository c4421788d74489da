"""The typed, frozen MM2 configuration model, built once from a properties file and validated.

Every map is resolved with MM2's own rules (see config/resolution.py): a flow setting `k` of A->B comes from
`A->B.k`, else the top-level `k`, else MM2's default; each client of a flow gets its settings the way
MirrorConnectorConfig builds them. Values from config providers are resolved here and never shown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from sparkmirror.config import keys
from sparkmirror.config.properties import Properties, read_properties
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
HIDDEN = "[hidden]"
_POLICIES = {keys.DEFAULT_REPLICATION_POLICY: "default", keys.IDENTITY_REPLICATION_POLICY: "identity"}


class ClientSettings(Mapping[str, str]):
    """Java client settings for one client, plus where each came from; repr never shows a value."""

    __slots__ = ("_values", "_origins", "_hidden")

    def __init__(self, values: Mapping[str, str] | None = None, origins: Mapping[str, str] | None = None,
                 hidden: frozenset[str] = frozenset()) -> None:
        self._values = MappingProxyType(dict(values or {}))
        self._origins = MappingProxyType(dict(origins or {}))
        self._hidden = hidden

    def __getitem__(self, key: str) -> str:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"ClientSettings({', '.join(sorted(self._values))})"

    def __hash__(self) -> int:
        """Consistent with Mapping's equality (by values; origins do not count), so FlowConfig hashes."""
        return hash(frozenset(self._values.items()))

    def origin(self, key: str) -> str:
        """The key as written in the file, with its line (for messages), e.g. `B.producer.acks (mm2:7)`."""
        return self._origins.get(key, key)

    def redacted(self) -> dict[str, str]:
        """Values safe to print: secrets and provider-resolved values replaced by a marker."""
        return {k: HIDDEN if k in self._hidden or keys.is_sensitive(k) else v for k, v in self._values.items()}


@dataclass(frozen=True, slots=True)
class Schedule:
    """A periodic MM2 job: `<name>.enabled` and `<name>.interval.seconds`."""

    enabled: bool
    interval_s: int


def _default_schedule(name: str) -> Schedule:
    return Schedule(*keys.DEFAULT_SCHEDULES[name])


def _list(value: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in value.split(",") if item.strip())


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """One cluster alias; `admin` is the cluster-wide admin client view (MM2's MirrorClientConfig)."""

    alias: str
    bootstrap_servers: str = field(repr=False)  # may come from a config provider
    admin: ClientSettings = field(default_factory=ClientSettings)


@dataclass(frozen=True, slots=True)
class FlowConfig:
    """One replication flow `source->target` with every MM2 setting resolved (MM2 4.3 defaults)."""

    source: str
    target: str
    enabled: bool = False
    topics: tuple[str, ...] = (keys.DEFAULT_TOPICS,)
    topics_exclude: tuple[str, ...] = _list(keys.DEFAULT_TOPICS_EXCLUDE)
    groups: tuple[str, ...] = (keys.DEFAULT_GROUPS,)
    groups_exclude: tuple[str, ...] = _list(keys.DEFAULT_GROUPS_EXCLUDE)
    config_properties_exclude: tuple[str, ...] = _list(keys.DEFAULT_CONFIG_PROPERTIES_EXCLUDE)
    use_defaults_from: str = "target"
    replication_policy: str = "default"  # "default" | "identity"
    separator: str = keys.DEFAULT_SEPARATOR
    internal_topic_separator_enabled: bool = True
    replication_factor: int = keys.DEFAULT_REPLICATION_FACTOR
    offset_syncs_topic_replication_factor: int = keys.DEFAULT_INTERNAL_TOPIC_REPLICATION_FACTOR
    checkpoints_topic_replication_factor: int = keys.DEFAULT_INTERNAL_TOPIC_REPLICATION_FACTOR
    heartbeats_topic_replication_factor: int = keys.DEFAULT_INTERNAL_TOPIC_REPLICATION_FACTOR
    offset_syncs_topic_location: str = "source"
    emit_offset_syncs_enabled: bool = True
    offset_lag_max: int = keys.DEFAULT_OFFSET_LAG_MAX
    heartbeats_replication_enabled: bool = True
    exactly_once_support: str = "requested"
    emit_heartbeats: Schedule = field(default_factory=lambda: _default_schedule(keys.EMIT_HEARTBEATS))
    emit_checkpoints: Schedule = field(default_factory=lambda: _default_schedule(keys.EMIT_CHECKPOINTS))
    sync_group_offsets: Schedule = field(default_factory=lambda: _default_schedule(keys.SYNC_GROUP_OFFSETS))
    sync_topic_configs: Schedule = field(default_factory=lambda: _default_schedule(keys.SYNC_TOPIC_CONFIGS))
    sync_topic_acls: Schedule = field(default_factory=lambda: _default_schedule(keys.SYNC_TOPIC_ACLS))
    refresh_topics: Schedule = field(default_factory=lambda: _default_schedule(keys.REFRESH_TOPICS))
    refresh_groups: Schedule = field(default_factory=lambda: _default_schedule(keys.REFRESH_GROUPS))
    consumer_poll_timeout_ms: int = keys.DEFAULT_CONSUMER_POLL_TIMEOUT_MS
    admin_timeout_ms: int = keys.DEFAULT_ADMIN_TIMEOUT_MS
    # MM2's tasks.max; here the most Spark tasks one micro-batch of the flow uses (None: all cores).
    tasks_max: int | None = None
    max_offsets_per_trigger: int | None = None
    # The flow's clients, each resolved as MM2 resolves it for the same role.
    source_consumer: ClientSettings = field(default_factory=ClientSettings)
    source_admin: ClientSettings = field(default_factory=ClientSettings)
    target_admin: ClientSettings = field(default_factory=ClientSettings)
    target_producer: ClientSettings = field(default_factory=ClientSettings)
    offset_syncs_producer: ClientSettings = field(default_factory=ClientSettings)  # on offset_syncs_topic_location
    heartbeats_producer: ClientSettings = field(default_factory=ClientSettings)  # MM2's heartbeat task: target
    provenance_header: str = "auto"  # "auto" (identity policy only) | "true" | "false"
    trigger_mode: str = keys.TRIGGER_MODES[0]
    real_time_epoch_ms: int = keys.DEFAULT_REAL_TIME_EPOCH_MS
    report_interval_ms: int = keys.DEFAULT_REPORT_INTERVAL_MS

    @property
    def provenance_enabled(self) -> bool:
        """Whether records carry the provenance header (see policy/provenance.py)."""
        if self.provenance_header == "auto":
            return self.replication_policy == "identity"
        return self.provenance_header == "true"

    @property
    def name(self) -> str:
        """MM2's name for a flow, `A->B`."""
        return f"{self.source}->{self.target}"


@dataclass(frozen=True, slots=True)
class MirrorMakerConfig:
    """Clusters and flows of one MM2 properties file, validated."""

    clusters: Mapping[str, ClusterConfig]
    flows: tuple[FlowConfig, ...]
    spark: Mapping[str, str] = field(default_factory=dict)
    unused_keys: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    source: str = "<string>"

    def enabled_flows(self, target_clusters: tuple[str, ...] | None = None) -> list[FlowConfig]:
        """Enabled flows, restricted to those whose target is listed (MM2's `--clusters`)."""
        if target_clusters:
            unknown = [c for c in target_clusters if c not in self.clusters]
            if unknown:
                raise ConfigError(
                    [f"--clusters names unknown cluster alias(es) {', '.join(unknown)}; "
                     f"the file defines: {', '.join(self.clusters)}"], self.source)
        return [f for f in self.flows
                if f.enabled and (not target_clusters or f.target in target_clusters)]

    def cluster(self, alias: str) -> ClusterConfig:
        """The cluster with that alias; ConfigError naming the defined aliases otherwise."""
        try:
            return self.clusters[alias]
        except KeyError:
            raise ConfigError([f"unknown cluster alias '{alias}'; the file defines: "
                               f"{', '.join(self.clusters)}"], self.source) from None

    def flow(self, source: str, target: str) -> FlowConfig:
        """The flow source->target (enabled or not)."""
        for f in self.flows:
            if (f.source, f.target) == (source, target):
                return f
        for alias in (source, target):
            self.cluster(alias)
        raise ConfigError([f"no flow {source}->{target}: a flow needs two different clusters"], self.source)

    @classmethod
    def from_properties(cls, props: Properties, env: Mapping[str, str] | None = None) -> MirrorMakerConfig:
        """Build and validate; raises ConfigError listing every problem found."""
        return _Builder(props, env).build()


def load_config(path: str | Path, env: Mapping[str, str] | None = None) -> MirrorMakerConfig:
    """Read a properties file and build the validated model."""
    return MirrorMakerConfig.from_properties(read_properties(path), env)


@dataclass(frozen=True, slots=True)
class _Sourced:
    """A value and the file key it came from, carried through MM2's resolution rules."""

    value: str
    key: str


# Flow (connector) settings this model reads; top-level ones apply to every flow, as in MM2.
_SCHEDULE_KEYS = {f"{n}{s}" for n in keys.DEFAULT_SCHEDULES for s in (".enabled", ".interval.seconds")}
FLOW_KEYS = frozenset({
    keys.ENABLED, keys.TOPICS, keys.TOPICS_EXCLUDE, keys.GROUPS, keys.GROUPS_EXCLUDE,
    keys.CONFIG_PROPERTIES_EXCLUDE, keys.USE_DEFAULTS_FROM, keys.REPLICATION_POLICY_CLASS,
    keys.REPLICATION_POLICY_SEPARATOR, keys.INTERNAL_TOPIC_SEPARATOR_ENABLED, keys.REPLICATION_FACTOR,
    keys.OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR, keys.CHECKPOINTS_TOPIC_REPLICATION_FACTOR,
    keys.HEARTBEATS_TOPIC_REPLICATION_FACTOR, keys.OFFSET_SYNCS_TOPIC_LOCATION, keys.EMIT_OFFSET_SYNCS_ENABLED,
    keys.OFFSET_LAG_MAX, keys.HEARTBEATS_REPLICATION_ENABLED, keys.EXACTLY_ONCE_SUPPORT, keys.TASKS_MAX,
    keys.CONSUMER_POLL_TIMEOUT_MS, keys.ADMIN_TIMEOUT_MS, keys.METRIC_NAMES_FORMATS, keys.MAX_OFFSETS_PER_TRIGGER,
    keys.PROVENANCE_HEADER_ENABLED, keys.TRIGGER_MODE, keys.REAL_TIME_EPOCH_MS, keys.REPORT_INTERVAL_MS,
    *keys.DEFAULT_PLUGIN_CLASSES, *keys.DEPRECATED_ALIASES, *_SCHEDULE_KEYS,
})
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
    def build(self) -> MirrorMakerConfig:
        self._duplicates()
        aliases = self._aliases()
        clusters = {a: self._cluster(a) for a in aliases}
        if keys.CLUSTERS in self.v:
            self._flow_keys(aliases)
        self._security_protocols()
        flows = [self._flow(s, t) for s in aliases for t in aliases if s != t]
        unused = self._unused_keys(aliases)
        if self.problems:
            ordered = sorted(zip(self.problem_lines, range(len(self.problems)), self.problems, strict=True))
            raise ConfigError([p for _, _, p in ordered], self.props.source)
        spark = {k: v for k, v in self.v.items() if k.startswith(keys.SPARK_PREFIX)}
        return MirrorMakerConfig(
            clusters=MappingProxyType(clusters), flows=tuple(flows), spark=MappingProxyType(spark),
            unused_keys=tuple(sorted(unused)), warnings=tuple(self.warnings), source=self.props.source)

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
        aliases = _list(raw)
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

    def _settings(self, sourced: Mapping[str, _Sourced]) -> ClientSettings:
        return ClientSettings(values={k: s.value for k, s in sourced.items()},
                              origins={k: self.where(s.key) for k, s in sourced.items()},
                              hidden=frozenset(k for k, s in sourced.items() if s.key in self.secret))

    def _cluster(self, alias: str) -> ClusterConfig:
        bootstrap = cluster_props(self.sourced, alias).get(keys.BOOTSTRAP_SERVERS)
        if bootstrap is None or not bootstrap.value.strip():
            self.problem(f"{alias}.{keys.BOOTSTRAP_SERVERS}", f"missing; every cluster in "
                         f"'{keys.CLUSTERS}' needs one, e.g. {alias}.bootstrap.servers = host:9092")
        return ClusterConfig(alias=alias, bootstrap_servers=bootstrap.value.strip() if bootstrap else "",
                             admin=self._settings(cluster_admin_props(self.sourced, alias)))

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
        d = FlowConfig(source=source, target=target)
        location = r.choice(keys.OFFSET_SYNCS_TOPIC_LOCATION, d.offset_syncs_topic_location, ("source", "target"),
                            case_sensitive=True)
        flow = FlowConfig(
            source=source, target=target,
            enabled=r.bool(keys.ENABLED, False),
            topics=r.patterns(keys.TOPICS, d.topics),
            topics_exclude=r.patterns(keys.TOPICS_EXCLUDE, d.topics_exclude),
            groups=r.patterns(keys.GROUPS, d.groups),
            groups_exclude=r.patterns(keys.GROUPS_EXCLUDE, d.groups_exclude),
            config_properties_exclude=r.patterns(keys.CONFIG_PROPERTIES_EXCLUDE, d.config_properties_exclude),
            use_defaults_from=r.choice(keys.USE_DEFAULTS_FROM, d.use_defaults_from, ("target", "source")),
            replication_policy=r.policy(),
            separator=r.separator(),
            internal_topic_separator_enabled=r.bool(keys.INTERNAL_TOPIC_SEPARATOR_ENABLED, True),
            replication_factor=r.replication_factor(keys.REPLICATION_FACTOR, d.replication_factor),
            offset_syncs_topic_replication_factor=r.replication_factor(
                keys.OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR, d.offset_syncs_topic_replication_factor),
            checkpoints_topic_replication_factor=r.replication_factor(
                keys.CHECKPOINTS_TOPIC_REPLICATION_FACTOR, d.checkpoints_topic_replication_factor),
            heartbeats_topic_replication_factor=r.replication_factor(
                keys.HEARTBEATS_TOPIC_REPLICATION_FACTOR, d.heartbeats_topic_replication_factor),
            offset_syncs_topic_location=location,
            emit_offset_syncs_enabled=r.bool(keys.EMIT_OFFSET_SYNCS_ENABLED, True),
            offset_lag_max=r.int(keys.OFFSET_LAG_MAX, d.offset_lag_max, minimum=0),
            heartbeats_replication_enabled=r.bool(keys.HEARTBEATS_REPLICATION_ENABLED, True),
            exactly_once_support=r.choice(keys.EXACTLY_ONCE_SUPPORT, d.exactly_once_support,
                                          ("requested", "required")),
            emit_heartbeats=r.schedule(keys.EMIT_HEARTBEATS),
            emit_checkpoints=r.schedule(keys.EMIT_CHECKPOINTS),
            sync_group_offsets=r.schedule(keys.SYNC_GROUP_OFFSETS),
            sync_topic_configs=r.schedule(keys.SYNC_TOPIC_CONFIGS),
            sync_topic_acls=r.schedule(keys.SYNC_TOPIC_ACLS),
            refresh_topics=r.schedule(keys.REFRESH_TOPICS),
            refresh_groups=r.schedule(keys.REFRESH_GROUPS),
            consumer_poll_timeout_ms=r.int(keys.CONSUMER_POLL_TIMEOUT_MS, d.consumer_poll_timeout_ms, minimum=0),
            admin_timeout_ms=r.int(keys.ADMIN_TIMEOUT_MS, d.admin_timeout_ms, minimum=1),
            tasks_max=r.int(keys.TASKS_MAX, None, minimum=1),
            max_offsets_per_trigger=r.int(keys.MAX_OFFSETS_PER_TRIGGER, None, minimum=1),
            source_consumer=self._settings(client_props(conn, "source", "consumer")),
            source_admin=self._settings(client_props(conn, "source", "admin")),
            target_admin=self._settings(client_props(conn, "target", "admin")),
            target_producer=self._settings(worker_producer_props(self.sourced, conn, target)),
            offset_syncs_producer=self._settings(client_props(conn, location, "producer")),
            heartbeats_producer=self._settings(client_props(conn, "target", "producer")),
            provenance_header=r.choice(keys.PROVENANCE_HEADER_ENABLED, "auto", ("auto", "true", "false")),
            trigger_mode=r.choice(keys.TRIGGER_MODE, keys.TRIGGER_MODES[0], keys.TRIGGER_MODES),
            # Spark refuses Real-Time Mode epochs shorter than spark.sql.streaming.realTimeMode.minBatchDuration
            real_time_epoch_ms=r.int(keys.REAL_TIME_EPOCH_MS, keys.DEFAULT_REAL_TIME_EPOCH_MS, minimum=5000),
            report_interval_ms=r.int(keys.REPORT_INTERVAL_MS, keys.DEFAULT_REPORT_INTERVAL_MS, minimum=10),
        )
        r.plugin_classes()
        r.offset_syncs_consistency(flow)
        return flow

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
                used = (k == keys.CLUSTERS or k in FLOW_KEYS or keys.is_client_key(k)
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
        patterns = _list(s.value)
        for p in patterns:
            try:
                re.compile(p)
            except re.error as exc:
                self.b.problem(s.key, f"invalid regex '{p}': {exc}")
        return patterns

    def schedule(self, name: str) -> Schedule:
        default = _default_schedule(name)
        enabled = self.bool(f"{name}.enabled", default.enabled)
        interval = self.int(f"{name}.interval.seconds", default.interval_s, minimum=1,
                            hint=f"; to turn it off set '{name}.enabled = false'")
        return Schedule(enabled, interval if interval is not None else default.interval_s)

    def policy(self) -> str:
        s = self.get(keys.REPLICATION_POLICY_CLASS)
        if s is None:
            return "default"
        policy = _POLICIES.get(s.value.strip())
        if policy is None:
            self.b.problem(s.key, f"replication policy class '{self.b.shown(s.key)}' cannot be used; use "
                                  f"{keys.DEFAULT_REPLICATION_POLICY} or {keys.IDENTITY_REPLICATION_POLICY}")
            return "default"
        return policy

    def separator(self) -> str:
        s = self.get(keys.REPLICATION_POLICY_SEPARATOR)
        if s is None:
            return keys.DEFAULT_SEPARATOR
        if not s.value:
            self.b.problem(s.key, "the separator must not be empty")
            return keys.DEFAULT_SEPARATOR
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
