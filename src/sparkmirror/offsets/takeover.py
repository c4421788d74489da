"""Where a flow continues MM2's copy: per partition, from MM2's committed position, its newest offset sync and
the remote partition's tail.

MM2 commits its source positions every `offset.flush.interval.ms` (60 s by default) and on a clean stop; what it
wrote after its last commit is on the target already, and MM2 itself would write it again after a restart. An
offset sync (upstream U written at downstream D) is sent only after the target acknowledged that record, and
MM2's producer keeps a partition's records in order, so every record up to U is on the target: the copy may
continue at U + 1 even when the committed position is older. What may then be copied twice is at most what the
remote partition holds after D. Comparing those records with the source's next ones (`match_tail`) finds
exactly where MM2 stopped when they are the same records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sparkmirror.model import KafkaRecord
from sparkmirror.offsets.syncs import OffsetSync

# Where a partition's start came from
FROM_COMMIT = "mm2 commit"  # MM2's committed source position
FROM_SYNC = "offset sync"  # one past MM2's newest offset sync, newer than its commit
FROM_TAIL = "tail match"  # past the records of the remote tail matched to the source's
FROM_RESET = "reset"  # MM2 left nothing for this partition: the flow's auto.offset.reset


@dataclass(frozen=True)
class PartitionTakeover:
    """One source partition's take-over: `start` is the first source offset the flow copies; at most
    `duplicates` records already on the remote partition may be copied again."""

    topic: str
    partition: int
    remote_topic: str
    committed: int | None  # MM2's committed next offset
    sync: OffsetSync | None  # MM2's newest offset sync of the partition
    remote_end: int
    source_end: int
    start: int
    duplicates: int
    basis: str
    tail: int | None = None  # the remote offset just past the sync, when the remote partition holds it

    def to_json(self) -> dict:
        return {"topic": self.topic, "partition": self.partition, "remote_topic": self.remote_topic,
                "mm2_committed": self.committed,
                "mm2_sync": None if self.sync is None else [self.sync.upstream_offset, self.sync.downstream_offset],
                "remote_end": self.remote_end, "source_end": self.source_end, "start": self.start,
                "duplicates_at_most": self.duplicates, "basis": self.basis}


def plan_partition(topic: str, partition: int, remote_topic: str, committed: int | None,
                   sync: OffsetSync | None, source_marks: tuple[int, int], remote_marks: tuple[int, int],
                   reset_latest: bool = False) -> PartitionTakeover:
    """The start and duplicate bound of one partition, before any tail comparison.

    A sync whose downstream offset is not in the remote partition now (the remote topic was re-created or
    truncated) is not used. Without a sync, every record on the remote partition may be a copy of one at or
    after the committed position; never more than the source holds from there.
    """
    source_low, source_end = source_marks
    remote_low, remote_end = remote_marks
    usable = sync if sync is not None and remote_low <= sync.downstream_offset < remote_end else None
    after_sync = None if usable is None else usable.upstream_offset + 1
    if committed is None and after_sync is None:
        start = source_end if reset_latest else source_low
        basis = FROM_RESET
    elif after_sync is not None and (committed is None or after_sync > committed):
        start, basis = after_sync, FROM_SYNC
    else:
        assert committed is not None
        start, basis = committed, FROM_COMMIT
    on_target = remote_end - remote_low if usable is None else remote_end - usable.downstream_offset - 1
    duplicates = max(0, min(on_target, source_end - max(start, source_low)))
    return PartitionTakeover(topic, partition, remote_topic, committed, sync, remote_end, source_end, start,
                             duplicates, basis, None if usable is None else usable.downstream_offset + 1)


def same_record(source: KafkaRecord, remote: KafkaRecord) -> bool:
    """Whether `remote` is MM2's copy of `source`: key, value, headers and timestamp as MM2 copies them."""
    return (source.key == remote.key and source.value == remote.value and source.headers == remote.headers
            and source.timestamp == remote.timestamp)


def match_tail(plan: PartitionTakeover, source: Sequence[KafkaRecord],
               remote: Sequence[KafkaRecord]) -> PartitionTakeover:
    """Narrow a plan by the remote tail: `remote` are all the records a consumer sees on the remote partition
    from `plan.tail` to its end (transaction markers and aborted records take offsets but are not records),
    `source` the source's records from one past the sync's upstream offset on (as many or more). MM2 copies
    every record in order, so the i-th of each is the same record; when all of them match, the target holds the
    source's records up to the last one matched, so the flow starts past it (or at MM2's commit, if later) and
    copies none again. Any difference (a transform changed records, a filter dropped some) leaves the plan as
    it was: its bound still holds."""
    if plan.tail is None or plan.sync is None or plan.duplicates == 0 or len(source) < len(remote):
        return plan
    if not all(same_record(s, r) for s, r in zip(source[:len(remote)], remote, strict=True)):
        return plan
    copied_to = source[len(remote) - 1].offset + 1 if remote else plan.sync.upstream_offset + 1
    start = max(plan.start, copied_to)
    return replace(plan, start=start, duplicates=0, basis=FROM_TAIL if start > plan.start else plan.basis)
