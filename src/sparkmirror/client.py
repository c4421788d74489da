"""Offsets across clusters, from Python: translate a group's offsets, fail it over and back.

The same functions back `sparkmirror offsets translate`, `sparkmirror failover` and `sparkmirror failback`.
They read MM2-format internal topics, so they work with checkpoints and offset syncs written by sparkmirror
or by MM2 (whose sparse syncs translate as MM2 does: at least once).

    from sparkmirror import client
    plan = client.failover("mm2.properties", "orders-app", "A", "B")           # a dry run
    for p in plan.partitions: print(p.topic, p.partition, p.downstream_offset, p.status)
    client.failover("mm2.properties", "orders-app", "A", "B", apply=True)     # commit them on B
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sparkmirror.config.mm2 import MirrorMakerConfig, load_config
from sparkmirror.config.model import FlowConfig
from sparkmirror.errors import AdminOperationError, ClusterUnreachableError, SparkmirrorError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.groups import ConsumerGroups
from sparkmirror.kafka.internal_log import read_internal_topic
from sparkmirror.kafka.records import read_range
from sparkmirror.offsets.checkpoints import CheckpointKey, key_of, latest_checkpoints
from sparkmirror.offsets.codec import Checkpoint, decode_checkpoint
from sparkmirror.offsets.drill import DrillPartition, judge_partition
from sparkmirror.offsets.failover import (
    FlowSyncs,
    PartitionTranslation,
    plan_from_checkpoints,
    plan_move,
    unreplicated_offsets,
    with_lag,
)
from sparkmirror.offsets.syncs import OffsetSync, decode_offset_sync, index_syncs
from sparkmirror.offsets.translation import SyncIndex
from sparkmirror.pipeline.class_host import ensure_class_host
from sparkmirror.policy.replication import should_replicate_topic

__all__ = ["DrillReport", "OffsetTranslation", "PartitionTranslation", "drill", "failback", "failover",
           "read_checkpoints", "read_offset_syncs", "translate_offsets"]

logger = logging.getLogger(__name__)

ConfigLike = MirrorMakerConfig | str | Path
PROBE_TIMEOUT_S = 5.0


class FailoverRefused(SparkmirrorError):  # reads as what happened
    """`apply` would be unsafe (active members on the destination, untranslatable partitions)."""


@dataclass(frozen=True)
class OffsetTranslation:
    """A group's offsets on `source` translated to `target`; `method` says what they were read from."""

    group: str
    source: str
    target: str
    method: str  # "live": committed offsets and offset syncs; "checkpoints": `source` was unreachable
    partitions: list[PartitionTranslation]
    warnings: list[str] = field(default_factory=list)
    applied: bool = False

    @property
    def untranslatable(self) -> list[PartitionTranslation]:
        return [p for p in self.partitions if p.downstream_offset is None]

    def to_json(self) -> dict:
        from dataclasses import asdict

        return {"group": self.group, "source": self.source, "target": self.target, "method": self.method,
                "applied": self.applied, "warnings": self.warnings,
                "partitions": [asdict(p) for p in self.partitions]}


def _config(config: ConfigLike) -> MirrorMakerConfig:
    ensure_class_host()  # a file's own replication policy and filters run in a JVM, started when first asked
    return config if isinstance(config, MirrorMakerConfig) else load_config(config)


def _settings(flow: FlowConfig, alias: str) -> Mapping[str, str]:
    side = flow.source_admin if alias == flow.source else flow.target_admin
    return side.rdkafka


def _sync_records(flow: FlowConfig):  # list of InternalRecord
    """The offset syncs, read with the consumer settings MM2's checkpoint task reads them with."""
    return read_internal_topic(flow.offset_syncs_cluster, flow.offset_syncs_consumer.rdkafka, flow.offset_syncs_topic)


def read_offset_syncs(config: ConfigLike, source: str, target: str) -> list[OffsetSync]:
    """Every offset sync of the flow source->target, in the order written."""
    flow = _config(config).flow(source, target)
    return [decode_offset_sync(r.key, r.value) for r in _sync_records(flow)]


def _sync_index(flow: FlowConfig) -> SyncIndex:
    alias, topic = flow.offset_syncs_cluster, flow.offset_syncs_topic
    index = SyncIndex()
    for offset, why in index_syncs(_sync_records(flow), index):  # skipped, as MM2's readers do
        logger.warning("cluster '%s' topic '%s' offset %d is not an offset sync, skipped: %s", alias, topic, offset,
                       why)
    return index


def _checkpoint_records(flow: FlowConfig) -> list[tuple[Checkpoint, int]]:
    """The checkpoints, read with the target's consumer settings (as MM2's MirrorClient reads them)."""
    records = read_internal_topic(flow.target, flow.target_consumer.rdkafka, flow.checkpoints_topic)
    return [(decode_checkpoint(r.key, r.value), r.timestamp_ms) for r in records]


