"""Pure planning of which source topics a flow replicates and what to create on the target."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sparkmirror.model import NewTopicSpec
from sparkmirror.policy.filters import TopicFilter
from sparkmirror.policy.replication import ReplicationPolicy, is_cycle


@dataclass(frozen=True)
class TopicPlan:
    """Source topic -> remote topic, plus the target changes needed before records flow."""

    remote_topics: Mapping[str, str] = field(default_factory=dict)
    create: tuple[NewTopicSpec, ...] = ()
    add_partitions: Mapping[str, int] = field(default_factory=dict)


def plan_topics(source: Mapping[str, int], target: Mapping[str, int], topic_filter: TopicFilter,
                policy: ReplicationPolicy, target_alias: str, source_alias: str,
                replication_factor: int) -> TopicPlan:
    """Plan a flow's topics from source and target partition counts (MM2's computeAndCreateTopicPartitions).

    A topic replicates when the filter accepts it and sending it to the target would not close a cycle.
    A missing remote topic is created with the source's partition count; one with fewer partitions grows.
    """
    remote: dict[str, str] = {}
    create = []
    grow: dict[str, int] = {}
    for topic in sorted(source):
        if not topic_filter.should_replicate_topic(topic) or is_cycle(policy, topic, target_alias):
            continue
        name = policy.format_remote_topic(source_alias, topic)
        remote[topic] = name
        partitions = source[topic]
        if name not in target:
            create.append(NewTopicSpec(name, partitions, replication_factor))
        elif target[name] < partitions:
            grow[name] = partitions
    return TopicPlan(remote_topics=remote, create=tuple(create), add_partitions=grow)
