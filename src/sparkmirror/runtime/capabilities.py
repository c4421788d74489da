"""What this version does with a flow's MM2 settings: settings it cannot honour stop the flow before it starts
(every MM2 job is performed since ACL sync was added, so none is named as left out)."""

from __future__ import annotations

from sparkmirror.config import keys
from sparkmirror.config.model import FlowConfig


def cannot_honour(flow: FlowConfig) -> list[str]:
    """Settings that would change the delivery guarantee if ignored: the flow must not start."""
    problems = []
    if flow.exactly_once_support == "required" and flow.trigger_mode == keys.TRIGGER_MODES[1]:
        problems.append(f"{flow.name}: {keys.EXACTLY_ONCE_SUPPORT} = required with {keys.TRIGGER_MODE} = real-time: "
                        f"a Real-Time Mode task never ends, so its transaction would hold every record from "
                        f"consumers that read committed records; set {flow.name}.{keys.TRIGGER_MODE} = micro-batch")
    return problems
