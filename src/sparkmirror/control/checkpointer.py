"""Checkpointer: MM2's checkpoint connector for one flow: checkpoints and (optionally) group offset sync.

Every `emit.checkpoints.interval.seconds` it reads the new offset syncs, the committed offsets of the
source's groups (filtered by `groups`/`groups.exclude`), translates them (offsets/translation.py) and writes
the checkpoints that are more recent to `<source>.checkpoints.internal` on the target. At start it reads
that topic back, so checkpoints stay monotonic across restarts. Every `sync.group.offsets.interval.seconds`
it commits the latest checkpoints to the same groups on the target when they are idle there.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sparkmirror.config.model import FlowConfig
from sparkmirror.control.ports import GroupAdmin, LogReader, LogRecord, LogWriter
from sparkmirror.offsets.checkpoints import (
    IDLE_STATES,
    CheckpointKey,
    latest_checkpoints,
    plan_checkpoints,
    plan_group_sync,
)
from sparkmirror.offsets.codec import Checkpoint, OffsetCodecError, decode_checkpoint, encode_checkpoint
from sparkmirror.offsets.syncs import index_syncs
from sparkmirror.offsets.translation import SyncIndex
from sparkmirror.sampled import Distribution, SampledStat

logger = logging.getLogger(__name__)

MAX_SYNCS_PER_PARTITION = 200_000  # only a source with a discontinuity per record gets near it


def decode_checkpoints(records: Sequence[LogRecord], where: str) -> list[Checkpoint]:
    out = []
    for record in records:
        try:
            out.append(decode_checkpoint(record.key, record.value))
        except OffsetCodecError as exc:  # MM2's readers skip such records too
            logger.warning("%s offset %d is not a checkpoint, skipped: %s", where, record.offset, exc)
    return out


@dataclass(frozen=True, slots=True)
class CheckpointMetrics:
    """MM2's checkpoint-latency-ms per (group, remote topic, partition): the time from planning a checkpoint
    to the target's acknowledgement of its write, over the metrics window. Plus sparkmirror's checkpoint lag
    per group: committed source offsets minus the upstream offsets of their latest checkpoints, summed over the
    group's checkpointed partitions (records of progress a failover would not know about yet)."""

    latency_ms: Mapping[CheckpointKey, Distribution]
    group_lag: Mapping[str, int]


