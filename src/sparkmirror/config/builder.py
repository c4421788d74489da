"""Builds the typed model from a properties file's flat map, collecting every problem before it fails.

Every map is resolved with MM2's own rules (see config/resolution.py): a flow setting `k` of A->B comes from
`A->B.k`, else the top-level `k` (unless MM2 drops it there: flow_settings.TOP_LEVEL_IGNORED), else MM2's
default; each client of a flow gets its settings the way MirrorConnectorConfig builds them, and its librdkafka
translation with them. Keys are matched to the aliases of `clusters` by prefix, as MM2 does (aliases.py), so
aliases may contain dots. Values from config providers are resolved here and never shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from sparkmirror.config import keys
from sparkmirror.config.aliases import ALIAS, FLOW_ARROW, cluster_readings, flow_readings, named_flow
from sparkmirror.config.client_settings import HIDDEN, ClientSettings
from sparkmirror.config.connector_reader import ConnectorReader, Sourced
from sparkmirror.config.custom_classes import read_custom_classes
from sparkmirror.config.flow_settings import FLOW_KEYS, FLOW_SETTINGS, TOP_LEVEL_IGNORED, comma_list
from sparkmirror.config.model import ClusterConfig, Coordination, FlowConfig, SchemaRegistry, reset_policy
from sparkmirror.config.plugin_path import class_roots, has_class, missing_entries
from sparkmirror.config.properties import Properties
from sparkmirror.config.providers import resolve_providers
from sparkmirror.config.resolution import (
    client_props,
    cluster_admin_props,
    cluster_props,
    connector_props,
    worker_producer_props,
)
from sparkmirror.config.sql_rules import is_sql_key, read_sql_rules
from sparkmirror.config.transforms import is_shaping_key, read_chain, read_errors_tolerance
from sparkmirror.errors import ConfigError


class Built(NamedTuple):
    """What a properties file yields: the fields of config/mm2.MirrorMakerConfig."""

    clusters: Mapping[str, ClusterConfig]
    flows: tuple[FlowConfig, ...]
    spark: Mapping[str, str]
    unused_keys: tuple[str, ...]
    warnings: tuple[str, ...]
    source: str
    metrics_port: int | None
    coordination: Coordination


def build(props: Properties, env: Mapping[str, str] | None = None) -> Built:
    """Build and validate; raises ConfigError listing every problem found, in file order."""
    return _Builder(props, env).build()


# Flow-level prefixes of client settings (MirrorConnectorConfig and Connect's client overrides).
_FLOW_CLIENT_PREFIXES = tuple(
    [f"{r}." for r in keys.CLIENT_ROLES] + [f"{s}.{r}." for s in ("source", "target") for r in keys.CLIENT_ROLES]
    + [keys.SOURCE_CLUSTER_PREFIX, keys.TARGET_CLUSTER_PREFIX])


def _is_connector_key(key: str) -> bool:
    """Top-level keys kept in every flow's connector map (MM2: the connectors' ConfigDef names)."""
    return (key in FLOW_KEYS and key not in TOP_LEVEL_IGNORED) or key in keys.CONNECT_CONNECTOR_KEYS \
        or keys.is_client_key(key) or is_shaping_key(key) or is_sql_key(key)


def _is_flow_setting(rest: str) -> bool:
    """What a flow reads after `A->B.`: its settings and its clients' (MirrorConnectorConfig's prefixes)."""
    return rest in FLOW_KEYS or rest.startswith(_FLOW_CLIENT_PREFIXES) or is_shaping_key(rest) or is_sql_key(rest)


def _is_cluster_setting(rest: str) -> bool:
    """What a cluster reads after `A.`: client settings for all its clients, or for one role, and, as a target,
    Connect's exactly-once switch and the group and offsets topic of dedicated MM2's workers (the take-over)."""
    return keys.is_client_key(rest) or rest.startswith(tuple(f"{r}." for r in keys.CLIENT_ROLES)) \
        or rest in (keys.EXACTLY_ONCE_SOURCE_SUPPORT, keys.WORKER_GROUP_ID, keys.WORKER_OFFSET_STORAGE_TOPIC) \
        or rest.startswith(keys.SCHEMA_REGISTRY_PREFIX)


def _is_top_level_setting(key: str) -> bool:
    return (key in (keys.CLUSTERS, keys.METRICS_PORT, keys.PLUGIN_PATH, keys.COORDINATION_CLUSTER,
                    keys.COORDINATION_SESSION_TIMEOUT_MS) or key in FLOW_KEYS
            or keys.is_client_key(key) or is_shaping_key(key) or is_sql_key(key)
            or key.startswith((keys.CONFIG_PROVIDERS, keys.SPARK_PREFIX, "replication.policy")))


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
        self.sourced = {k: Sourced(v, k) for k, v in self.v.items()}
        self.plugin_roots = class_roots(self._plugin_path())

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
        self._converters(aliases)
        self._top_level_ignored()
        flows = [self._flow(s, t, clusters) for s in aliases for t in aliases if s != t]
        self._separator_in_aliases(flows)
        unused = self._unused_keys(aliases, {(f.source, f.target) for f in flows if f.custom_classes})
        metrics_port = self._metrics_port()
        coordination = self._coordination(aliases)
        if self.problems:
            ordered = sorted(zip(self.problem_lines, range(len(self.problems)), self.problems, strict=True))
            raise ConfigError([p for _, _, p in ordered], self.props.source)
        spark = {k: v for k, v in self.v.items() if k.startswith(keys.SPARK_PREFIX)}
        return Built(
            clusters=MappingProxyType(clusters), flows=tuple(flows), spark=MappingProxyType(spark),
            unused_keys=tuple(sorted(unused)), warnings=tuple(self.warnings), source=self.props.source,
            metrics_port=metrics_port, coordination=coordination)

    def _coordination(self, aliases: list[str]) -> Coordination:
        """Where the file's processes share its flows (runtime/ownership.py): the cluster and the session timeout."""
        cluster = (self.v.get(keys.COORDINATION_CLUSTER) or "").strip() or None
        if cluster is not None and cluster not in aliases:
            self.problem(keys.COORDINATION_CLUSTER, f"'{cluster}' is not a cluster alias of this file; name one of "
                                                    f"{', '.join(aliases) or '(none defined)'}, or remove the key to "
                                                    f"use the target of the first flow")
            cluster = None
        low, high = keys.COORDINATION_SESSION_TIMEOUT_RANGE_MS
        raw = (self.v.get(keys.COORDINATION_SESSION_TIMEOUT_MS) or "").strip()
        timeout = keys.DEFAULT_COORDINATION_SESSION_TIMEOUT_MS
        if raw:
            try:
                timeout = int(raw)
            except ValueError:
                timeout = -1
            if not low <= timeout <= high:
                self.problem(keys.COORDINATION_SESSION_TIMEOUT_MS,
                             f"'{raw}' is not a session timeout in milliseconds between {low} and {high} (what "
                             f"Kafka's group.min/max.session.timeout.ms allow by default); a running process's "
                             f"flows move to a standby this long after it stops answering")
                timeout = keys.DEFAULT_COORDINATION_SESSION_TIMEOUT_MS
        return Coordination(cluster, timeout)

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
            self.problem(keys.METRICS_PORT, f"'{self.shown(keys.METRICS_PORT)}' is not a port number; use 0-65535 "
                                            f"(0: any free port), "
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
            elif not ALIAS.match(a):
                self.problem(keys.CLUSTERS, f"alias '{a}' may only use letters, digits, '.', '_' and '-' (it "
                                            f"becomes part of topic names)")
        if len(set(aliases)) != len(aliases):
            self.problem(keys.CLUSTERS, "an alias is listed twice")
        return tuple(a for a in dict.fromkeys(aliases) if ALIAS.match(a))

    def _settings(self, sourced: Mapping[str, Sourced], role: str) -> ClientSettings:
        return ClientSettings({k: s.value for k, s in sourced.items()}, role,
                              origins={k: self.where(s.key) for k, s in sourced.items()},
                              hidden=frozenset(k for k, s in sourced.items() if s.key in self.secret))

    def _cluster(self, alias: str) -> ClusterConfig:
        bootstrap = cluster_props(self.sourced, alias).get(keys.BOOTSTRAP_SERVERS)
        if bootstrap is None or not bootstrap.value.strip():
            self.problem(f"{alias}.{keys.BOOTSTRAP_SERVERS}", f"missing; every cluster in "
                         f"'{keys.CLUSTERS}' needs one, e.g. {alias}.bootstrap.servers = host:9092")
        return ClusterConfig(alias=alias, bootstrap_servers=bootstrap.value.strip() if bootstrap else "",
                             admin=self._settings(cluster_admin_props(self.sourced, alias), "admin"),
                             schema_registry=self._schema_registry(alias))

    def _schema_registry(self, alias: str) -> SchemaRegistry | None:
        """`<alias>.sparkmirror.schema.registry.*`: a URL and basic auth; other settings (TLS stores) refused."""
        given = {k: s for k, s in cluster_props(self.sourced, alias).items()
                 if k.startswith(keys.SCHEMA_REGISTRY_PREFIX)}
        known = (keys.SCHEMA_REGISTRY_URL, keys.SCHEMA_REGISTRY_USER_INFO, keys.SCHEMA_REGISTRY_CREDENTIALS_SOURCE)
        for k in sorted(set(given) - set(known)):
            self.problem(given[k].key, "not a setting sparkmirror reads (it reads url, basic.auth.user.info and "
                                       "basic.auth.credentials.source = USER_INFO; an https URL is checked against "
                                       "the default trust store); remove it")
        source = given.get(keys.SCHEMA_REGISTRY_CREDENTIALS_SOURCE)
        if source is not None and source.value.strip().upper() != "USER_INFO":
            self.problem(source.key, f"'{source.value.strip()}' is not supported; use USER_INFO with "
                                     f"{alias}.{keys.SCHEMA_REGISTRY_USER_INFO} = user:password")
        url = given.get(keys.SCHEMA_REGISTRY_URL)
        if url is None:
            if given:
                self.problem(next(iter(given.values())).key, f"a schema registry needs its URL: "
                                                             f"{alias}.{keys.SCHEMA_REGISTRY_URL} = http://host:8081")
            return None
        value = url.value.strip().rstrip("/")
        if not value.startswith(("http://", "https://")) or "," in value:
            self.problem(url.key, f"'{self.shown(url.key)}' is not one http:// or https:// URL")
        info = given.get(keys.SCHEMA_REGISTRY_USER_INFO)
        return SchemaRegistry(value, info.value if info is not None else None)

    def _flow_keys(self, aliases: tuple[str, ...]) -> None:
        """Flow keys name listed aliases, matched by prefix as MM2 does (`us.east->us.west.enabled`)."""
        for k in self.v:
            pairs = [(s, t) for s, t, _ in flow_readings(k, aliases)]
            named = named_flow(k, aliases, _is_flow_setting)
            if not pairs and named is not None:
                for alias in dict.fromkeys(named):
                    if alias not in aliases:
                        self.problem(k, f"unknown cluster alias '{alias}'; '{keys.CLUSTERS}' lists: "
                                        f"{', '.join(aliases) or '(none)'}")
            if pairs and all(s == t for s, t in pairs):  # `a->a.b.x` is flow a->a.b's, not a->a's
                self.problem(k, f"a flow from cluster '{pairs[0][0]}' to itself is not allowed")

    def _top_level_ignored(self) -> None:
        """Flow settings MM2 drops at the top level (not in its connectors' ConfigDefs): ignored, with a warning."""
        for key, why in TOP_LEVEL_IGNORED.items():
            if key in self.v:
                self.warn(f"{self.where(key)} is ignored, as MM2 ignores it at the top level ({why}); set it per "
                          f"flow instead, e.g. A->B.{key}")

    def _separator_in_aliases(self, flows: list[FlowConfig]) -> None:
        """MM2's DefaultReplicationPolicy reads a remote topic's source up to the first separator, so an alias
        containing it cannot be told apart (`us.east.orders` reads as from `us`); sparkmirror reads them alike."""
        for f in flows:
            for alias in (f.source, f.target) if f.enabled and f.replication_policy == "default" else ():
                if f.separator in alias:
                    head = alias.split(f.separator)[0]
                    self.warn(f"cluster alias '{alias}' contains the replication separator '{f.separator}': as in "
                              f"MM2, a remote topic such as '{alias}{f.separator}orders' reads as coming from "
                              f"'{head}', so cycle detection and upstream-cluster discovery cannot see where it "
                              f"came from; set replication.policy.separator to a text no alias contains")

    def _security_protocols(self) -> None:
        for k, v in self.v.items():
            is_protocol = k == keys.SECURITY_PROTOCOL or k.endswith("." + keys.SECURITY_PROTOCOL)
            if is_protocol and v.strip().upper() not in keys.SECURITY_PROTOCOLS:
                self.problem(k, f"'{self.shown(k)}' is not a security protocol; use one of "
                                f"{', '.join(keys.SECURITY_PROTOCOLS)}")

    # -- one flow ------------------------------------------------------------------------------------
    def _flow(self, source: str, target: str, clusters: Mapping[str, ClusterConfig]) -> FlowConfig:
        conn = connector_props(self.sourced, source, target, _is_connector_key)
        self._deprecated_aliases(conn)
        r = ConnectorReader(self, conn)
        settings = {s.field: s.read(r, s) for s in FLOW_SETTINGS}
        self._no_effect(conn)
        clients = self._clients(conn, target, settings["offset_syncs_topic_location"])
        consumer = clients["source_consumer"]
        try:
            reset: str | ConfigError = reset_policy(consumer, consumer.origin)
        except ConfigError as exc:  # refused when the flow is about to run (it may be disabled, or never run)
            reset = exc
        flow = FlowConfig(source=source, target=target, **settings, **clients,
                          transforms=read_chain(conn, self, self._has_class),
                          errors_tolerance=read_errors_tolerance(conn, self), plugin_path=self.plugin_roots,
                          sql_rules=read_sql_rules(conn, self),
                          custom_classes=read_custom_classes(conn, source, target, self.plugin_roots, self,
                                                             self._has_class),
                          _reset_policy=reset, exactly_once_source_support=self._exactly_once_source_support(target),
                          mm2_workers_group=self._worker_setting(target, keys.WORKER_GROUP_ID),
                          mm2_offsets_topic=self._worker_setting(target, keys.WORKER_OFFSET_STORAGE_TOPIC),
                          source_registry=clusters[source].schema_registry,
                          target_registry=clusters[target].schema_registry)
        r.offset_syncs_consistency(flow)
        self._registries_needed(flow, conn)
        return flow

    def _registries_needed(self, flow: FlowConfig, conn: Mapping[str, Sourced]) -> None:
        """An enabled flow that rewrites schema ids needs both clusters' registries."""
        if flow.schemas == "off" or not flow.enabled:
            return
        where = conn[keys.SCHEMAS].key if keys.SCHEMAS in conn else keys.SCHEMAS
        if flow.schemas == "sync":
            self.problem(where, "syncing subjects without rewriting ids is not built yet; use rewrite (the record path "
                                "registers each subject's versions on the target before the first record that uses "
                                "them) or off")
        for alias, registry in ((flow.source, flow.source_registry), (flow.target, flow.target_registry)):
            if registry is None:
                self.problem(where, f"flow {flow.name} rewrites schema ids, so cluster '{alias}' needs a schema "
                                    f"registry: {alias}.{keys.SCHEMA_REGISTRY_URL} = http://host:8081")

    def _plugin_path(self) -> tuple[str, ...]:
        """MM2's top-level `plugin.path`: where the classes the file names are found."""
        raw = self.v.get(keys.PLUGIN_PATH)
        paths = comma_list(raw) if raw else ()
        for missing in missing_entries(paths):
            self.problem(keys.PLUGIN_PATH, f"'{missing}' does not exist; list folders (or jars) that hold the "
                                           f"classes the file names")
        return paths

    def _has_class(self, name: str) -> bool:
        return has_class(self.plugin_roots, name)

    def _converters(self, aliases: tuple[str, ...]) -> None:
        """MM2 writes the bytes it read (ByteArrayConverter for key, value and headers); another converter would
        change what reaches the target, and only that one is run here, so any other is refused wherever it is
        set (top level, a target cluster's worker, a flow)."""
        short = keys.BYTE_ARRAY_CONVERTER.rsplit(".", 1)[1]
        for k, v in self.v.items():
            name = next((c for c in keys.CONVERTERS if k == c or k.endswith(f".{c}")), None)
            if name is None or v.strip() in (keys.BYTE_ARRAY_CONVERTER, short):
                continue
            head = k[:-len(name)].rstrip(".")
            if head and head not in aliases and FLOW_ARROW not in head:
                continue  # not a converter setting (e.g. a client's own key)
            self.problem(k, f"'{self.shown(k)}' would change the bytes written to the target; sparkmirror copies "
                            f"keys, values and headers as MM2 does by default, with {keys.BYTE_ARRAY_CONVERTER}. "
                            f"Remove the setting (to change records on the way use transforms)")

    def _worker_setting(self, target: str, key: str) -> str:
        """A setting of dedicated MM2's worker for `target`, written `<target>.<key>` as MM2 reads it ("": not set)."""
        return self.v.get(f"{target}.{key}", "").strip()

    def _exactly_once_source_support(self, target: str) -> str:
        """`<target>.exactly.once.source.support`: where MM2 reads Connect's worker switch for a target cluster."""
        key = f"{target}.{keys.EXACTLY_ONCE_SOURCE_SUPPORT}"
        value = self.v.get(key, "disabled").strip().lower()
        if value not in keys.EXACTLY_ONCE_SOURCE_VALUES:
            self.problem(key, f"'{self.shown(key)}' is not one of {', '.join(keys.EXACTLY_ONCE_SOURCE_VALUES)}")
            return "disabled"
        return value

    def _clients(self, conn: Mapping[str, Sourced], target: str, location: str) -> dict[str, ClientSettings]:
        """Each client of the flow, resolved as MM2 resolves that client and translated for its role."""
        resolved = {
            "source_consumer": ("consumer", client_props(conn, "source", "consumer")),
            "source_admin": ("admin", client_props(conn, "source", "admin")),
            "target_admin": ("admin", client_props(conn, "target", "admin")),
            "target_producer": ("producer", worker_producer_props(self.sourced, conn, target)),
            "offset_syncs_producer": ("producer", client_props(conn, location, "producer")),
            # MM2's heartbeat (and checkpoint) connectors write through Connect's worker producer too, so
            # `producer.override.*` applies to them and a flow's own `producer.*` does not. Checkpoints are
            # written with target_producer itself.
            "heartbeats_producer": ("producer", worker_producer_props(self.sourced, conn, target)),
            "target_consumer": ("consumer", client_props(conn, "target", "consumer")),
        }
        return {name: self._settings(props, role) for name, (role, props) in resolved.items()}

    def _no_effect(self, conn: Mapping[str, Sourced]) -> None:
        """Settings sparkmirror reads but does not act on: a warning naming the key as written, and why."""
        for setting in FLOW_SETTINGS:
            for key in setting.file_keys if setting.no_effect else ():
                if key in conn:
                    self.warn(f"{self.where(conn[key].key)} has no effect in sparkmirror: {setting.no_effect}")

    def _deprecated_aliases(self, conn: dict[str, Sourced]) -> None:
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

    def _unused_keys(self, aliases: tuple[str, ...], with_classes: set[tuple[str, str]]) -> set[str]:
        """Keys no flow, cluster or top-level setting reads; a key that two of them read gets a warning. A flow
        with classes of the file's own passes them all its keys (MM2's connector config), so none is unused."""
        unused = set()
        for k in self.v:
            readers = [f"flow {s}{FLOW_ARROW}{t}" for s, t, rest in flow_readings(k, aliases)
                       if s != t and (_is_flow_setting(rest) or (s, t) in with_classes)]
            readers += [f"cluster {a}" for a, rest in cluster_readings(k, aliases) if _is_cluster_setting(rest)]
            readers += ["the top level"] if FLOW_ARROW not in k and _is_top_level_setting(k) else []
            if not readers:
                unused.add(k)
            elif len(readers) > 1:
                self.warn(f"{self.where(k)} is read by {' and by '.join(readers)}: MM2 matches a key to every "
                          f"alias it starts with; rename an alias so that none starts another")
        return unused
