"""Pure planning of which source topics a flow replicates and what to create on the target."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from sparkmirror.model import NewTopicSpec, TopicConfigEntry
from sparkmirror.policy.filters import ConfigPropertyFilter, TopicFilter
from sparkmirror.policy.replication import ReplicationPolicy, should_replicate_topic


@dataclass(frozen=True)
class TopicPlan:
    """Source topic -> remote topic, plus the target changes needed before records flow."""

    remote_topics: Mapping[str, str] = field(default_factory=dict)
    create: tuple[NewTopicSpec, ...] = ()
    add_partitions: Mapping[str, int] = field(default_factory=dict)
    source_partitions: Mapping[str, int] = field(default_factory=dict)  # replicated source topic -> count
    target_partitions: Mapping[str, int] = field(default_factory=dict)  # existing remote topic -> count


def plan_topics(source: Mapping[str, int], target: Mapping[str, int], topic_filter: TopicFilter,
                policy: ReplicationPolicy, target_alias: str, source_alias: str,
                replication_factor: int,
                source_configs: Mapping[str, Sequence[TopicConfigEntry]] | None = None,
                config_filter: ConfigPropertyFilter | None = None,
                heartbeats_replication_enabled: bool = True) -> TopicPlan:
    """Plan a flow's topics from source and target partition counts (MM2's computeAndCreateTopicPartitions).

    A topic replicates as MM2's shouldReplicateTopic decides: the filter accepts it (or it is a heartbeats
    topic and `heartbeats_replication_enabled`), it is not internal, and it would not close a cycle.
    A missing remote topic is created with the source's partition count and the source topic's configs
    that `config_filter` lets through; one with fewer partitions grows.
    """
    config_filter = config_filter or ConfigPropertyFilter()
    remote: dict[str, str] = {}
    create = []
    grow: dict[str, int] = {}
    for topic in sorted(source):
        if not should_replicate_topic(topic, topic_filter, policy, target_alias, heartbeats_replication_enabled):
            continue
        name = policy.format_remote_topic(source_alias, topic)
        remote[topic] = name
        partitions = source[topic]
        if name not in target:
            configs = remote_topic_configs((source_configs or {}).get(topic, ()), config_filter)
            create.append(NewTopicSpec(name, partitions, replication_factor, MappingProxyType(configs)))
        elif target[name] < partitions:
            grow[name] = partitions
    return TopicPlan(remote_topics=remote, create=tuple(create), add_partitions=grow,
                     source_partitions={t: source[t] for t in remote},
                     target_partitions={r: target[r] for r in remote.values() if r in target})


def remote_topic_configs(entries: Sequence[TopicConfigEntry], config_filter: ConfigPropertyFilter) -> dict[str, str]:
    """The configs a new remote topic is created with (MM2's targetConfig for topic creation)."""
    return {e.name: e.value for e in sorted(entries, key=lambda e: e.name)
            if config_filter.should_replicate_config_property(e.name)
            and (not e.is_default or config_filter.should_replicate_source_default(e.name))}