def read_checkpoints(config: ConfigLike, source: str, target: str,
                     group: str | None = None) -> dict[CheckpointKey, Checkpoint]:
    """The latest checkpoint per (group, remote topic, partition) in `<source>.checkpoints.internal` on
    `target`, as MM2's RemoteClusterUtils reads them."""
    flow = _config(config).flow(source, target)
    return latest_checkpoints((c for c, _ in _checkpoint_records(flow)), group)


def _reachable(admin: ClusterAdmin) -> bool:
    try:
        admin.probe(PROBE_TIMEOUT_S)
    except ClusterUnreachableError:
        return False
    return True


def _ends(admin: ClusterAdmin, partitions: set[tuple[str, int]]) -> dict[tuple[str, int], int]:
    existing = admin.topic_partitions()
    out = {}
    for topic in sorted({t for t, _ in partitions}):
        if topic in existing:
            for partition, (_, high) in admin.watermarks(topic, existing[topic]).items():
                out[(topic, partition)] = high
    return out


def translate_offsets(config: ConfigLike, group: str, source: str, target: str) -> OffsetTranslation:
    """Where `group`, consuming on `source`, resumes on `target`: per partition its committed offset, the
    translated offset, the lag there and what may be re-read or not replicated yet.

    With `source` reachable the group's committed offsets are translated with the offset syncs (exact for
    sparkmirror's); otherwise the latest checkpoints on `target` are used.
    """
    cfg = _config(config)
    forward = cfg.flow(source, target)
    reverse = cfg.flow(target, source)
    warnings: list[str] = []
    target_admin = ClusterAdmin(target, _settings(forward, target))
    target_admin.probe(PROBE_TIMEOUT_S)
    source_admin = ClusterAdmin(source, _settings(forward, source))
    if not _reachable(source_admin):
        checkpoints = _checkpoint_records(forward)
        latest = latest_checkpoints((c for c, _ in checkpoints), group)
        written = {key_of(c): ts for c, ts in checkpoints if c.group == group}
        rows = plan_from_checkpoints(latest, group, _flow_syncs(forward, SyncIndex()).upstream_topic, written,
                                     int(time.time() * 1000))
        warnings.append(f"cluster '{source}' is unreachable: offsets come from the checkpoints on '{target}'; "
                        f"records not replicated before it went down are not on '{target}'")
        if not rows:
            warnings.append(f"no checkpoint for group '{group}' in "
                            f"'{forward.checkpoints_topic}' on '{target}'")
        ends = _ends(target_admin, {(r.remote_topic, r.partition) for r in rows if r.remote_topic})
        return OffsetTranslation(group, source, target, "checkpoints", with_lag(rows, ends), warnings)
    # Every partition of the source: plan_move reports each committed offset, those of topics no flow replicates
    # too (as untranslatable), and Kafka drops the offsets of deleted topics.
    every_partition = [(topic, p) for topic, count in source_admin.topic_partitions().items() for p in range(count)]
    committed = ConsumerGroups(source, _settings(forward, source)).committed([group], every_partition).get(group, {})
    if not committed:
        warnings.append(f"group '{group}' has no committed offsets on '{source}'")
    forward_syncs = _flow_syncs(forward, _sync_index(forward))
    reverse_syncs = _reverse_syncs(reverse, warnings)
    rows = plan_move(committed, source, target, forward_syncs, reverse_syncs)
    ends = _ends(target_admin, {(r.remote_topic, r.partition) for r in rows if r.remote_topic})
    source_ends = _ends(source_admin,
                        {(r.topic, r.partition) for r in rows if r.route == "offset syncs"})
    return OffsetTranslation(group, source, target, "live",
                             with_lag(rows, ends, unreplicated_offsets(forward_syncs, source_ends)), warnings)


def _reverse_syncs(flow: FlowConfig, warnings: list[str]) -> FlowSyncs | None:
    """The syncs of target->source (for topics that are copies of the target's), when they can be read: in a
    one-way set-up under an authorizer, the consumer may not describe a topic that no flow writes."""
    alias, topic = flow.offset_syncs_cluster, flow.offset_syncs_topic
    try:
        index = _sync_index(flow)
    except (ClusterUnreachableError, AdminOperationError) as exc:
        warnings.append(f"offset syncs of {flow.name} ('{topic}' on '{alias}') cannot be read: {exc}")
        return None
    return _flow_syncs(flow, index)


def _flow_syncs(flow: FlowConfig, index: SyncIndex) -> FlowSyncs:
    policy = flow.policy

    def upstream_topic(topic: str) -> str | None:
        return policy.upstream_topic(topic) if policy.topic_source(topic) == flow.source else None

    topic_filter = flow.topic_filter

    def replicates(topic: str) -> bool:
        return should_replicate_topic(topic, topic_filter, policy, flow.target,
                                      flow.heartbeats_replication_enabled)

    return FlowSyncs(flow.source, flow.target, lambda topic: policy.format_remote_topic(flow.source, topic),
                     upstream_topic, index, replicates)


