"""Remote topic naming, as MM2's DefaultReplicationPolicy and IdentityReplicationPolicy define it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class ReplicationPolicy(Protocol):
    """How a topic from a source cluster is named on the target, and how to read names back."""

    def format_remote_topic(self, source_alias: str, topic: str) -> str: ...

    def topic_source(self, topic: str) -> str | None: ...

    def upstream_topic(self, topic: str) -> str | None: ...


@dataclass(frozen=True, slots=True)
class DefaultReplicationPolicy:
    """`orders` from cluster A becomes `A.orders` (separator configurable)."""

    separator: str = "."

    def format_remote_topic(self, source_alias: str, topic: str) -> str:
        return f"{source_alias}{self.separator}{topic}"

    def topic_source(self, topic: str) -> str | None:
        """The alias a remote topic came from, or None for a local topic."""
        head, sep, _ = topic.partition(self.separator)
        return head if sep else None

    def upstream_topic(self, topic: str) -> str | None:
        """The topic's name one hop upstream, or None for a local topic."""
        _, sep, tail = topic.partition(self.separator)
        return tail if sep else None


@dataclass(frozen=True, slots=True)
class IdentityReplicationPolicy:
    """Remote topics keep the source name; the origin cannot be read from the name."""

    def format_remote_topic(self, source_alias: str, topic: str) -> str:
        return topic

    def topic_source(self, topic: str) -> str | None:
        return None

    def upstream_topic(self, topic: str) -> str | None:
        return None


def policy_for(name: str, separator: str = ".") -> ReplicationPolicy:
    """The policy for a FlowConfig.replication_policy value (`default` or `identity`)."""
    if name == "identity":
        return IdentityReplicationPolicy()
    return DefaultReplicationPolicy(separator)


def is_cycle(policy: ReplicationPolicy, topic: str, target_alias: str) -> bool:
    """True when the topic's origin chain already includes the target (MirrorSourceConnector.isCycle)."""
    current: str | None = topic
    while current is not None:
        source = policy.topic_source(current)
        if source is None:
            return False
        if source == target_alias:
            return True
        current = policy.upstream_topic(current)
    return False
