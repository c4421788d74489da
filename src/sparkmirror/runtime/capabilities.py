"""What this version does with a flow's MM2 settings: settings it cannot honour stop the flow before it starts
(every MM2 job is performed since ACL sync was added, so none is named as left out)."""

from __future__ import annotations

from sparkmirror.config import keys
from sparkmirror.config.model import FlowConfig


def cannot_honour(flow: FlowConfig) -> list[str]:
    """Settings that would change the delivery guarantee if ignored: the flow must not start."""
    problems = []
    if flow.exactly_once_support == "required":
        problems.append(f"{flow.name}: {keys.EXACTLY_ONCE_SUPPORT} = required, but this version replicates "
                        f"at least once; set it to 'requested' (or remove it) to run with at-least-once delivery")
    return problems
