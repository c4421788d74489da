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

# A running flow with records behind that wrote nothing for this long (and at least two report intervals) stalls.
STALL_AFTER_S = 5.0


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
    quiet_s: float | None = None  # running: seconds since its last write or its query's start, the later
    stall_after_s: float = STALL_AFTER_S

    def recovery_point(self, now_ms: int) -> RecoveryPoint | None:
        """Records and seconds lost if the source died now (None before lag was first measured)."""
        return None if self.lag is None else recovery_point(self.lag, now_ms)

    def remote(self, topic: str) -> str:
        return self.remote_topics.get(topic, topic)


@dataclass(frozen=True, slots=True)
class ClusterHealth:
    """Whether a cluster answered its last probe (runtime/reachability.py); times are epoch milliseconds.

    `state`: up, down (`error` says why) or unknown (not probed yet). `since_ms`: when it entered that state.
    """

    alias: str
    state: str
    error: str | None
    since_ms: int | None
    checked_ms: int | None


@dataclass(frozen=True, slots=True)
class HeartbeatPairStatus:
    """A heartbeat-only pair (MM2's clusterPairs, runtime/heartbeats.py): beats written since the process started.

    `state`: beating (the last beat was written), failing (the last one failed: `last_error`), waiting (none yet).
    """

    name: str
    source: str
    target: str
    interval_s: float
    beats: int
    failures: int
    failures_in_a_row: int
    last_error: str | None
    last_beat_ms: int | None  # epoch ms of the last beat written

    @property
    def state(self) -> str:
        return "failing" if self.failures_in_a_row else "beating" if self.beats else "waiting"

    def age_s(self, now_ms: int) -> float | None:
        """Seconds since the last beat was written; None before the first."""
        return None if self.last_beat_ms is None else max(0, now_ms - self.last_beat_ms) / 1000.0


@dataclass(frozen=True, slots=True)
class FlowCondition:
    """Why a running flow is not well: `level` bad (a cluster of it is down) or warn (stalled), and a short text."""

    level: str
    text: str


def flow_condition(flow: FlowStatus, clusters: Mapping[str, ClusterHealth], now_ms: int) -> FlowCondition | None:
    """A running flow's trouble, or None: its source or target down, else stalled (records behind, the oldest
    older than `stall_after_s`, measured after it last wrote, and nothing written for `stall_after_s`)."""
    if flow.state != "running":
        return None
    for role, alias in (("source", flow.source), ("target", flow.target)):
        health = clusters.get(alias)
        if health is not None and health.state == "down":
            return FlowCondition("bad", f"{role} {alias} down")
    quiet, after = flow.quiet_s, flow.stall_after_s
    if quiet is None or quiet <= after:
        return None
    behind = [lag for lag in flow.lag or () if lag.records > 0 and now_ms - lag.measured_ms <= quiet * 1000
              and ((age := lag.seconds(now_ms)) is None or age > after)]
    if not behind:
        return None
    return FlowCondition("warn", f"stalled: nothing written for {quiet:.0f} s, "
                                 f"{sum(lag.records for lag in behind)} records behind")


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
    cluster_health: tuple[ClusterHealth, ...] = ()  # those probed, in configuration order
    heartbeat_pairs: tuple[HeartbeatPairStatus, ...] = ()

    def flow(self, name: str) -> FlowStatus:
        return next(f for f in self.flows if f.flow == name)

    def health(self, alias: str) -> ClusterHealth | None:
        return next((c for c in self.cluster_health if c.alias == alias), None)

    def condition(self, flow: FlowStatus, now_ms: int) -> FlowCondition | None:
        """flow_condition() against this status's clusters."""
        return flow_condition(flow, {c.alias: c for c in self.cluster_health}, now_ms)

    def lines(self, now_ms: int | None = None) -> list[str]:
        """One log line per cluster that is down, per flow and per heartbeat-only pair."""
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        down = [f"cluster {c.alias}: down{_since(c.since_ms, now_ms)}: {c.error}" for c in self.cluster_health
                if c.state == "down"]
        return down + [self._flow_line(f, now_ms) for f in self.flows] + [_pair_line(p, now_ms)
                                                                          for p in self.heartbeat_pairs]

    def _flow_line(self, f: FlowStatus, now_ms: int) -> str:
        condition = self.condition(f, now_ms)
        return (f"flow {f.flow}: {f.state}" + (f", {condition.text}" if condition else "")
                + (f" (runs in {f.owner})" if f.state == "standby" and f.owner else "")
                + f"; {len(f.assignment)} topic(s), {sum(f.assignment.values())} "
                f"partition(s); {f.progress.records} records, {f.progress.bytes} bytes replicated; "
                + (f"lag {rp.records} records, {_seconds(rp.seconds)}; " if (rp := f.recovery_point(now_ms))
                   else "") + f"{f.restarts} start(s), {f.progress.retries} retries"
                + (f"; failure: {f.failure}" if f.failure else ""))

    def flow_jobs(self, flow: str) -> list[JobStatus]:
        return [j for j in self.jobs if j.flow == flow]


def _pair_line(p: HeartbeatPairStatus, now_ms: int) -> str:
    age = p.age_s(now_ms)
    return (f"heartbeats {p.name}: {p.state}; {p.beats} beat(s)" + (f", the last {age:.0f} s ago" if age is not None
                                                                     else "")
            + (f"; {p.failures_in_a_row} failure(s) in a row: {p.last_error}" if p.failures_in_a_row else ""))


def _since(since_ms: int | None, now_ms: int) -> str:
    return "" if since_ms is None else f" for {max(0, now_ms - since_ms) / 1000:.0f} s"


def _seconds(value: float | None) -> str:
    return "age unknown" if value is None else f"{value:.1f} s"
