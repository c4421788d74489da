"""Typed reads of one flow's connector map (flow_settings.FlowReader), reporting bad values by the key as written.

A bad value is reported to the builder as a problem and the default is used, so reading goes on and every
problem in a file is found in one pass.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from sparkmirror.config import keys
from sparkmirror.config.flow_settings import Schedule, comma_list
from sparkmirror.config.model import FlowConfig

_POLICIES = {keys.DEFAULT_REPLICATION_POLICY: "default", keys.IDENTITY_REPLICATION_POLICY: "identity"}


@dataclass(frozen=True, slots=True)
class Sourced:
    """A value and the file key it came from, carried through MM2's resolution rules."""

    value: str
    key: str


class Reporter(Protocol):
    """Where problems and warnings go, and how keys and values are shown in them (config/builder.py)."""

    def problem(self, key: str, text: str) -> None: ...

    def warn(self, text: str) -> None: ...

    def where(self, key: str) -> str: ...

    def shown(self, key: str) -> str: ...


class ConnectorReader:
    """Typed reads from one flow's connector map; problems name the key as written in the file."""

    def __init__(self, builder: Reporter, conn: Mapping[str, Sourced]) -> None:
        self.b = builder
        self.conn = conn

    def get(self, key: str) -> Sourced | None:
        return self.conn.get(key)

    def bool(self, key: str, default: bool) -> bool:
        s = self.get(key)
        if s is None:
            return default
        value = s.value.strip().lower()
        if value not in ("true", "false"):
            self.b.problem(s.key, f"expected true or false, got '{self.b.shown(s.key)}'")
            return default
        return value == "true"

    def int(self, key: str, default: int | None, minimum: int, hint: str = "") -> int | None:
        s = self.get(key)
        if s is None:
            return default
        try:
            value = int(s.value.strip())
        except ValueError:
            self.b.problem(s.key, f"expected a whole number, got '{self.b.shown(s.key)}'")
            return default
        if value < minimum:
            self.b.problem(s.key, f"must be at least {minimum}, got {value}{hint}")
            return default
        return value

    def replication_factor(self, key: str, default: int) -> int:
        value = self.int(key, default, minimum=-1)
        if value == 0:
            self.b.problem(self.conn[key].key, "must be -1 (the broker's default) or at least 1")
            return default
        return value if value is not None else default

    def choice(self, key: str, default: str, allowed: tuple[str, ...], case_sensitive: bool = False) -> str:
        s = self.get(key)
        if s is None:
            return default
        value = s.value.strip() if case_sensitive else s.value.strip().lower()
        if value not in allowed:
            self.b.problem(s.key, f"'{self.b.shown(s.key)}' is not one of: {', '.join(allowed)}")
            return default
        return value

    def patterns(self, key: str, default: tuple[str, ...]) -> tuple[str, ...]:
        s = self.get(key)
        if s is None:
            return default
        patterns = comma_list(s.value)
        for p in patterns:
            try:
                re.compile(p)
            except re.error as exc:
                self.b.problem(s.key, f"invalid regex '{p}': {exc}")
        return patterns

    def schedule(self, name: str, default: Schedule) -> Schedule:
        """`<name>.enabled` and `<name>.interval.seconds`; a negative interval turns the job off (MM2's Scheduler
        skips a negative interval), 0 is refused (MM2 would fail to schedule it, or spin)."""
        enabled = self.bool(f"{name}.enabled", default.enabled)
        key = f"{name}.interval.seconds"
        s = self.get(key)
        if s is not None and s.value.strip().startswith("-") and s.value.strip()[1:].isdigit():
            self.b.warn(f"{self.b.where(s.key)} is negative: {name} is off, as in MM2")
            return Schedule(False, default.interval_s)
        interval = self.int(key, default.interval_s, minimum=1,
                            hint=f"; to turn it off set '{name}.enabled = false' or a negative interval")
        return Schedule(enabled, interval if interval is not None else default.interval_s)

    def policy(self, key: str, default: str) -> str:
        """`default`, `identity`, or the name of the flow's own class (config/custom_classes.py checks it)."""
        s = self.get(key)
        if s is None:
            return default
        return _POLICIES.get(s.value.strip(), s.value.strip())

    def separator(self, key: str, default: str) -> str:
        s = self.get(key)
        if s is None:
            return default
        if not s.value:
            self.b.problem(s.key, "the separator must not be empty")
            return default
        return s.value

    def offset_syncs_consistency(self, flow: FlowConfig) -> None:
        """MM2 rejects offset-syncs settings when offset syncs are off; checkpoints then cannot run."""
        if flow.emit_offset_syncs_enabled:
            return
        off = self.conn[keys.EMIT_OFFSET_SYNCS_ENABLED]
        for key, s in self.conn.items():
            if key.startswith(keys.OFFSET_SYNCS_PREFIX):
                self.b.problem(s.key, f"is set while {off.key} = false; remove one of them")
        if flow.enabled and (flow.emit_checkpoints.enabled or flow.sync_group_offsets.enabled):
            self.b.warn(f"flow {flow.name}: no checkpoints or group offset syncs because {off.key} = false")
