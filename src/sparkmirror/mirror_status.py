"""How far each flow's replication is, from the clusters alone: `sparkmirror status` and its Python API.

It reads only what sparkmirror (or MM2) leaves on the clusters: the source's end offsets, the offset syncs
and the checkpoints. So it answers the same whether sparkmirror runs here, elsewhere or not at all, and it
reports what the clusters that answered gave when another is down.

A partition's replicated position is one past the upstream offset of its last offset sync (for sparkmirror's
`end` syncs, the offset the flow had read to, past trailing transaction markers). sparkmirror writes a sync
for the last record of every report, so this is exact. MM2 writes syncs sparsely (every `offset.lag.max`
records or so), so for a flow MM2 runs the position is a lower bound and the lag an upper bound.

    from sparkmirror import mirror_status
    for flow in mirror_status.read_status("mm2.properties").flows: print(flow.flow, flow.state, flow.lag_records)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from sparkmirror.config.mm2 import MirrorMakerConfig, load_config
from sparkmirror.config.model import FlowConfig
from sparkmirror.control.coordination import plan_coordination
from sparkmirror.errors import ClusterUnreachableError, ConfigError, SparkmirrorError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.internal_log import read_internal_topic
from sparkmirror.kafka.membership import group_members
from sparkmirror.kafka.records import oldest_records
from sparkmirror.offsets.codec import Checkpoint, OffsetCodecError, decode_checkpoint, decode_heartbeat
from sparkmirror.offsets.flow_report import (
    UNREACHABLE,
    FlowReport,
    GroupCheckpoints,
    PairReport,
    PartitionStatus,
    StatusReport,
    TopicPartition,
    Unreachable,
    WrittenSync,
    assemble_flow,
    pair_report,
    positions,
    syncs_by_partition,
    written_syncs,
)
from sparkmirror.policy.replication import should_replicate_topic

__all__ = ["FlowReport", "GroupCheckpoints", "PartitionStatus", "StatusReport", "flow_status", "read_status"]

PROBE_TIMEOUT_S = 5.0
OLDEST_RECORD_TIMEOUT_S = 10.0  # then a partition's lag in seconds is unknown, never 0


class _Clusters:
    """Each cluster probed once per status; one that does not answer is remembered and named, not raised."""

    def __init__(self) -> None:
        self.down: dict[str, str] = {}
        self._up: set[str] = set()

    def reachable(self, alias: str, settings: Mapping[str, str]) -> bool:
        if alias not in self._up and alias not in self.down:
            try:
                ClusterAdmin(alias, settings).probe(PROBE_TIMEOUT_S)
                self._up.add(alias)
            except ClusterUnreachableError as exc:
                self.lost(alias, exc)
        return alias not in self.down

    def lost(self, alias: str, exc: ClusterUnreachableError) -> None:
        self.down[alias] = str(exc)
        self._up.discard(alias)


def _side(flow: FlowConfig, alias: str) -> Mapping[str, str]:
    return (flow.source_admin if alias == flow.source else flow.target_admin).rdkafka


def topic_selector(flow: FlowConfig) -> Callable[[str], bool]:
    """Whether the flow replicates a source topic now (its filter, its policy, its heartbeats setting)."""
    policy, topic_filter = flow.policy, flow.topic_filter
    return lambda topic: should_replicate_topic(topic, topic_filter, policy, flow.target,
                                                flow.heartbeats_replication_enabled)


def read_offset_syncs(flow: FlowConfig, notes: list[str]) -> list[WrittenSync]:
    """The offset syncs of the topics the flow replicates now. Those of topics its filter no longer selects
    stay in the (compacted) topic for good; counting them would report a flow stalled forever."""
    alias, topic = flow.offset_syncs_cluster, flow.offset_syncs_topic
    replicates = topic_selector(flow)  # read with the settings the checkpointer reads them with
    out, others = [], set()
    found, skipped = written_syncs(read_internal_topic(alias, flow.offset_syncs_consumer.rdkafka, topic))
    for written in found:
        if replicates(written.sync.topic):
            out.append(written)
        else:
            others.add(written.sync.topic)
    if skipped:
        notes.append(f"{skipped} record(s) of '{topic}' on '{alias}' are not offset syncs: skipped")
    if others:
        names = sorted(others)
        notes.append(f"offset syncs of {len(names)} topic(s) the topic filter does not select now, not shown: "
                     f"{', '.join(names[:5])}{', ...' if len(names) > 5 else ''}")
    return out


def _read_checkpoints(flow: FlowConfig, notes: list[str]) -> list[tuple[Checkpoint, int]]:
    topic = flow.checkpoints_topic
    out, skipped = [], 0
    for record in read_internal_topic(flow.target, flow.target_consumer.rdkafka, topic):  # as MM2's MirrorClient
        try:
            out.append((decode_checkpoint(record.key, record.value), record.timestamp_ms))
        except OffsetCodecError:
            skipped += 1
    if skipped:
        notes.append(f"{skipped} record(s) of '{topic}' on '{flow.target}' are not checkpoints: skipped")
    return out


def _consumer_settings(flow: FlowConfig, notes: list[str]) -> Mapping[str, str]:
    """The replication consumer's settings (its isolation level decides which records count)."""
    try:
        return flow.source_consumer.rdkafka
    except ConfigError as exc:
        notes.append(f"the source consumer's settings cannot be used here ({'; '.join(exc.problems)}): the "
                     f"oldest unreplicated records were read with the admin settings of '{flow.source}'")
        return flow.source_admin.rdkafka


