"""Configuration parity with MM2 4.3: for every file in tests/data/mm2/valid, `load_config` resolves the same
flows, job schedules, heartbeats and client settings as MM2's own `MirrorMakerConfig` and connector configs
(run from the connect-mirror jar by java/ResolveConfig.java, one JVM for all files).

Differences sparkmirror makes on purpose are listed in DEVIATIONS with their reason; any other one fails the
test, every difference of a file in one message.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sparkmirror.config import keys
from sparkmirror.config.client_settings import HIDDEN
from sparkmirror.config.flow_settings import comma_list
from sparkmirror.config.mm2 import MirrorMakerConfig, load_config
from sparkmirror.config.model import FlowConfig

from .mm2_interop import java_resolve_config

DATA = Path(__file__).parents[1] / "data" / "mm2"
VALID = tuple(sorted((DATA / "valid").glob("*.properties")))
ENV = {"MIRROR_A_BOOTSTRAP": "a-1.example:9092"}  # secrets_from_providers.properties reads it

# FlowConfig field -> (MM2 connector whose ConfigDef parses it, MM2 key)
SETTINGS = {
    "enabled": ("source_connector", "enabled"),
    "topics": ("source_connector", "topics"),
    "topics_exclude": ("source_connector", "topics.exclude"),
    "groups": ("checkpoint_connector", "groups"),
    "groups_exclude": ("checkpoint_connector", "groups.exclude"),
    "config_properties_exclude": ("source_connector", "config.properties.exclude"),
    "separator": ("source_connector", "replication.policy.separator"),
    "internal_topic_separator_enabled": ("source_connector", "replication.policy.internal.topic.separator.enabled"),
    "replication_factor": ("source_connector", "replication.factor"),
    "offset_syncs_topic_replication_factor": ("source_connector", "offset-syncs.topic.replication.factor"),
    "checkpoints_topic_replication_factor": ("checkpoint_connector", "checkpoints.topic.replication.factor"),
    "heartbeats_topic_replication_factor": ("heartbeat_connector", "heartbeats.topic.replication.factor"),
    "offset_syncs_topic_location": ("source_connector", "offset-syncs.topic.location"),
    "emit_offset_syncs_enabled": ("source_connector", "emit.offset-syncs.enabled"),
    "offset_lag_max": ("source_connector", "offset.lag.max"),
    "heartbeats_replication_enabled": ("source_connector", "heartbeats.replication.enabled"),
}
POLICY_CLASSES = {"default": keys.DEFAULT_REPLICATION_POLICY, "identity": keys.IDENTITY_REPLICATION_POLICY}
# MM2's periodic jobs: a negative interval (from `<job>.enabled = false` or a negative value) turns the job off.
JOBS = ("emit.heartbeats", "emit.checkpoints", "sync.group.offsets", "sync.topic.configs", "sync.topic.acls",
        "refresh.topics", "refresh.groups")
TIMEOUTS_MS = {"consumer_poll_timeout_ms": "consumer.poll.timeout", "admin_timeout_ms": "admin.timeout"}
# MM2's client (java/ResolveConfig.java) -> the FlowConfig client sparkmirror uses in its place
CLIENTS = {"source_consumer": "source_consumer", "source_admin": "source_admin", "target_admin": "target_admin",
           "target_producer": "target_producer", "offset_syncs_producer": "offset_syncs_producer",
           "heartbeats_producer": "heartbeats_producer",
           "checkpoints_producer": "target_producer",  # Connect's worker producer, the same for every connector
           "offset_syncs_consumer": "offset_syncs_consumer", "target_consumer": "target_consumer"}
# Settings MM2 and Connect add to a client themselves (not from the file); ignored when sparkmirror does not
# set them. `*` matches any value (client ids and metrics labels name Connect's own tasks).
MM2_OWN_SETTINGS = {
    "enable.auto.commit": "false",
    "auto.offset.reset": "earliest",
    "key.serializer": "org.apache.kafka.common.serialization.ByteArraySerializer",
    "value.serializer": "org.apache.kafka.common.serialization.ByteArraySerializer",
    "max.block.ms": str(2**63 - 1),
    "enable.idempotence": "false",
    "acks": "all",
    "max.in.flight.requests.per.connection": "1",
    "delivery.timeout.ms": str(2**31 - 1),
    "client.id": "connector-producer-*",
    "metrics.context.connect.*": "*",
}
# (file, item) as fnmatch patterns, then sparkmirror's and MM2's values ("*": any) -> why sparkmirror differs
# from MM2 4.3 on purpose.
DIFFERS_FROM_MM2 = "default 5 s (docs/reference.md: where sparkmirror differs from MM2)"
DEVIATIONS: dict[tuple[str, str, Any, Any], str] = {
    ("*", "refresh.topics (interval ms)", 5000, 600000): "default 5 s, new topics within seconds (docs/reference.md: "
                                                         "where sparkmirror differs from MM2)",
    ("*", "emit.checkpoints (interval ms)", 5000, 60000): DIFFERS_FROM_MM2,
    ("*", "sync.group.offsets (interval ms)", 5000, 60000): DIFFERS_FROM_MM2,
    ("*", "config_properties_exclude", comma_list(keys.DEFAULT_CONFIG_PROPERTIES_EXCLUDE), "*"):
        "MM2's default lists the names unescaped, so its '.' matches any character; sparkmirror's are literal",
    ("deprecated_aliases.properties", "*_exclude", "*", "*"):
        "the 3.x *.blacklist names MM2 4.0 removed still work, with a warning (docs/configuration.md)",
    ("*", "offset_syncs_producer.override.*", "(unset)", "*"):
        "MM2 hands Connect's `producer.override.*` to its own producers as unknown `override.*` keys; dropped",
}


@dataclass(frozen=True, slots=True)
class Difference:
    """One item resolved differently; `item` is a FlowConfig field, `<client>.<setting>` or a file-wide name."""

    flow: str
    item: str
    ours: Any
    mm2: Any

    def __str__(self) -> str:
        return f"{self.flow or '(file)'} {self.item}: sparkmirror {self.ours!r}, MM2 {self.mm2!r}"


@pytest.fixture(scope="module")
def mm2_resolved() -> dict[str, dict[str, Any]]:
    """MM2's resolution of every valid file, by file name."""
    return java_resolve_config(VALID, cwd=DATA, env=ENV)


