"""What a kill trial left on the target: every record's id read back, then lost records, duplicates (each
charged to the event it follows: a process kill, a broker restart, an executor kill) and per-partition order.

The source records come from `dataset.load`: record i (0-based) is in partition i % P and carries i in its
`bench-seq` header, so partition p holds ids p, p + P, p + 2P, ... in that order. A replicator that only ever
re-sends after a restart leaves, in each target partition, that sequence with repeated stretches: every
record is either the next new id or a re-send that continues the stretch before it.
"""

from __future__ import annotations

import bisect
import logging
import re
import statistics
import time
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

from benchmarks.kill_events import KILL

ID_HEADER = "bench-seq"
QUIET = logging.getLogger("sparkmirror.librdkafka")


class TopicReader:
    """A consumer (`_consumer`) assigned to one topic (`topic`) whose poll() reads what is there; read_to() reads
    on to given end offsets."""

    topic: str
    _consumer: Consumer

    def poll(self, timeout_s: float) -> int:
        raise NotImplementedError

    def read_to(self, ends: Mapping[int, int], timeout_s: float = 300.0) -> None:
        """Read until every partition's position reached its end offset."""
        deadline = time.monotonic() + timeout_s
        todo = dict(ends)
        while todo:
            if time.monotonic() > deadline:
                raise RuntimeError(f"reading {self.topic}: partitions {sorted(todo)} not read to their end "
                                   f"within {timeout_s:.0f} s")
            self.poll(0.2)
            for tp in self._consumer.position([TopicPartition(self.topic, p) for p in todo]):
                if tp.offset >= todo[tp.partition]:
                    del todo[tp.partition]

    def close(self) -> None:
        self._consumer.close()


