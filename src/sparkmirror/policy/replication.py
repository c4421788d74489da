"""Remote topic naming and what a flow may replicate, as MM2 4.x defines them.

Mirrors `ReplicationPolicy` (with its default methods), `DefaultReplicationPolicy`,
`IdentityReplicationPolicy` and `MirrorSourceConnector.isCycle/shouldReplicateTopic`, so topic names,
internal-topic names and cycle decisions agree with an MM2 deployment reading the same clusters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from sparkmirror.policy.filters import TopicFilter

HEARTBEATS_TOPIC = "heartbeats"


class ReplicationPolicy(Protocol):
    """How a topic from a source cluster is named on the target, and how to read names back.

    Implementations supply the first three methods; the rest default to MM2's interface defaults,
    which a policy inherits by subclassing this Protocol explicitly.
    """

    __slots__ = ()

    def format_remote_topic(self, source_alias: str, topic: str) -> str: ...

    def topic_source(self, topic: str) -> str | None:
        """The alias a remote topic came from, or None for a topic that is not remote."""
        ...

    def upstream_topic(self, topic: str) -> str | None:
        """The topic's name one hop upstream (maybe itself remote), or None for a topic that is not remote."""
        ...

    def original_topic(self, topic: str) -> str:
        """The name at the origin, through any number of hops; a policy that keeps names ends the walk."""
        current = topic
        while True:
            upstream = self.upstream_topic(current)
            if upstream is None or upstream == current:
                return current
            current = upstream

    def heartbeats_topic(self) -> str:
        return HEARTBEATS_TOPIC

    def offset_syncs_topic(self, cluster_alias: str) -> str:
        return f"mm2-offset-syncs.{cluster_alias}.internal"

    def checkpoints_topic(self, cluster_alias: str) -> str:
        return f"{cluster_alias}.checkpoints.internal"

    def is_heartbeats_topic(self, topic: str) -> bool:
        """True for `heartbeats` and its remote copies through any number of hops (`B.A.heartbeats`)."""
        return self.original_topic(topic) == self.heartbeats_topic()

    def is_checkpoints_topic(self, topic: str) -> bool:
        return topic.endswith(".checkpoints.internal")

    def is_mm2_internal_topic(self, topic: str) -> bool:
        """MM2's own topics: `mm2*.internal` (offset syncs, Connect stores) and checkpoints topics."""
        return (topic.startswith("mm2") and topic.endswith(".internal")) or self.is_checkpoints_topic(topic)

    def is_internal_topic(self, topic: str) -> bool:
        """Kafka internals (`__`/`.` prefix) and MM2's own topics; never replicated.

        Since Kafka 4.0 (KAFKA-17200) other `*.internal`/`*-internal` names are user topics here; only
        the default `topics.exclude` keeps some of them out.
        """
        return topic.startswith(("__", ".")) or self.is_mm2_internal_topic(topic)


@dataclass(frozen=True, slots=True)
class DefaultReplicationPolicy(ReplicationPolicy):
    """`orders` from cluster A becomes `A.orders`; the separator is configurable.

    `internal_separator_enabled` is `replication.policy.internal.topic.separator.enabled`: when False,
    offset-syncs and checkpoints topics use "." whatever the separator, as MM2 before KIP-690 did.
    """

    separator: str = "."
    internal_separator_enabled: bool = True

    def __post_init__(self) -> None:
        if not self.separator:
            raise ValueError("replication.policy.separator must not be empty")

    def format_remote_topic(self, source_alias: str, topic: str) -> str:
        return f"{source_alias}{self.separator}{topic}"

    def topic_source(self, topic: str) -> str | None:
        """The text before the first separator, split as Java's `Pattern.split` does.

        Trailing empty parts are dropped, so `A.` and `A..` are not remote; a leading separator gives the
        empty alias (`.orders` came from "").
        """
        parts = topic.split(self.separator)
        while parts and not parts[-1]:
            parts.pop()
        return parts[0] if len(parts) >= 2 else None

    def upstream_topic(self, topic: str) -> str | None:
        source = self.topic_source(topic)
        return None if source is None else topic[len(source) + len(self.separator):]

    def _internal_separator(self) -> str:
        return self.separator if self.internal_separator_enabled else "."

    def offset_syncs_topic(self, cluster_alias: str) -> str:
        sep = self._internal_separator()
        return f"mm2-offset-syncs{sep}{cluster_alias}{sep}internal"

    def checkpoints_topic(self, cluster_alias: str) -> str:
        sep = self._internal_separator()
        return f"{cluster_alias}{sep}checkpoints{sep}internal"

    def is_checkpoints_topic(self, topic: str) -> bool:
        sep = self._internal_separator()
        return topic.endswith(f"{sep}checkpoints{sep}internal")

    def is_mm2_internal_topic(self, topic: str) -> bool:
        sep = self._internal_separator()
        return (topic.startswith("mm2") and topic.endswith(f"{sep}internal")) or self.is_checkpoints_topic(topic)


