"""What this version does with a flow's MM2 settings: features it does not perform yet are named, never
silently skipped, and settings it cannot honour stop the flow before it starts."""

from __future__ import annotations

from sparkmirror.config import keys
from sparkmirror.config.model import FlowConfig


def not_performed(flow: FlowConfig) -> list[str]:
    """MM2 features the flow's settings turn on that this version does not perform yet."""
    features = [
        (flow.sync_topic_acls.enabled, f"{keys.SYNC_TOPIC_ACLS}.enabled"),
    ]
    return [name for on, name in features if on]


def cannot_honour(flow: FlowConfig) -> list[str]:
    """Settings that would change the delivery guarantee if ignored: the flow must not start."""
    problems = []
    if flow.exactly_once_support == "required":
        problems.append(f"{flow.name}: {keys.EXACTLY_ONCE_SUPPORT} = required, but this version replicates "
                        f"at least once; set it to 'requested' (or remove it) to run with at-least-once delivery")
    return problems
