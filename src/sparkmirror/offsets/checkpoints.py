"""Which checkpoints to emit and which group offsets to commit on the target: MM2's rules, pure.

- A checkpoint is emitted when it is the first for its (group, remote topic, partition), when the upstream
  group rewound, or when the downstream offset advanced (MM2's checkpointIsMoreRecent). So checkpoints never
  move backwards unless the group itself did.
- Topics with no replicated record get no checkpoint (MM2's KAFKA-12635); an empty partition of a
  replicated topic does, at 0.
- Group offsets are written on the target only for groups with no active member there, and never
  backwards (MM2's syncGroupOffset for idle groups).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sparkmirror.offsets.codec import Checkpoint
from sparkmirror.offsets.translation import SyncIndex, Translation

CheckpointKey = tuple[str, str, int]  # group, remote topic, partition
GroupOffsets = Mapping[tuple[str, int], tuple[int, str]]  # (topic, partition) -> (offset, metadata)


def key_of(checkpoint: Checkpoint) -> CheckpointKey:
    return checkpoint.group, checkpoint.topic, checkpoint.partition


def is_more_recent(new: Checkpoint, last: Checkpoint | None) -> bool:
    return (last is None or new.upstream_offset < last.upstream_offset
            or new.downstream_offset > last.downstream_offset)


def latest_checkpoints(records: Iterable[Checkpoint], group: str | None = None) -> dict[CheckpointKey, Checkpoint]:
    """The last checkpoint per key in topic order, as MM2's RemoteClusterUtils and CheckpointStore keep."""
    out: dict[CheckpointKey, Checkpoint] = {}
    for checkpoint in records:
        if group is None or checkpoint.group == group:
            out[key_of(checkpoint)] = checkpoint
    return out


@dataclass(frozen=True)
class CheckpointPlan:
    emit: list[Checkpoint]
    untranslated: dict[CheckpointKey, Translation]  # keyed by upstream topic: why no checkpoint


def plan_checkpoints(groups: Mapping[str, GroupOffsets], remote_topics: Mapping[str, str], index: SyncIndex,
                     last: Mapping[CheckpointKey, Checkpoint]) -> CheckpointPlan:
    """Checkpoints for the committed source offsets of `groups` on the topics the flow replicates."""
    mirrored = index.topics()
    emit, untranslated = [], {}
    for group, offsets in sorted(groups.items()):
        for (topic, partition), (offset, metadata) in sorted(offsets.items()):
            remote = remote_topics.get(topic)
            if remote is None or topic not in mirrored:
                continue
            translation = index.get(topic, partition).downstream(offset)
            if translation.offset is None:
                untranslated[(group, topic, partition)] = translation
                continue
            checkpoint = Checkpoint(group, remote, partition, offset, translation.offset, metadata)
            if is_more_recent(checkpoint, last.get(key_of(checkpoint))):
                emit.append(checkpoint)
    return CheckpointPlan(emit, untranslated)


@dataclass(frozen=True)
class GroupSyncPlan:
    commit: dict[str, dict[tuple[str, int], tuple[int, str]]]  # group -> offsets to write on the target
    skipped: dict[str, str]  # group -> why nothing is written


IDLE_STATES = frozenset({"EMPTY", "DEAD"})  # a group in another state has consumers in it (or is joining)


def plan_group_sync(checkpoints: Mapping[CheckpointKey, Checkpoint], active: Mapping[str, str],
                    target_offsets: Mapping[str, GroupOffsets]) -> GroupSyncPlan:
    """Translated offsets to commit for each checkpointed group that is idle on the target. `active`: the groups
    with consumers on the target, with their state (STABLE, PREPARING_REBALANCE, ...)."""
    by_group: dict[str, list[Checkpoint]] = {}
    for checkpoint in checkpoints.values():
        by_group.setdefault(checkpoint.group, []).append(checkpoint)
    commit, skipped = {}, {}
    for group, cps in sorted(by_group.items()):
        state = active.get(group)
        if state is not None:
            skipped[group] = f"{state} on the target, with consumers in it: it consumes there, so it is left alone"
            continue
        current = target_offsets.get(group, {})
        changes = {}
        for cp in cps:
            now = current.get((cp.topic, cp.partition))
            if now is None or now[0] < cp.downstream_offset:
                changes[(cp.topic, cp.partition)] = (cp.downstream_offset, cp.metadata)
        if changes:
            commit[group] = changes
    return GroupSyncPlan(commit, skipped)
