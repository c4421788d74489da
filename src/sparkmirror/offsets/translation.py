"""Offset translation from offset syncs, in both directions, exact wherever the syncs allow it.

MM2 keeps a sparse sample of syncs and translates a committed offset to one past the nearest sync below
it, so a consumer that fails over re-reads up to `offset.lag.max` records or more. sparkmirror's writer
reports a sync around every discontinuity and tags each one with a `SyncLink` saying what lies between it
and the next (offsets/syncs.py), so an offset between two syncs maps exactly. Syncs without a link (written
by MM2) are translated the way MM2 does: one past the sync, never beyond, so nothing is skipped.

A committed offset is the position of the first record the consumer has not processed; translations keep
that meaning on the other side.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

from sparkmirror.offsets.syncs import SYNC_END, SYNC_GAP, SYNC_RUN, OffsetSync, SyncLink

TopicPartition = tuple[str, int]


@dataclass(frozen=True, slots=True)
class SyncPoint:
    upstream: int
    downstream: int
    link: SyncLink | None = None  # None: written without sparkmirror's link header (e.g. by MM2)


@dataclass(frozen=True, slots=True)
class Translation:
    """Where a consumer resumes on the other cluster. `offset` None: it cannot be translated (`reason`).

    `exact`: it resumes at exactly the first record it has not processed. Otherwise it may see up to
    `reread` records again (None: unknown bound); it never misses one.
    """

    offset: int | None
    exact: bool
    reread: int | None = 0
    reason: str = ""

    @property
    def status(self) -> str:
        return "untranslatable" if self.offset is None else "exact" if self.exact else "at-least-once"


class PartitionSyncs:
    """The usable offset syncs of one source partition, ordered by both offsets.

    Contiguous runs are merged, so a partition without gaps keeps a handful of points however long it runs.
    An upstream rewind (the flow re-replicated records after a crash) keeps the newer mapping from the
    rewind point on; a downstream rewind (the remote topic was re-created) drops everything before it.
    """

    def __init__(self) -> None:
        self.points: list[SyncPoint] = []
        self._ups: list[int] = []
        self._downs: list[int] = []

    def __len__(self) -> int:
        return len(self.points)

    def add(self, point: SyncPoint) -> None:
        if self.points:
            last = self.points[-1]
            if point.upstream <= last.upstream:
                self._rewind_to(point.upstream)
            elif point.downstream <= last.downstream:
                self._truncate(0)
        if self.points:
            last = self.points[-1]
            if (last.link is not None and last.link.kind != SYNC_RUN and point.link is not None
                    and point.upstream == last.upstream + 1 and point.downstream == last.downstream + 1):
                self._replace_last(SyncPoint(last.upstream, last.downstream, SyncLink(SYNC_RUN)))
            # a run into `last` and a run out of it: `last` tells nothing the neighbours do not
            if (len(self.points) >= 2 and _is_run(self.points[-2]) and _is_run(self.points[-1])
                    and point.upstream - self._ups[-2] == point.downstream - self._downs[-2]):
                self._truncate(len(self.points) - 1)
        self.points.append(point)
        self._ups.append(point.upstream)
        self._downs.append(point.downstream)

    def prune(self, below_upstream: int) -> None:
        """Forget syncs not needed to translate upstream offsets >= below_upstream (nor their downstream)."""
        keep_from = max(bisect_right(self._ups, below_upstream) - 1, 0)
        if keep_from:
            del self.points[:keep_from], self._ups[:keep_from], self._downs[:keep_from]

    def _rewind_to(self, upstream: int) -> None:
        """Drop the mapping of offsets >= upstream; a run cut short ends in a point of its own."""
        self._truncate(bisect_left(self._ups, upstream))
        if not self.points:
            return
        last = self.points[-1]
        if _is_run(last):
            end = upstream - 1
            if end > last.upstream:  # the run now leads up to `end`, the last record of the old mapping
                cut = SyncPoint(end, last.downstream + end - last.upstream, SyncLink(SYNC_GAP))
                self.points.append(cut)
                self._ups.append(cut.upstream)
                self._downs.append(cut.downstream)
            else:
                self._replace_last(SyncPoint(last.upstream, last.downstream, SyncLink(SYNC_GAP)))

    def _truncate(self, length: int) -> None:
        del self.points[length:], self._ups[length:], self._downs[length:]

    def _replace_last(self, point: SyncPoint) -> None:
        self.points[-1] = point

    # -- upstream -> downstream ----------------------------------------------------------------------------
    def downstream(self, committed: int) -> Translation:
        """Translate a group's committed source offset to the target's remote partition."""
        i = bisect_right(self._ups, committed) - 1
        if i < 0:
            return _before_first(committed, self._ups, "upstream", "where the records before it are on the target")
        p = self.points[i]
        if p.upstream == committed:
            return Translation(p.downstream, True)
        q = self.points[i + 1] if i + 1 < len(self.points) else None
        after = p.downstream + 1
        if p.link is None:
            return Translation(after, False, None if q is None else q.downstream - after,
                               "translated from an offset sync without sparkmirror's link (written by MM2): "
                               "one past the sync")
        if q is not None and p.link.kind == SYNC_RUN:
            return Translation(p.downstream + committed - p.upstream, True)
        if q is not None and p.link.kind == SYNC_GAP:
            return Translation(q.downstream, True)
        read_to = _read_to(p)
        if q is not None:
            if q.upstream <= read_to or q.downstream == after:
                return Translation(q.downstream, True)
            return Translation(after, False, q.downstream - after,
                               f"source offsets {read_to}..{q.upstream - 1} fell between two micro-batches")
        if committed <= read_to:
            return Translation(after, True)
        return Translation(after, False, committed - read_to,
                           f"the group is ahead of replication: source offsets {read_to}..{committed - 1} "
                           f"are not replicated yet")

    # -- downstream -> upstream ----------------------------------------------------------------------------
    def upstream(self, committed: int) -> Translation:
        """Translate a group's committed offset on the remote partition back to the source partition."""
        j = bisect_right(self._downs, committed) - 1
        if j < 0:
            return _before_first(committed, self._downs, "downstream", "where the records before it came from")
        p = self.points[j]
        if p.downstream == committed:
            return Translation(p.upstream, True)
        q = self.points[j + 1] if j + 1 < len(self.points) else None
        if p.link is None:
            return Translation(p.upstream + 1, False, None if q is None else q.upstream - p.upstream - 1,
                               "translated from an offset sync without sparkmirror's link (written by MM2): "
                               "one past the sync")
        if q is not None and p.link.kind == SYNC_RUN:
            return Translation(p.upstream + committed - p.downstream, True)
        if q is not None and p.link.kind == SYNC_GAP:
            return Translation(q.upstream, True)
        if q is None and p.link.kind != SYNC_END:  # the syncs after it are not written (yet)
            exact = committed == p.downstream + 1
            return Translation(p.upstream + 1, exact, 0 if exact else None,
                               "" if exact else "the offset syncs after this one are not written yet")
        read_to = _read_to(p)
        if q is not None and q.upstream > read_to:
            return Translation(read_to, False, q.upstream - read_to,
                               f"source offsets {read_to}..{q.upstream - 1} fell between two micro-batches")
        return Translation(q.upstream if q is not None else read_to, True)