def _read_source(flow: FlowConfig, syncs: list[WrittenSync] | None, notes: list[str]
                 ) -> tuple[dict[TopicPartition, tuple[int, int]], dict[TopicPartition, int | None]]:
    """The source partitions the flow replicates (its filter selects them now), their watermarks, and the
    timestamp of the first unreplicated record of each."""
    admin = ClusterAdmin(flow.source, flow.source_admin.rdkafka)
    replicates = topic_selector(flow)
    topics = {topic: n for topic, n in admin.topic_partitions().items() if replicates(topic)}
    watermarks = {(topic, p): marks for topic, by_p in admin.watermarks_of(topics).items()
                  for p, marks in by_p.items()}
    if syncs is None:
        return watermarks, {}
    start = positions(syncs_by_partition(syncs), watermarks)
    ranges = {tp: (start[tp], high) for tp, (_, high) in watermarks.items()}
    return watermarks, oldest_records(_consumer_settings(flow, notes), ranges, OLDEST_RECORD_TIMEOUT_S)


def flow_status(flow: FlowConfig, clusters: _Clusters | None = None, runs: bool = True) -> FlowReport:
    """One flow's report, read from its clusters now. `runs` False: no sparkmirror process runs it (its file's
    coordination group says so), so records not copied yet are no copy in flight, however young."""
    clusters = clusters or _Clusters()
    notes: list[str] = []
    syncs: list[WrittenSync] | None = None
    checkpoints: list[tuple[Checkpoint, int]] = []
    watermarks, oldest = None, {}
    steps = ((flow.offset_syncs_cluster, "syncs"), (flow.target, "checkpoints"), (flow.source, "source"))
    for alias, step in steps:
        if not clusters.reachable(alias, _side(flow, alias)):
            continue
        try:
            if step == "syncs":
                syncs = read_offset_syncs(flow, notes)
            elif step == "checkpoints":
                checkpoints = _read_checkpoints(flow, notes)
            else:
                watermarks, oldest = _read_source(flow, syncs, notes)
        except ClusterUnreachableError as exc:
            clusters.lost(alias, exc)
    unreachable = [Unreachable(a, clusters.down[a]) for a in dict.fromkeys((flow.source, flow.target))
                   if a in clusters.down]
    return assemble_flow(flow.name, flow.source, flow.target, syncs, watermarks, oldest, checkpoints,
                         int(time.time() * 1000), unreachable, notes, in_flight=runs)


def read_status(config: MirrorMakerConfig | str | Path, flows: Sequence[FlowConfig] | None = None) -> StatusReport:
    """The report of `flows` (default: the enabled flows of `config`), each cluster probed once."""
    cfg = config if isinstance(config, MirrorMakerConfig) else load_config(config)
    clusters = _Clusters()
    owners = _owners(cfg, clusters)  # None: unknown (then a flow may be running)
    reports = tuple(flow_status(flow, clusters, runs=owners is None or bool(owners.get(flow.name)))
                    for flow in (cfg.enabled_flows() if flows is None else flows))
    if owners is not None:
        reports = tuple(replace(r, runs_in=owners.get(r.flow, "")) for r in reports)
    pairs = tuple(_pair_status(pair, clusters) for pair in cfg.heartbeat_only_pairs())
    return StatusReport(reports, pairs)


def _pair_status(pair: FlowConfig, clusters: _Clusters) -> PairReport:
    """A heartbeat-only pair's newest beat in its target's heartbeats topic (compacted: a record per pair)."""
    now_ms = int(time.time() * 1000)
    if not clusters.reachable(pair.target, pair.target_admin.rdkafka):
        return PairReport(pair.source, pair.target, UNREACHABLE, None, None, clusters.down[pair.target])
    newest = None
    try:
        for record in read_internal_topic(pair.target, pair.target_consumer.rdkafka, pair.heartbeats_topic):
            try:
                beat = decode_heartbeat(record.key, record.value)
            except OffsetCodecError:
                continue
            if (beat.source_alias, beat.target_alias) == (pair.source, pair.target):
                newest = max(newest or 0, beat.timestamp_ms)
    except ClusterUnreachableError as exc:
        clusters.lost(pair.target, exc)
        return PairReport(pair.source, pair.target, UNREACHABLE, None, None, str(exc))
    return pair_report(pair.source, pair.target, newest, pair.emit_heartbeats.interval_s, now_ms)


def _owners(config: MirrorMakerConfig, clusters: _Clusters) -> dict[str, str] | None:
    """flow -> the process that runs it, from the file's coordination group; None when it cannot be read."""
    plan = plan_coordination(config, None)
    if plan is None or not clusters.reachable(plan.cluster, plan.settings):
        return None
    try:
        members = group_members(plan.cluster, plan.settings, plan.group, PROBE_TIMEOUT_S)
    except SparkmirrorError:
        return None
    return {unit: member.client_id for unit, member in plan.owners(members).items()}