def _move(config: ConfigLike, group: str, source: str, target: str, apply: bool,
          allow_untranslated: bool) -> OffsetTranslation:
    cfg = _config(config)
    plan = translate_offsets(cfg, group, source, target)
    if not apply:
        return plan
    if plan.untranslatable and not allow_untranslated:
        names = ", ".join(f"{p.topic}-{p.partition}" for p in plan.untranslatable)
        raise FailoverRefused(f"not applied: {len(plan.untranslatable)} partition(s) cannot be translated ({names}); "
                              f"see the plan, then pass allow_untranslated (--allow-untranslated) to commit the "
                              f"others and let those start at the consumer's auto.offset.reset")
    flow = cfg.flow(source, target)
    groups = ConsumerGroups(target, _settings(flow, target))
    state = groups.describe([group]).get(group)
    if state is not None and state.members:
        raise FailoverRefused(f"not applied: group '{group}' has {state.members} active member(s) on cluster "
                              f"'{target}'; stop those consumers first, then apply again")
    offsets = {(p.remote_topic, p.partition): (p.downstream_offset, p.metadata) for p in plan.partitions
               if p.remote_topic is not None and p.downstream_offset is not None}
    if offsets:
        groups.alter_offsets(group, offsets)
    return OffsetTranslation(plan.group, plan.source, plan.target, plan.method, plan.partitions, plan.warnings,
                             applied=bool(offsets))


def failover(config: ConfigLike, group: str, source: str, target: str, apply: bool = False,
             allow_untranslated: bool = False) -> OffsetTranslation:
    """Move `group` from `source` (possibly down) to `target`. A dry run unless `apply`: then commit the
    translated offsets on `target`, refusing while the group has active members there."""
    return _move(config, group, source, target, apply, allow_untranslated)


def failback(config: ConfigLike, group: str, source: str, target: str, apply: bool = False,
             allow_untranslated: bool = False) -> OffsetTranslation:
    """Return `group` from `source` (where it failed over to) to the recovered `target`: its copies of
    target's topics translate back through the target->source flow's syncs; topics local to `source` go
    forward through source->target, as in failover."""
    return _move(config, group, source, target, apply, allow_untranslated)


DRILL_WINDOW = 1000  # source records read on each side of a committed offset


@dataclass(frozen=True)
class DrillReport:
    """A failover drill of one group: per partition what it would re-read and miss; nothing was changed."""

    group: str
    source: str
    target: str
    partitions: list[DrillPartition]
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.partitions)

    def to_json(self) -> dict:
        from dataclasses import asdict

        return {"group": self.group, "source": self.source, "target": self.target, "ok": self.ok,
                "warnings": self.warnings, "partitions": [asdict(p) for p in self.partitions]}


def drill(config: ConfigLike, group: str, source: str, target: str, window: int = DRILL_WINDOW) -> DrillReport:
    """Rehearse `group`'s failover from `source` to `target` without moving it: translate its committed offsets,
    read the record it would read first on `target` and find it among the records it would read next on
    `source` (offsets/drill.py). Reads only: no offset is committed anywhere."""
    plan = translate_offsets(config, group, source, target)
    if plan.method != "live":
        raise FailoverRefused(f"cluster '{source}' does not answer: a drill compares both clusters' records, so it "
                              f"needs both; `sparkmirror failover` works from the checkpoints alone")
    forward = _config(config).flow(source, target)
    source_settings, target_settings = _settings(forward, source), _settings(forward, target)
    source_admin = ClusterAdmin(source, source_settings)
    counts: dict[str, int] = {}
    for t in plan.partitions:
        if t.remote_topic is not None and t.downstream_offset is not None:
            counts[t.topic] = max(counts.get(t.topic, 0), t.partition + 1)
    marks = source_admin.watermarks_of(counts) if counts else {}  # every partition's, in one round
    rows = []
    for t in plan.partitions:
        if t.remote_topic is None or t.downstream_offset is None:
            rows.append(judge_partition(t.topic, t.partition, t.upstream_offset, t.remote_topic, None, [], None, 0,
                                        t.note))
            continue
        low, high = marks[t.topic][t.partition]
        around = read_range(source_settings, t.topic, t.partition, max(low, t.upstream_offset - window),
                            min(high, t.upstream_offset + window))
        first = read_range(target_settings, t.remote_topic, t.partition, t.downstream_offset,
                           t.downstream_offset + window)[:1]
        rows.append(judge_partition(t.topic, t.partition, t.upstream_offset, t.remote_topic, t.downstream_offset,
                                    around, first[0] if first else None, high))
    return DrillReport(group, source, target, rows, list(plan.warnings))