def _before_first(committed: int, offsets: list[int], side: str, unknown: str) -> Translation:
    """A committed offset below every sync (or with no sync at all)."""
    if not offsets:
        if committed == 0:
            return Translation(0, True, reason="nothing consumed and nothing replicated")
        return Translation(None, False, None, "no offset sync for this partition: none of its records has been "
                                              "replicated yet")
    return Translation(None, False, None, f"offset {committed} is older than the oldest offset sync ({side} "
                                          f"offset {offsets[0]}): {unknown} is not known")


def _is_run(point: SyncPoint) -> bool:
    return point.link is not None and point.link.kind == SYNC_RUN


def _read_to(point: SyncPoint) -> int:
    """How far the flow had read the source when it wrote this sync (exclusive)."""
    if point.link is not None and point.link.kind == SYNC_END and point.link.next_upstream is not None:
        return max(point.link.next_upstream, point.upstream + 1)
    return point.upstream + 1


class SyncIndex:
    """The offset syncs of one flow, per source partition."""

    def __init__(self) -> None:
        self.partitions: dict[TopicPartition, PartitionSyncs] = {}

    def add(self, sync: OffsetSync, link: SyncLink | None) -> None:
        key = (sync.topic, sync.partition)
        syncs = self.partitions.get(key)
        if syncs is None:
            syncs = self.partitions[key] = PartitionSyncs()
        syncs.add(SyncPoint(sync.upstream_offset, sync.downstream_offset, link))

    def extend(self, syncs: Iterable[tuple[OffsetSync, SyncLink | None]]) -> None:
        for sync, link in syncs:
            self.add(sync, link)

    def topics(self) -> set[str]:
        return {topic for topic, _ in self.partitions}

    def get(self, topic: str, partition: int) -> PartitionSyncs:
        return self.partitions.get((topic, partition)) or PartitionSyncs()
