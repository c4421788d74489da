"""MM2's pluggable classes from the user's jars: a replication policy, topic, group and config-property filters.

A file may name its own `replication.policy.class`, `topic.filter.class`, `group.filter.class` or
`config.property.filter.class`. They are Java classes written against MM2's interfaces, so they run in a JVM
(a `ClassHost`, given once by the process that runs the control plane: `pipeline/class_host.py`). Here they are
wrapped in the same Python interfaces as the built-in policy and filters, so every room names topics and picks
groups through them alike. Each answer is asked of the class once per name: MM2's classes are functions of the
names they are given, and the control plane asks the same questions at every refresh.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cache
from typing import Protocol

from sparkmirror.errors import ConfigError
from sparkmirror.policy.replication import ReplicationPolicy

Answer = str | bool | None


@dataclass(frozen=True, slots=True)
class ClassSpec:
    """One of a flow's own classes: the key that names it, the class, the `configure` map MM2 gives it (the
    flow's connector config) and the plugin path's class roots it is loaded from."""

    key: str
    class_name: str
    interface: str  # MM2's interface: ReplicationPolicy, TopicFilter, GroupFilter or ConfigPropertyFilter
    configs: tuple[tuple[str, str], ...] = field(repr=False)  # may hold secrets
    plugin_path: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.key} = {self.class_name}"


class ClassHost(Protocol):
    """A JVM holding one configured instance per ClassSpec; `call` invokes a method of MM2's interface on it.

    Raises ConfigError naming `spec.key` when the class cannot be loaded, created or configured, or the call
    throws.
    """

    def call(self, spec: ClassSpec, method: str, *args: str) -> Answer: ...


_host: list[ClassHost] = []
_lock = threading.Lock()


def use_class_host(host: ClassHost) -> None:
    """Where this process's custom classes run (set once by the command or client that loads a file)."""
    with _lock:
        _host[:] = [host]


def has_class_host() -> bool:
    return bool(_host)


def _host_for(spec: ClassSpec) -> ClassHost:
    if not _host:
        raise ConfigError([f"{spec.key}: '{spec.class_name}' is a Java class and this process has no JVM for it; "
                           f"run it through the sparkmirror command or sparkmirror.client, which start one"])
    return _host[0]


class _Plugged:
    """Answers from the class, each asked once per arguments (MM2's classes answer from names alone)."""

    __slots__ = ("_answers", "spec")

    def __init__(self, spec: ClassSpec) -> None:
        self.spec = spec
        self._answers: dict[tuple[str, tuple[str, ...]], Answer] = {}

    def _ask(self, method: str, *args: str) -> Answer:
        key = (method, args)
        if key not in self._answers:
            self._answers[key] = _host_for(self.spec).call(self.spec, method, *args)
        return self._answers[key]

    def _text(self, method: str, *args: str) -> str | None:
        answer = self._ask(method, *args)
        return None if answer is None else str(answer)

    def _yes(self, method: str, *args: str) -> bool:
        return bool(self._ask(method, *args))


class PluggedReplicationPolicy(_Plugged, ReplicationPolicy):
    """A `replication.policy.class` of the user's: every name MM2 asks a policy for, asked of it."""

    __slots__ = ()

    def format_remote_topic(self, source_alias: str, topic: str) -> str:
        return self._text("formatRemoteTopic", source_alias, topic) or ""

    def topic_source(self, topic: str) -> str | None:
        return self._text("topicSource", topic)

    def upstream_topic(self, topic: str) -> str | None:
        return self._text("upstreamTopic", topic)

    def original_topic(self, topic: str) -> str:
        return self._text("originalTopic", topic) or topic

    def heartbeats_topic(self) -> str:
        return self._text("heartbeatsTopic") or ""

    def offset_syncs_topic(self, cluster_alias: str) -> str:
        return self._text("offsetSyncsTopic", cluster_alias) or ""

    def checkpoints_topic(self, cluster_alias: str) -> str:
        return self._text("checkpointsTopic", cluster_alias) or ""

    def is_heartbeats_topic(self, topic: str) -> bool:
        return self._yes("isHeartbeatsTopic", topic)

    def is_checkpoints_topic(self, topic: str) -> bool:
        return self._yes("isCheckpointsTopic", topic)

    def is_mm2_internal_topic(self, topic: str) -> bool:
        return self._yes("isMM2InternalTopic", topic)

    def is_internal_topic(self, topic: str) -> bool:
        return self._yes("isInternalTopic", topic)


class PluggedTopicFilter(_Plugged):
    """A `topic.filter.class`: it alone decides which topics replicate (`topics` is DefaultTopicFilter's)."""

    __slots__ = ()

    def should_replicate_topic(self, topic: str) -> bool:
        return self._yes("shouldReplicateTopic", topic)


class PluggedGroupFilter(_Plugged):
    """A `group.filter.class`: it alone decides whose offsets are checkpointed."""

    __slots__ = ()

    def should_replicate_group(self, group: str) -> bool:
        return self._yes("shouldReplicateGroup", group)


class PluggedConfigPropertyFilter(_Plugged):
    """A `config.property.filter.class`: which topic configs are copied, and whether a source default is."""

    __slots__ = ()

    def should_replicate_config_property(self, name: str) -> bool:
        return self._yes("shouldReplicateConfigProperty", name)

    def should_replicate_source_default(self, name: str) -> bool:
        return self._yes("shouldReplicateSourceDefault", name)


_WRAPPERS = {"ReplicationPolicy": PluggedReplicationPolicy, "TopicFilter": PluggedTopicFilter,
             "GroupFilter": PluggedGroupFilter, "ConfigPropertyFilter": PluggedConfigPropertyFilter}


@cache
def plugged(spec: ClassSpec):
    """The one wrapper of a spec in this process, so its answers are asked once."""
    return _WRAPPERS[spec.interface](spec)


def check_class(spec: ClassSpec) -> None:
    """Load, create and configure the class now (`validate`, and `run` before any flow starts): ConfigError
    naming its key if it cannot be."""
    _host_for(spec).call(spec, "toString")