class TargetIds(TopicReader):
    """A consumer of one target topic from its beginning that keeps (offset, id) of every record and how
    many distinct source ids it has seen; poll() while the copy runs, read_to() the end offsets after."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, records: int) -> None:
        self.topic, self.partitions, self.records = topic, partitions, records
        self.offsets = {p: array("q") for p in range(partitions)}
        self.ids = {p: array("q") for p in range(partitions)}
        self.distinct = 0
        self.last_record_at = time.monotonic()
        self._seen = bytearray(records)
        self._consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-kill-read-{time.time_ns()}",
                                   "enable.auto.commit": "false", "logger": QUIET})
        self._consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])

    def poll(self, timeout_s: float = 0.5) -> int:
        """Read what is there (waiting up to timeout_s for the first record); returns the records read."""
        msgs = self._consumer.consume(num_messages=10_000, timeout=timeout_s)
        for msg in msgs:
            if msg.error():
                raise KafkaException(msg.error())
            seq = next((v for k, v in msg.headers() or () if k == ID_HEADER), None)
            i = int.from_bytes(seq, "big") if seq is not None else -1
            p = msg.partition()
            self.offsets[p].append(msg.offset())
            self.ids[p].append(i)
            if 0 <= i < self.records and not self._seen[i]:
                self._seen[i] = 1
                self.distinct += 1
        if msgs:
            self.last_record_at = time.monotonic()
        return len(msgs)



@dataclass
class Partition:
    """The checks of one target partition (see the module docstring)."""

    expected: int = 0
    present: int = 0
    records: int = 0
    duplicates: int = 0
    rewinds: int = 0  # a record at or before the one before it: the start of a repeated stretch
    out_of_order: int = 0  # a first occurrence after a later id's
    forward_jumps: int = 0  # a record past the one before it + 1: a stretch with a hole, even if filled later
    foreign: int = 0  # no id, an id beyond the source's, or an id of another partition

    @property
    def in_order(self) -> bool:
        """The source sequence, possibly with repeated stretches, and nothing else."""
        return not (self.out_of_order or self.forward_jumps or self.foreign)


@dataclass
class Verdict:
    partitions: dict[int, Partition] = field(default_factory=dict)
    duplicates_by_segment: list[int] = field(default_factory=list)  # [0]: before any event; [k]: after event k
    # [k - 1]: how far behind the records already on the target the copy resumed after event k, summed over
    # the partitions written to before the next event (an event can come before a restart reaches them all)
    resumed_behind: list[int] = field(default_factory=list)

    def total(self, name: str) -> int:
        return sum(getattr(p, name) for p in self.partitions.values())


def analyse(ids: Mapping[int, Sequence[int]], offsets: Mapping[int, Sequence[int]], records: int,
            event_marks: Sequence[Mapping[int, int]]) -> Verdict:
    """Check every target partition; `event_marks[k]` holds each partition's end offset right after event k + 1
    (a killed process tree gone, a restarted broker back), so a duplicate at or past it and before the next mark
    is charged to that event."""
    n = len(ids)
    verdict = Verdict(duplicates_by_segment=[0] * (len(event_marks) + 1), resumed_behind=[0] * len(event_marks))
    for p in range(n):
        marks = [m[p] for m in event_marks]
        part = verdict.partitions[p] = Partition(expected=len(range(p, records, n)))
        seen = bytearray(part.expected)
        prev = top = -1
        segment = 0
        for offset, i in zip(offsets[p], ids[p], strict=True):
            part.records += 1
            if not 0 <= i < records or i % n != p:
                part.foreign += 1
                continue
            x = i // n
            if (at := bisect.bisect_right(marks, offset)) != segment:  # the first record of a restart
                segment = at
                verdict.resumed_behind[at - 1] += max(0, top + 1 - x)
            if seen[x]:
                part.duplicates += 1
                verdict.duplicates_by_segment[at] += 1
            else:
                seen[x] = 1
                part.out_of_order += x < top
            part.rewinds += x <= prev
            part.forward_jumps += x > prev + 1
            prev, top = x, max(top, x)
        part.present = sum(seen)
    return verdict


def summary(verdict: Verdict, records: int, kinds: Sequence[str]) -> dict[str, object]:
    """The trial's figures: lost, duplicates overall, per kill and per event, order. `kinds[k]` is the kind of
    event k + 1 (kill_events); only the process kills count in the per-kill figures, the other events' duplicates
    are summed per kind."""
    if len(kinds) != len(verdict.resumed_behind):
        raise ValueError(f"{len(kinds)} event kinds for {len(verdict.resumed_behind)} events")
    per_event = verdict.duplicates_by_segment[1:]
    per_kill = [d for d, kind in zip(per_event, kinds, strict=True) if kind == KILL]
    kills = len(per_kill)
    by_kind: dict[str, int] = {}
    for d, kind in zip(per_event, kinds, strict=True):
        if kind != KILL:
            by_kind[kind] = by_kind.get(kind, 0) + d
    parts = verdict.partitions.values()
    return {
        "kills": kills, "lost": records - verdict.total("present"), "target_records": verdict.total("records"),
        "duplicates": verdict.total("duplicates"),
        "duplicates_per_kill": round(sum(per_kill) / kills, 1) if kills else None,
        "duplicates_per_kill_min": min(per_kill, default=None),
        "duplicates_per_kill_median": statistics.median(per_kill) if per_kill else None,
        "duplicates_per_kill_max": max(per_kill, default=None),
        "duplicates_each_kill": per_kill, "duplicates_before_any_event": verdict.duplicates_by_segment[0],
        "resumed_behind_each_kill": [b for b, kind in zip(verdict.resumed_behind, kinds, strict=True) if kind == KILL],
        "duplicates_each_event": per_event, "resumed_behind_each_event": list(verdict.resumed_behind),
        "duplicates_by_event_kind": by_kind,
        "rewinds": verdict.total("rewinds"),
        "partitions_in_order": sum(1 for p in parts if p.in_order), "partitions": len(verdict.partitions),
        "out_of_order": verdict.total("out_of_order"), "forward_jumps": verdict.total("forward_jumps"),
        "foreign": verdict.total("foreign"),
    }


_BATCH_LINE = re.compile(r"^(\S+ \S+) INFO \S+: flow \S+ batch (\d+): (\d+) records, (\d+) skipped")


@dataclass
class Reports:
    """sparkmirror's `flow ... batch N: X records, Y skipped` lines of one process: what it saved as positions."""

    records: int = 0
    skipped: int = 0  # read again by a retried task and not written (or filtered out)
    lines: int = 0
    last_at: datetime | None = None  # local time, as the log's asctime


def reported(log: Path) -> Reports:
    out = Reports()
    for line in log.read_text(errors="replace").splitlines():
        if m := _BATCH_LINE.match(line):
            out.records += int(m.group(3))
            out.skipped += int(m.group(4))
            out.lines += 1
            out.last_at = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f")
    return out