class Checkpointer:
    """Runs on its flow's loop (one thread at a time); `remote_topics` gives the flow's current source -> remote
    topics and `source_partitions` the source's topics -> partition counts (TopicAdmin.topic_partitions).

    Its clients are handed in: the source's and the target's groups, a reader of the offset syncs, a writer
    and a one-off reader of the checkpoints topic on the target.
    """

    def __init__(self, flow: FlowConfig, source_groups: GroupAdmin, target_groups: GroupAdmin, syncs: LogReader,
                 writer: LogWriter, read_checkpoints: Callable[[], Sequence[LogRecord]],
                 remote_topics: Callable[[], Mapping[str, str]],
                 source_partitions: Callable[[], Mapping[str, int]]) -> None:
        self.flow = flow
        self._remote_topics = remote_topics
        self._source_partitions = source_partitions
        self._source_groups = source_groups
        self._target_groups = target_groups
        self._syncs = syncs
        self._syncs_where = f"cluster '{flow.offset_syncs_cluster}' topic '{flow.offset_syncs_topic}'"
        self._writer = writer
        self._read_checkpoints = read_checkpoints
        self.index = SyncIndex()
        self.last: dict[CheckpointKey, Checkpoint] = {}
        self._metrics_lock = threading.Lock()  # metrics are read from other threads
        self._latency: dict[CheckpointKey, SampledStat] = {}
        self._group_lag: dict[str, int] = {}

    def load(self) -> None:
        """Read back the checkpoints already written (the topic exists: the flow's control plane made it)."""
        where = f"cluster '{self.flow.target}' topic '{self.flow.checkpoints_topic}'"
        self.last = latest_checkpoints(decode_checkpoints(self._read_checkpoints(), where))
        logger.info("flow %s: %d checkpoints loaded from %s", self.flow.name, len(self.last), where)

    def emit(self) -> int:
        """One checkpoint round; returns how many checkpoints were written."""
        for offset, why in index_syncs(self._syncs.read_new(), self.index):
            logger.warning("%s offset %d is not an offset sync, skipped: %s", self._syncs_where, offset, why)
        self._bound_index()
        group_filter = self.flow.group_filter
        groups = [g for g in self._source_groups.list_groups() if group_filter.should_replicate_group(g)]
        if not groups:
            return 0
        remote_topics = self._remote_topics()
        partitions = self._checkpointable(remote_topics)
        committed = (self._source_groups.committed(groups, partitions) if partitions
                     else {group: {} for group in groups})
        planned = time.monotonic()
        plan = plan_checkpoints(committed, remote_topics, self.index, self.last)
        for (group, topic, partition), why in plan.untranslated.items():
            logger.debug("flow %s: no checkpoint for group %s %s-%d: %s", self.flow.name, group, topic,
                         partition, why.reason)
        if plan.emit:
            self._writer.write(self.flow.checkpoints_topic, [encode_checkpoint(c) for c in plan.emit])
            acked = time.monotonic()
            for checkpoint in plan.emit:
                self.last[(checkpoint.group, checkpoint.topic, checkpoint.partition)] = checkpoint
            self._record_latency(plan.emit, (acked - planned) * 1000, acked)
            logger.info("flow %s: %d checkpoint(s) for %d group(s) written to %s", self.flow.name,
                        len(plan.emit), len({c.group for c in plan.emit}), self.flow.checkpoints_topic)
        self._record_group_lag(committed, remote_topics)
        return len(plan.emit)

    def _checkpointable(self, remote_topics: Mapping[str, str]) -> set[tuple[str, int]]:
        """The source partitions whose committed offsets a checkpoint (plan_checkpoints) or the group lag can use:
        those of the replicated topics with offset syncs. A partition without a sync of its own counts too (a
        group that consumed nothing there is checkpointed at 0), so every partition of those topics is asked for;
        groups' offsets elsewhere are not read."""
        mirrored = {topic for topic in self.index.topics() if topic in remote_topics}
        if not mirrored:
            return set()
        counts = self._source_partitions()
        return ({(topic, p) for topic in mirrored for p in range(counts.get(topic, 0))}
                | {tp for tp in self.index.partitions if tp[0] in mirrored})

    def _record_latency(self, emitted: Sequence[Checkpoint], latency_ms: float, now_s: float) -> None:
        with self._metrics_lock:
            for c in emitted:
                self._latency.setdefault((c.group, c.topic, c.partition), SampledStat()).record(now_s, latency_ms)

    def _record_group_lag(self, committed: Mapping[str, Mapping[tuple[str, int], tuple[int, str]]],
                          remote_topics: Mapping[str, str]) -> None:
        lag: dict[str, int] = {}
        for group, offsets in committed.items():
            for (topic, partition), (offset, _metadata) in offsets.items():
                latest = self.last.get((group, remote_topics.get(topic, ""), partition))
                if latest is not None:
                    lag[group] = lag.get(group, 0) + max(0, offset - latest.upstream_offset)
        with self._metrics_lock:
            self._group_lag = lag

    def metrics(self) -> CheckpointMetrics:
        """A snapshot for the metrics endpoint; safe from any thread."""
        now = time.monotonic()
        with self._metrics_lock:
            return CheckpointMetrics({k: s.distribution(now) for k, s in self._latency.items()},
                                     dict(self._group_lag))

    def sync_group_offsets(self) -> int:
        """Commit the latest checkpoints to idle groups on the target; returns how many offsets moved."""
        groups = sorted({c.group for c in self.last.values()})
        if not groups:
            return 0
        active = {g: state for g, state in self._target_groups.states(groups).items() if state not in IDLE_STATES}
        idle = [g for g in groups if g not in active]
        # plan_group_sync compares each idle group's checkpoints with its offsets on those partitions only.
        idle_groups = set(idle)
        checkpointed = {(c.topic, c.partition) for c in self.last.values() if c.group in idle_groups}
        plan = plan_group_sync(self.last, active, self._target_groups.committed(idle, checkpointed) if idle else {})
        for group, why in plan.skipped.items():
            logger.info("flow %s: group %s not synced to '%s': %s", self.flow.name, group, self.flow.target, why)
        moved = 0
        for group, offsets in plan.commit.items():
            try:
                self._target_groups.commit(group, offsets, keep=False)  # refused once a consumer joined
            except Exception as exc:  # noqa: BLE001 - a member joined since describe; the next round retries
                logger.warning("flow %s: group %s not synced to '%s': %s", self.flow.name, group,
                               self.flow.target, exc)
                continue
            moved += len(offsets)
            logger.info("flow %s: group %s synced to '%s' on %d partition(s)", self.flow.name, group,
                        self.flow.target, len(offsets))
        return moved

    def _bound_index(self) -> None:
        for key, syncs in self.index.partitions.items():
            if len(syncs) > MAX_SYNCS_PER_PARTITION:
                dropped_below = syncs.points[len(syncs) // 2].upstream
                syncs.prune(dropped_below)
                logger.warning("flow %s: more than %d offset syncs kept for %s-%d; offsets below %d can no "
                               "longer be translated", self.flow.name, MAX_SYNCS_PER_PARTITION, key[0], key[1],
                               dropped_below)

    def close(self) -> None:
        self._syncs.close()
        self._writer.close()