@dataclass(frozen=True, slots=True)
class IdentityReplicationPolicy(DefaultReplicationPolicy):
    """Remote topics keep the source name, except heartbeats, which are named as by the default policy.

    The origin of a non-heartbeat topic cannot be read from its name: `topic_source` is the configured
    `source_alias` (`source.cluster.alias`, maybe None) and `upstream_topic` is the topic itself, so
    name-based cycle detection never fires for it.
    """

    source_alias: str | None = None

    def _looks_like_heartbeat(self, topic: str) -> bool:
        return topic.endswith(self.heartbeats_topic())

    # Explicit base calls: zero-argument super() fails in slots dataclasses before Python 3.14.
    def format_remote_topic(self, source_alias: str, topic: str) -> str:
        if self._looks_like_heartbeat(topic):
            return DefaultReplicationPolicy.format_remote_topic(self, source_alias, topic)
        return topic

    def topic_source(self, topic: str) -> str | None:
        if self._looks_like_heartbeat(topic):
            return DefaultReplicationPolicy.topic_source(self, topic)
        return self.source_alias

    def upstream_topic(self, topic: str) -> str | None:
        if self._looks_like_heartbeat(topic):
            return DefaultReplicationPolicy.upstream_topic(self, topic)
        return topic


def policy_for(name: str, separator: str = ".", internal_separator_enabled: bool = True,
               source_alias: str | None = None) -> ReplicationPolicy:
    """The policy for a FlowConfig.replication_policy value (`default` or `identity`).

    `source_alias` only matters to the identity policy, which cannot read it from topic names.
    """
    if name == "identity":
        return IdentityReplicationPolicy(separator, internal_separator_enabled, source_alias)
    return DefaultReplicationPolicy(separator, internal_separator_enabled)


def is_cycle(policy: ReplicationPolicy, topic: str, target_alias: str) -> bool:
    """True when the topic's origin chain already includes the target (MirrorSourceConnector.isCycle).

    The walk stops where a policy names a topic as its own upstream (identity naming), so such topics
    never look like a cycle.
    """
    current = topic
    while True:
        source = policy.topic_source(current)
        if source is None:
            return False
        if source == target_alias:
            return True
        upstream = policy.upstream_topic(current)
        if upstream is None or upstream == current:
            return False
        current = upstream


def should_replicate_topic(topic: str, topic_filter: TopicFilter, policy: ReplicationPolicy, target_alias: str,
                           heartbeats_replication_enabled: bool = True) -> bool:
    """Whether a flow to `target_alias` replicates `topic` (MirrorSourceConnector.shouldReplicateTopic).

    Heartbeats topics replicate even when the filter rejects them (unless disabled); internal topics and
    topics that would return to the target never do.
    """
    wanted = topic_filter.should_replicate_topic(topic) or (
        heartbeats_replication_enabled and policy.is_heartbeats_topic(topic))
    return wanted and not policy.is_internal_topic(topic) and not is_cycle(policy, topic, target_alias)
