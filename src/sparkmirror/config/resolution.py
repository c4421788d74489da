"""MM2's resolution rules, as MirrorMakerConfig and MirrorConnectorConfig build their maps (Kafka 4.3).

Pure functions over a flat map. They are generic in the value type so the builder can carry each value's
origin (the key as written in the file) through the same rules and name it in messages.

The rules, for flow S->T:
- cluster S's map (`cluster_props`): every `S.k`; the client settings (`bootstrap.servers`,
  `security.protocol`, `ssl.*`, `sasl.*`) are also copied to `consumer.k`, `producer.k`, `admin.k` unless
  set there; top-level client settings fill whatever is still missing.
- the flow's connector map (`connector_props`), lowest to highest: top-level keys MM2 knows as connector
  settings; `config.providers*` and `replication.policy*`; S's map as `source.cluster.k` / `source.<role>.k`;
  T's map likewise as `target.*`; every `S->T.k`.
- a client of the flow (`client_props`): `<side>.cluster.k` restricted to client settings, then the flow's
  `<role>.*` (but for MM2's own `consumer.poll.timeout.ms` and `admin.timeout.ms`), then `<side>.<role>.*`.
  So `S.consumer.x` beats `S->T.consumer.x`; `S->T.source.consumer.x` beats both. Because cluster client
  settings are copied into the role maps, `S.security.protocol` also beats `S->T.consumer.security.protocol`.
- the replication producer is Connect's worker producer for T (`worker_producer_props`): T's
  `bootstrap.servers`, then T's `producer.*`, then the flow's `producer.override.*`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from sparkmirror.config import keys

V = TypeVar("V")

_ROLE_PREFIXES = keys.CLIENT_ROLES  # MM2 matches ^consumer.*, so no dot is required
# MM2's own settings whose names start with a client role's prefix: flow settings, never given to that client
# (MM2 passes them on and the Java client ignores them as unknown; librdkafka would refuse them).
_OWN_SETTINGS = {"consumer": keys.CONSUMER_POLL_TIMEOUT_MS, "admin": keys.ADMIN_TIMEOUT_MS}


def stripped(props: Mapping[str, V], prefix: str) -> dict[str, V]:
    """Entries under `prefix`, with the prefix removed (Kafka's Utils.entriesWithPrefix)."""
    return {k[len(prefix):]: v for k, v in props.items() if k.startswith(prefix)}


def prefixed(props: Mapping[str, V], prefix: str) -> dict[str, V]:
    """Entries whose key starts with `prefix`, keys kept whole."""
    return {k: v for k, v in props.items() if k.startswith(prefix)}


def cluster_props(raw: Mapping[str, V], alias: str) -> dict[str, V]:
    """MirrorMakerConfig.clusterProps(alias)."""
    props = stripped(raw, f"{alias}.")
    for source in (dict(props), raw):
        for k, v in source.items():
            if not keys.is_client_key(k):
                continue
            for role in keys.CLIENT_ROLES:
                props.setdefault(f"{role}.{k}", v)
            if source is raw:
                props.setdefault(k, v)
    return props


def _is_role_key(key: str) -> bool:
    return key.startswith(_ROLE_PREFIXES)


def connector_props(raw: Mapping[str, V], source: str, target: str,
                    is_connector_key: Callable[[str], bool]) -> dict[str, V]:
    """MirrorMakerConfig.connectorBaseConfig(source->target), without the constant name/class entries."""
    props = {k: v for k, v in raw.items() if is_connector_key(k)}
    props.update(prefixed(raw, keys.CONFIG_PROVIDERS))
    props.update(prefixed(raw, "replication.policy"))
    for side, alias in (("source", source), ("target", target)):
        cluster = cluster_props(raw, alias)
        props.update({f"{side}.cluster.{k}": v for k, v in cluster.items() if not _is_role_key(k)})
        props.update({f"{side}.{k}": v for k, v in cluster.items() if _is_role_key(k)})
    props.update(stripped(raw, f"{source}->{target}."))
    return props


def client_props(connector: Mapping[str, V], side: str, role: str) -> dict[str, V]:
    """MirrorConnectorConfig.{source,target}{Consumer,Producer,Admin}Config, without client.id tagging."""
    props = {k: v for k, v in stripped(connector, f"{side}.cluster.").items() if keys.is_client_key(k)}
    flow_level = {k: v for k, v in stripped(connector, f"{role}.").items()
                  if f"{role}.{k}" != _OWN_SETTINGS.get(role)}
    if role == "producer":  # Connect's per-connector overrides belong to the replication producer
        flow_level = {k: v for k, v in flow_level.items() if not k.startswith("override.")}
    props.update(flow_level)
    props.update(stripped(connector, f"{side}.{role}."))
    return props


def worker_producer_props(raw: Mapping[str, V], connector: Mapping[str, V], target: str) -> dict[str, V]:
    """The producer that writes replicated records: Connect's worker producer for `target`."""
    cluster = cluster_props(raw, target)
    props = {k: v for k, v in cluster.items() if k == keys.BOOTSTRAP_SERVERS}
    props.update(stripped(cluster, "producer."))
    props.update(stripped(connector, keys.PRODUCER_OVERRIDE_PREFIX))
    return props


def cluster_admin_props(raw: Mapping[str, V], alias: str) -> dict[str, V]:
    """MirrorClientConfig.adminConfig() for one cluster (what RemoteClusterUtils connects with), without MM2's
    own top-level `admin.timeout.ms`."""
    props = {**{k: v for k, v in raw.items() if k != keys.ADMIN_TIMEOUT_MS}, **cluster_props(raw, alias)}
    out = {k: v for k, v in props.items() if keys.is_client_key(k)}
    out.update(stripped(props, "admin."))
    return out
