"""The typed, frozen MM2 configuration model, built once from a flat properties map.

Resolution order for a flow setting `k` of flow A->B (as MirrorMakerConfig does for connector settings):
  1. `A->B.k`   2. top-level `k`   3. the MM2 default.
Client settings of cluster A come from `A.<client key>`, then `A.consumer.*` / `A.producer.*` /
`A.admin.*` for that role (the role-specific one wins).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from sparkmirror.config import keys
from sparkmirror.config.properties import Properties, read_properties
from sparkmirror.errors import ConfigError

_FLOW_KEY = re.compile(r"^([^.\s]+?)->([^.\s]+?)\.(.+)$")
_ALIAS = re.compile(r"^[A-Za-z0-9_\-]+$")
# Keys MM2 reads at the top level or per flow; anything else outside a cluster/flow prefix is reported.
_KNOWN_FLOW_KEYS = {
    keys.ENABLED, keys.TOPICS, keys.TOPICS_EXCLUDE, keys.REPLICATION_POLICY_CLASS,
    keys.REPLICATION_POLICY_SEPARATOR, keys.REPLICATION_FACTOR, keys.MAX_OFFSETS_PER_TRIGGER, keys.TASKS_MAX,
}
_POLICIES = {keys.DEFAULT_REPLICATION_POLICY: "default", keys.IDENTITY_REPLICATION_POLICY: "identity"}


def _frozen(d: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(d))


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """One cluster alias and its client settings (Java client names, as written in the file)."""

    alias: str
    bootstrap_servers: str
    client: Mapping[str, str] = field(default_factory=dict, repr=False)
    consumer: Mapping[str, str] = field(default_factory=dict, repr=False)
    producer: Mapping[str, str] = field(default_factory=dict, repr=False)
    admin: Mapping[str, str] = field(default_factory=dict, repr=False)

    def role_settings(self, role: str) -> dict[str, str]:
        """Client settings for a role: generic cluster settings overridden by `<alias>.<role>.*`."""
        specific = {"consumer": self.consumer, "producer": self.producer, "admin": self.admin}[role]
        merged = {keys.BOOTSTRAP_SERVERS: self.bootstrap_servers, **self.client, **specific}
        return merged


@dataclass(frozen=True, slots=True)
class FlowConfig:
    """One replication flow `source->target` with its resolved settings."""

    source: str
    target: str
    enabled: bool = False
    topics: tuple[str, ...] = (keys.DEFAULT_TOPICS,)
    topics_exclude: tuple[str, ...] = tuple(p.strip() for p in keys.DEFAULT_TOPICS_EXCLUDE.split(","))
    replication_policy: str = "default"
    separator: str = keys.DEFAULT_SEPARATOR
    replication_factor: int = keys.DEFAULT_REPLICATION_FACTOR
    max_offsets_per_trigger: int | None = None
    # MM2's tasks.max; here the most Spark tasks one micro-batch of the flow uses (None: all cores).
    tasks_max: int | None = None

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
    unknown_keys: tuple[str, ...] = ()
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

    @classmethod
    def from_properties(cls, props: Properties) -> MirrorMakerConfig:
        """Build and validate; raises ConfigError listing every problem found."""
        return _Builder(props).build()


def load_config(path: str | Path) -> MirrorMakerConfig:
    """Read a properties file and build the validated model."""
    return MirrorMakerConfig.from_properties(read_properties(path))


def _split_list(value: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in value.split(",") if item.strip())


class _Builder:
    """Collects every problem while building, so validation reports them all at once."""

    def __init__(self, props: Properties) -> None:
        self.props = props
        self.v = props.values
        self.problems: list[str] = []

    def problem(self, key: str, text: str) -> None:
        message = f"{key}: {text} ({self.props.where(key)})"
        if message not in self.problems:  # a top-level key is resolved once per flow
            self.problems.append(message)

    def build(self) -> MirrorMakerConfig:
        aliases = self._aliases()
        clusters = {a: self._cluster(a) for a in aliases}
        flow_keys = self._flow_keys(aliases)
        flows = [self._flow(s, t) for s in aliases for t in aliases if s != t]
        unknown = self._unknown_keys(aliases, flow_keys)
        if self.problems:
            raise ConfigError(self.problems, self.props.source)
        spark = {k: v for k, v in self.v.items() if k.startswith(keys.SPARK_PREFIX)}
        return MirrorMakerConfig(
            clusters=_frozen_clusters(clusters), flows=tuple(flows), spark=_frozen(spark),
            unknown_keys=tuple(sorted(unknown)), source=self.props.source)

    def _aliases(self) -> tuple[str, ...]:
        raw = self.v.get(keys.CLUSTERS)
        if raw is None:
            self.problems.append(f"{keys.CLUSTERS}: missing; list the cluster aliases, e.g. "
                                 f"'clusters = A, B' ({self.props.source})")
            return ()
        aliases = _split_list(raw)
        if not aliases:
            self.problem(keys.CLUSTERS, "no cluster alias listed")
        for a in aliases:
            if not _ALIAS.match(a):
                self.problem(keys.CLUSTERS, f"alias '{a}' may only use letters, digits, '_' and '-'")
        if len(set(aliases)) != len(aliases):
            self.problem(keys.CLUSTERS, "an alias is listed twice")
        return tuple(dict.fromkeys(aliases))

    def _cluster(self, alias: str) -> ClusterConfig:
        prefix = f"{alias}."
        own = {k[len(prefix):]: v for k, v in self.v.items() if k.startswith(prefix)}
        bootstrap = own.pop(keys.BOOTSTRAP_SERVERS, "").strip()
        if not bootstrap:
            self.problem(f"{alias}.{keys.BOOTSTRAP_SERVERS}", f"missing; every cluster in "
                         f"'{keys.CLUSTERS}' needs one, e.g. {alias}.bootstrap.servers = host:9092")
        roles: dict[str, dict[str, str]] = {r: {} for r in ("consumer", "producer", "admin")}
        generic: dict[str, str] = {}
        for k, v in own.items():
            role = next((r for r in roles if k.startswith(r + ".")), None)
            if role:
                roles[role][k[len(role) + 1:]] = v
            else:
                generic[k] = v
        return ClusterConfig(alias=alias, bootstrap_servers=bootstrap, client=_frozen(generic),
                             consumer=_frozen(roles["consumer"]), producer=_frozen(roles["producer"]),
                             admin=_frozen(roles["admin"]))

    def _flow_keys(self, aliases: tuple[str, ...]) -> set[str]:
        used = set()
        for k in self.v:
            m = _FLOW_KEY.match(k)
            if not m:
                continue
            used.add(k)
            src, tgt, _ = m.groups()
            for alias in (src, tgt):
                if alias not in aliases:
                    self.problem(k, f"unknown cluster alias '{alias}'; '{keys.CLUSTERS}' lists: "
                                    f"{', '.join(aliases) or '(none)'}")
            if src == tgt and src in aliases:
                self.problem(k, f"a flow from cluster '{src}' to itself is not allowed")
        return used

    def _get(self, source: str, target: str, key: str) -> tuple[str, str | None]:
        flow_key = f"{source}->{target}.{key}"
        if flow_key in self.v:
            return flow_key, self.v[flow_key]
        return key, self.v.get(key)

    def _flow(self, source: str, target: str) -> FlowConfig:
        defaults = FlowConfig(source=source, target=target)
        enabled = self._bool(*self._get(source, target, keys.ENABLED), default=False)
        topics = self._patterns(*self._get(source, target, keys.TOPICS), default=defaults.topics)
        exclude = self._patterns(*self._get(source, target, keys.TOPICS_EXCLUDE),
                                 default=defaults.topics_exclude)
        policy_key, policy_cls = self._get(source, target, keys.REPLICATION_POLICY_CLASS)
        policy = "default"
        if policy_cls is not None:
            policy = _POLICIES.get(policy_cls.strip(), "")
            if not policy:
                self.problem(policy_key, f"unsupported replication policy class '{policy_cls}'; "
                             f"use {keys.DEFAULT_REPLICATION_POLICY} or {keys.IDENTITY_REPLICATION_POLICY}")
                policy = "default"
        sep_key, sep = self._get(source, target, keys.REPLICATION_POLICY_SEPARATOR)
        if sep is not None and not sep:
            self.problem(sep_key, "the separator must not be empty")
        rf = self._int(*self._get(source, target, keys.REPLICATION_FACTOR),
                       default=defaults.replication_factor, minimum=-1)
        if rf == 0:
            self.problem(self._get(source, target, keys.REPLICATION_FACTOR)[0],
                         "must be -1 (broker default) or at least 1")
        max_offsets = self._int(*self._get(source, target, keys.MAX_OFFSETS_PER_TRIGGER),
                                default=None, minimum=1)
        tasks_max = self._int(*self._get(source, target, keys.TASKS_MAX), default=None, minimum=1)
        return FlowConfig(source=source, target=target, enabled=enabled, topics=topics,
                          topics_exclude=exclude, replication_policy=policy,
                          separator=sep or keys.DEFAULT_SEPARATOR, replication_factor=rf,
                          max_offsets_per_trigger=max_offsets, tasks_max=tasks_max)

    def _bool(self, key: str, raw: str | None, default: bool) -> bool:
        if raw is None:
            return default
        value = raw.strip().lower()
        if value not in ("true", "false"):
            self.problem(key, f"expected true or false, got '{raw}'")
            return default
        return value == "true"

    def _int(self, key: str, raw: str | None, default: int | None, minimum: int) -> int | None:
        if raw is None:
            return default
        try:
            value = int(raw.strip())
        except ValueError:
            self.problem(key, f"expected a whole number, got '{raw}'")
            return default
        if value < minimum:
            self.problem(key, f"must be at least {minimum}, got {value}")
            return default
        return value

    def _patterns(self, key: str, raw: str | None, default: tuple[str, ...]) -> tuple[str, ...]:
        if raw is None:
            return default
        patterns = _split_list(raw)
        for p in patterns:
            try:
                re.compile(p)
            except re.error as exc:
                self.problem(key, f"invalid regex '{p}': {exc}")
        return patterns

    def _unknown_keys(self, aliases: tuple[str, ...], flow_keys: set[str]) -> set[str]:
        unknown = set()
        for k in self.v:
            if k in flow_keys or k == keys.CLUSTERS or k.startswith(keys.SPARK_PREFIX):
                continue
            if any(k.startswith(a + ".") for a in aliases):
                continue
            if k not in _KNOWN_FLOW_KEYS:
                unknown.add(k)
        return unknown


def _frozen_clusters(clusters: dict[str, ClusterConfig]) -> Mapping[str, ClusterConfig]:
    return MappingProxyType(clusters)
