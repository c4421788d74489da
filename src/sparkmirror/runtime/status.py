"""Immutable snapshots of what the process is doing: the one thing the CLI, the logs and metrics read.

They are taken under the runners' locks and never change afterwards, so a reader on another thread never
sees a flow half-way through a restart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sparkmirror.runtime.progress import ProgressSnapshot


@dataclass(frozen=True, slots=True)
class FlowStatus:
    """One flow at one moment.

    `state`: running (a query replicates), idle (no topic matches yet), failed (`failure` says why; a retry
    is scheduled), stopped. `positions` are the next source offsets to replicate of the partitions read now.
    """

    flow: str
    state: str
    failure: str | None
    assignment: Mapping[str, int]  # source topic -> partitions read
    positions: Mapping[tuple[str, int], int]
    progress: ProgressSnapshot
    restarts: int  # query (re)starts, the first included
    last_restart: str | None  # why the running query started


@dataclass(frozen=True, slots=True)
class Status:
    """Every flow of the process, in configuration order."""

    flows: tuple[FlowStatus, ...]

    def flow(self, name: str) -> FlowStatus:
        return next(f for f in self.flows if f.flow == name)

    def lines(self) -> list[str]:
        """One log line per flow."""
        return [f"flow {f.flow}: {f.state}; {len(f.assignment)} topic(s), {sum(f.assignment.values())} "
                f"partition(s); {f.progress.records} records, {f.progress.bytes} bytes replicated; "
                f"{f.restarts} start(s), {f.progress.retries} retries"
                + (f"; failure: {f.failure}" if f.failure else "") for f in self.flows]