@pytest.mark.parametrize("path", VALID, ids=[p.stem for p in VALID])
def test_resolves_as_mm2(path: Path, mm2_resolved: dict[str, dict[str, Any]],
                         monkeypatch: pytest.MonkeyPatch) -> None:
    mm2 = mm2_resolved[path.name]
    assert "error" not in mm2, f"MM2 refuses {path.name}: {mm2['error']}"
    monkeypatch.chdir(DATA)  # ${file:secrets/...} paths are relative to the working directory, as in Kafka
    config = load_config(path, env=ENV)

    differences = list(_differences(config, mm2))
    unexpected = [d for d in differences if _deviation(path.name, d) is None]
    assert not unexpected, (f"{path.name} resolves differently from MM2 4.3 ({len(unexpected)}):\n"
                            + "\n".join(f"  {d}" for d in unexpected))


def test_deviations_table_is_still_needed(mm2_resolved: dict[str, dict[str, Any]],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Each deviation listed still happens for some file, so the table never hides a difference fixed since."""
    monkeypatch.chdir(DATA)
    used = {_deviation(p.name, d) for p in VALID if "error" not in mm2_resolved[p.name]
            for d in _differences(load_config(p, env=ENV), mm2_resolved[p.name])}
    assert not set(DEVIATIONS) - used, f"deviations that no longer occur: {sorted(set(DEVIATIONS) - used)}"


def _deviation(file: str, d: Difference) -> tuple[str, str, Any, Any] | None:
    for key in DEVIATIONS:
        file_pattern, item_pattern, ours, mm2 = key
        if (fnmatch.fnmatchcase(file, file_pattern) and fnmatch.fnmatchcase(d.item, item_pattern)
                and ours in ("*", d.ours) and mm2 in ("*", d.mm2)):
            return key
    return None


def _differences(config: MirrorMakerConfig, mm2: Mapping[str, Any]) -> Iterator[Difference]:
    if sorted(config.clusters) != mm2["clusters"]:
        yield Difference("", "clusters", sorted(config.clusters), mm2["clusters"])
    ours_flows = {f.name: f for f in config.flows}
    if sorted(ours_flows) != sorted(mm2["flows"]):
        yield Difference("", "flows", sorted(ours_flows), sorted(mm2["flows"]))
    for name in sorted(ours_flows.keys() & mm2["flows"].keys()):
        yield from _flow_differences(ours_flows[name], mm2["flows"][name])
    heartbeat_pairs = getattr(config, "heartbeat_pairs", None)
    if callable(heartbeat_pairs):
        heartbeat_pairs = heartbeat_pairs()
    if heartbeat_pairs is not None:  # MM2's clusterPairs rule, once config/ exposes it
        ours = sorted(_pair_name(p) for p in heartbeat_pairs)
        theirs = sorted(name for name, flow in mm2["flows"].items() if flow["emits_heartbeats"])
        if ours != theirs:
            yield Difference("", "heartbeat_pairs", ours, theirs)


def _pair_name(pair: Any) -> str:
    """`S->T` of a heartbeat pair, whether it is a flow-like object or a (source, target) tuple."""
    if hasattr(pair, "source"):
        return f"{pair.source}->{pair.target}"
    source, target = pair
    return f"{source}->{target}"


def _flow_differences(flow: FlowConfig, mm2: Mapping[str, Any]) -> Iterator[Difference]:
    for field, (connector, key) in SETTINGS.items():
        ours = getattr(flow, field)
        theirs = mm2[connector].get(key, "(not a setting)")
        theirs = tuple(theirs) if isinstance(theirs, list) else theirs
        if ours != theirs:
            yield Difference(flow.name, field, ours, theirs)
    policy = POLICY_CLASSES.get(flow.replication_policy, flow.replication_policy)
    if policy != mm2["source_connector"]["replication.policy.class"]:
        yield Difference(flow.name, "replication_policy", policy, mm2["source_connector"]["replication.policy.class"])
    for job in JOBS:
        schedule = getattr(flow, job.replace(".", "_"))
        ours = schedule.interval_s * 1000 if schedule.enabled and schedule.interval_s >= 0 else "off"
        theirs = mm2["intervals_ms"][job] if mm2["intervals_ms"][job] >= 0 else "off"
        if ours != theirs:
            yield Difference(flow.name, f"{job} (interval ms)", ours, theirs)
    for field, job in TIMEOUTS_MS.items():
        if getattr(flow, field) != mm2["intervals_ms"][job]:
            yield Difference(flow.name, field, getattr(flow, field), mm2["intervals_ms"][job])
    for client, ours in CLIENTS.items():
        yield from _client_differences(flow.name, client, getattr(flow, ours), mm2["clients"][client])


def _client_differences(flow: str, client: str, settings: Mapping[str, str],
                        mm2: Mapping[str, str]) -> Iterator[Difference]:
    ours = _masked(settings)
    theirs = {k: v for k, v in _masked(mm2).items() if k in ours or not _mm2_own(k, v)}
    for key in sorted(ours.keys() | theirs.keys()):
        if ours.get(key) != theirs.get(key):
            yield Difference(flow, f"{client}.{key}", ours.get(key, "(unset)"), theirs.get(key, "(unset)"))


def _masked(settings: Mapping[str, str]) -> dict[str, str]:
    """Sensitive values as one marker on both sides: their keys are compared, their values never shown."""
    return {k: HIDDEN if keys.is_sensitive(k) else v for k, v in settings.items()}


def _mm2_own(key: str, value: str) -> bool:
    return any(fnmatch.fnmatchcase(key, k) and fnmatch.fnmatchcase(value, v) for k, v in MM2_OWN_SETTINGS.items())
