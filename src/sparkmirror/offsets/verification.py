"""What `sparkmirror verify` compares and what it concludes. Pure.

A partition's source records in `[source_from, source_to)` are compared with its remote partition's records in
`[target_from, target_to)` by digest (key, value, headers, timestamp): the n-th source record of a digest is
the n-th target record of that digest (`pipeline/verification.py` joins them so, on Spark). What is left
unmatched, and the matched pairs whose order differs, are the differences; this module names them:

- a source record and a target record both unmatched at the same place (the same number of records after the
  same matched pair) are one record **changed** on the way;
- any other unmatched source record is **missing** (below the target's log start: removed there);
- any other unmatched target record is **extra**: a **duplicate** when the source has a record of its digest;
- a matched target record that comes before one matched to an earlier source record is **out of order**.

Ranges come from the offset syncs: sparkmirror writes one for the last record of every report, so the last
one says exactly how far the copy goes on both sides (`end`). MM2's are sparse (a lower bound): its copy is
compared up to the ends, and source records after the last one matched are "not copied yet", not missing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

from sparkmirror.offsets.flow_report import WrittenSync, replicated_position

MISSING, EXTRA, DUPLICATE, CHANGED, OUT_OF_ORDER = "missing", "extra", "duplicate", "changed", "out of order"
KINDS = (MISSING, EXTRA, DUPLICATE, CHANGED, OUT_OF_ORDER)
EXAMPLES_PER_PARTITION = 1000  # differences listed per partition and kind; all are counted


@dataclass(frozen=True, slots=True)
class PartitionRange:
    """The records of one source partition and of its remote partition that are compared."""

    topic: str
    partition: int
    remote_topic: str
    source_from: int
    source_to: int  # exclusive
    target_from: int
    target_to: int  # exclusive
    exact: bool  # the copy's end is known from sparkmirror's syncs (else: MM2's sparse ones, or none)
    source_log_start: int
    target_log_start: int
    not_copied_yet: int = 0  # source records past source_to, left out (the flow's lag)
    tail_is_lag: bool = False  # source records after the last one matched are not copied yet, not missing

    @property
    def key(self) -> tuple[str, int]:
        return self.topic, self.partition


@dataclass(frozen=True, slots=True)
class Unmatched:
    """A record of one side with no partner of its digest on the other. `rank` is its place among its side's
    compared records (0 first); `anchor` the ranks (source, target) of the closest matched pair before it,
    (-1, -1) when none; `copy_of`, for a target record, the offset of a source record of the same digest."""

    offset: int
    rank: int
    anchor: tuple[int, int]
    copy_of: int | None = None


@dataclass(frozen=True, slots=True)
class Comparison:
    """What the join found for one partition (examples capped, counts complete)."""

    source_records: int
    target_records: int
    matched: int
    unmatched_source: tuple[Unmatched, ...] = ()
    unmatched_target: tuple[Unmatched, ...] = ()
    out_of_order: tuple[tuple[int, int], ...] = ()  # (source offset, target offset) of the later-matched record
    unmatched_source_count: int = 0
    unmatched_target_count: int = 0
    out_of_order_count: int = 0
    last_matched: tuple[int, int] = (-1, -1)  # ranks (source, target) of the matched pair latest in source order


@dataclass(frozen=True, slots=True)
class Difference:
    kind: str
    source_offset: int | None
    target_offset: int | None
    note: str = ""


@dataclass(frozen=True, slots=True)
class PartitionVerdict:
    topic: str
    partition: int
    remote_topic: str
    source_from: int
    source_to: int
    target_from: int
    target_to: int
    source_records: int
    target_records: int
    matched: int
    counts: Mapping[str, int]
    differences: tuple[Difference, ...]
    not_copied_yet: int
    notes: tuple[str, ...] = ()

    @property
    def whole(self) -> bool:
        return not any(self.counts.values())


@dataclass(frozen=True, slots=True)
class FlowVerdict:
    flow: str
    partitions: tuple[PartitionVerdict, ...]
    notes: tuple[str, ...] = ()

    @property
    def whole(self) -> bool:
        return all(p.whole for p in self.partitions)

    @property
    def counts(self) -> dict[str, int]:
        return {kind: sum(p.counts.get(kind, 0) for p in self.partitions) for kind in KINDS}


@dataclass(frozen=True, slots=True)
class VerifyReport:
    flows: tuple[FlowVerdict, ...]
    records: int  # source and target records read
    seconds: float
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def whole(self) -> bool:
        return all(f.whole for f in self.flows)

    @property
    def records_per_s(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict:
        return {"whole": self.whole, "records": self.records, "seconds": round(self.seconds, 3),
                "records_per_s": round(self.records_per_s, 1), "notes": list(self.notes),
                "flows": [{"flow": f.flow, "whole": f.whole, "counts": f.counts, "notes": list(f.notes),
                           "partitions": [{**asdict(p), "whole": p.whole} for p in f.partitions]}
                          for f in self.flows]}


def plan_range(topic: str, partition: int, remote_topic: str, source_marks: tuple[int, int],
               target_marks: tuple[int, int] | None, syncs: Sequence[WrittenSync], to_end: bool = False,
               from_offset: int | None = None) -> PartitionRange:
    """The range to compare: up to what the last offset sync says was copied (sparkmirror's are exact), or with
    `to_end` up to the source's end (then what was never copied is missing). `from_offset` starts later."""
    low, high = source_marks
    t_low, t_high = target_marks if target_marks is not None else (0, 0)
    last = syncs[-1] if syncs else None
    exact = last is not None and last.link is not None
    if exact:
        assert last is not None
        copied_to, target_to = replicated_position(last), last.sync.downstream_offset + 1
    else:  # MM2's sparse syncs, or none: the whole target, and the source up to its end
        copied_to, target_to = high, t_high
    source_to = high if to_end else min(copied_to, high)
    source_from = max(low, from_offset) if from_offset is not None else low
    target_to = max(t_low, min(target_to, t_high))
    # from a later offset: the target from just after the copy of the last synced record before it (the records
    # between are compared as an unaligned head, see judge)
    before = [w.sync.downstream_offset + 1 for w in syncs if w.sync.upstream_offset < source_from] \
        if source_from > low else []
    target_from = min(max(t_low, before[-1] if before else t_low), target_to)
    return PartitionRange(topic, partition, remote_topic, min(source_from, source_to), source_to, target_from,
                          target_to, exact, low, t_low, max(0, high - source_to), tail_is_lag=not exact and not to_end)


def judge(r: PartitionRange, c: Comparison, limit: int = EXAMPLES_PER_PARTITION) -> PartitionVerdict:
    """Name the differences of one partition from its comparison (see the module docstring)."""
    notes: list[str] = []
    targets = {(u.anchor, u.rank - u.anchor[1]): u for u in c.unmatched_target if u.copy_of is None}
    changed: list[Difference] = []
    missing: list[Difference] = []
    paired: set[int] = set()
    tail = 0
    for u in sorted(c.unmatched_source, key=lambda u: u.rank):
        partner = targets.get((u.anchor, u.rank - u.anchor[0]))
        if partner is not None and partner.offset not in paired:
            paired.add(partner.offset)
            changed.append(Difference(CHANGED, u.offset, partner.offset))
        elif r.tail_is_lag and u.anchor == c.last_matched:
            tail += 1  # after the last record the copy has: not copied yet (MM2's syncs do not say where it is)
        else:
            below = r.target_log_start > 0 and u.anchor == (-1, -1)  # before anything the target still has
            missing.append(Difference(MISSING, u.offset, None, "below the target's log start: removed there"
                                      if below else ""))
    extra: list[Difference] = []
    duplicate: list[Difference] = []
    unknown_head = 0
    for u in sorted(c.unmatched_target, key=lambda u: u.rank):
        if u.offset in paired:
            continue
        if r.source_from > 0 and u.anchor == (-1, -1) and c.matched:
            unknown_head += 1  # before the first record matched, and the source's head is gone or left out
        elif u.copy_of is not None:
            duplicate.append(Difference(DUPLICATE, u.copy_of, u.offset, f"a second copy of source offset {u.copy_of}"))
        else:
            extra.append(Difference(EXTRA, None, u.offset))
    disorder = [Difference(OUT_OF_ORDER, s, t) for s, t in c.out_of_order]
    more_source = max(0, c.unmatched_source_count - len(c.unmatched_source))
    more_target = max(0, c.unmatched_target_count - len(c.unmatched_target))
    counts = {MISSING: len(missing) + more_source, EXTRA: len(extra) + more_target, DUPLICATE: len(duplicate),
              CHANGED: len(changed), OUT_OF_ORDER: max(c.out_of_order_count, len(disorder))}
    if tail:
        notes.append(f"{tail} source record(s) after the last one on the target: not copied yet (the offset syncs "
                     f"do not say exactly where this copy is)")
    if unknown_head:
        why = (f"below the source's log start {r.source_log_start}" if r.source_from == r.source_log_start
               else f"before source offset {r.source_from}, where the comparison starts")
        notes.append(f"{unknown_head} target record(s) before the first one matched could not be aligned: their "
                     f"source records are {why}")
    if more_source or more_target or c.out_of_order_count > len(disorder):
        notes.append(f"more than {limit} differences: the first {limit} of each kind are listed, all are counted")
    differences = tuple(sorted((*missing[:limit], *extra[:limit], *duplicate[:limit], *changed[:limit],
                                *disorder[:limit]), key=_order))
    return PartitionVerdict(r.topic, r.partition, r.remote_topic, r.source_from, r.source_to, r.target_from,
                            r.target_to, c.source_records, c.target_records, c.matched, counts, differences,
                            r.not_copied_yet + tail, tuple(notes))


def _order(d: Difference) -> tuple[int, int]:
    return (d.source_offset if d.source_offset is not None else -1,
            d.target_offset if d.target_offset is not None else -1)
