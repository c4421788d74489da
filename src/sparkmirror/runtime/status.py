"""Immutable snapshots of what the process is doing: the one thing the CLI, the logs and metrics read.

They are taken under the runners' locks and never change afterwards, so a reader on another thread never
sees a flow half-way through a restart.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from sparkmirror.control.checkpointer import CheckpointMetrics
from sparkmirror.offsets.lag import PartitionLag, RecoveryPoint, recovery_point
from sparkmirror.runtime.progress import ProgressSnapshot


@dataclass(frozen=True, slots=True)
class FlowStatus:
    """One flow at one moment.

    `state`: running (a query replicates), idle (no topic matches yet), failed (`failure` says why; a retry
    is scheduled), standby (another process of the file's group runs it: `owner`, when known), stopped.
    `positions` are the next source offsets to replicate of the partitions read now.
    """

    flow: str
    state: str
    failure: str | None
    assignment: Mapping[str, int]  # source topic -> partitions read
    positions: Mapping[tuple[str, int], int]
    progress: ProgressSnapshot
    restarts: int  # query (re)starts, the first included
    last_restart: str | None  # why the running query started
    source: str = ""
    target: str = ""
    remote_topics: Mapping[str, str] = field(default_factory=dict)  # source topic -> remote topic
    lag: tuple[PartitionLag, ...] | None = None  # the last `measure lag` round; None before the first
    checkpoints: CheckpointMetrics | None = None
    metric_names: tuple[str, ...] = ("legacy",)  # metric.names.formats
    owner: str | None = None  # the process that runs the flow (runtime/ownership.process_name), None: unknown

    def recovery_point(self, now_ms: int) -> RecoveryPoint | None:
        """Records and seconds lost if the source died now (None before lag was first measured)."""
        return None if self.lag is None else recovery_point(self.lag, now_ms)

    def remote(self, topic: str) -> str:
        return self.remote_topics.get(topic, topic)


@dataclass(frozen=True, slots=True)
class JobStatus:
    """One periodic job of a flow (`emit checkpoints`, `measure lag`, ...) since the process started."""

    flow: str
    name: str
    runs: int
    failures: int
    failures_in_a_row: int
    last_error: str | None


@dataclass(frozen=True, slots=True)
class Status:
    """Every flow of the process, in configuration order."""

    flows: tuple[FlowStatus, ...]
    jobs: tuple[JobStatus, ...] = ()
    clusters: tuple[str, ...] = ()
    process: str = ""  # this process's name in its coordination group
    coordinated: bool = False  # shares its flows with other processes of the file (else runs them alone)

    def flow(self, name: str) -> FlowStatus:
        return next(f for f in self.flows if f.flow == name)

    def lines(self, now_ms: int | None = None) -> list[str]:
        """One log line per flow."""
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        return [f"flow {f.flow}: {f.state}" + (f" (runs in {f.owner})" if f.state == "standby" and f.owner else "")
                + f"; {len(f.assignment)} topic(s), {sum(f.assignment.values())} "
                f"partition(s); {f.progress.records} records, {f.progress.bytes} bytes replicated; "
                + (f"lag {rp.records} records, {_seconds(rp.seconds)}; " if (rp := f.recovery_point(now_ms))
                   else "") + f"{f.restarts} start(s), {f.progress.retries} retries"
                + (f"; failure: {f.failure}" if f.failure else "") for f in self.flows]

    def flow_jobs(self, flow: str) -> list[JobStatus]:
        return [j for j in self.jobs if j.flow == flow]


def _seconds(value: float | None) -> str:
    return "age unknown" if value is None else f"{value:.1f} s"
