"""What `sparkmirror status` reports of a flow, assembled from what was read off its clusters. Pure.

The reading is `sparkmirror.mirror_status`; here the replicated position of each source partition comes from
its last offset sync, its lag from `offsets.lag`, its throughput from the syncs of the last minute, and the
flow's state from all of that: caught up, replicating, stalled, not started, or unreachable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

from sparkmirror.offsets.codec import Checkpoint, OffsetCodecError
from sparkmirror.offsets.lag import PartitionLag, partition_lag, recovery_point
from sparkmirror.offsets.syncs import SYNC_END, OffsetSync, SyncLink, SyncRecordLike, decode_offset_sync, sync_link_of

TopicPartition = tuple[str, int]
ACTIVE_WINDOW_MS = 60_000  # a flow with a sync this recent is replicating; the window of the throughput too
# A copy in step still has the records of the last moments in flight (MM2's heartbeats add one a second to the
# source's heartbeats topic, and a micro-batch picks it up a moment later): lag younger than this is caught up.
IN_FLIGHT_MS = 5_000

CAUGHT_UP, REPLICATING, STALLED, NOT_STARTED = "caught up", "replicating", "stalled", "not started"
UNREACHABLE, UNKNOWN = "unreachable", "unknown"


@dataclass(frozen=True, slots=True)
class WrittenSync:
    """An offset-syncs record as read back: the sync, its link (None: written by MM2) and when it was written."""

    sync: OffsetSync
    link: SyncLink | None
    timestamp_ms: int


class WrittenRecordLike(SyncRecordLike, Protocol):
    timestamp_ms: int


def written_syncs(records: Iterable[WrittenRecordLike]) -> tuple[list[WrittenSync], int]:
    """The offset syncs among offset-syncs records, in the order written, and how many records were not offset
    syncs: skipped, as MM2's readers skip them."""
    out, skipped = [], 0
    for record in records:
        try:
            out.append(WrittenSync(decode_offset_sync(record.key, record.value), sync_link_of(record.headers),
                                   record.timestamp_ms))
        except OffsetCodecError:
            skipped += 1
    return out, skipped


@dataclass(frozen=True, slots=True)
class LastSync:
    upstream_offset: int
    downstream_offset: int
    timestamp_ms: int
    age_s: float


@dataclass(frozen=True, slots=True)
class PartitionStatus:
    """One source partition. None where the cluster holding the number did not answer."""

    topic: str
    partition: int
    state: str
    end_offset: int | None  # the source's high watermark
    position: int | None  # the next source offset to replicate
    lag_records: int | None
    lag_seconds: float | None  # age of the oldest record not replicated yet (None: unknown)
    throughput: float  # records/s, from the offset syncs of the last minute
    last_sync: LastSync | None
    # records below the source's log start that the flow had not copied (retention or DeleteRecords removed them
    # first): known from sparkmirror's exact syncs only, since MM2's sparse ones lag behind its real position
    removed_before_copy: int = 0


@dataclass(frozen=True, slots=True)
class CheckpointedPartition:
    topic: str  # the remote topic, on the target
    partition: int
    upstream_offset: int
    downstream_offset: int


@dataclass(frozen=True, slots=True)
class GroupCheckpoints:
    """A group's latest checkpoints; `timestamp_ms` is when the newest of them was written."""

    group: str
    timestamp_ms: int
    age_s: float
    partitions: tuple[CheckpointedPartition, ...]


@dataclass(frozen=True, slots=True)
class Unreachable:
    cluster: str
    error: str


@dataclass(frozen=True, slots=True)
class FlowReport:
    flow: str
    source: str
    target: str
    state: str
    measured_ms: int
    lag_records: int | None
    lag_seconds: float | None
    throughput: float
    partitions: tuple[PartitionStatus, ...]
    groups: tuple[GroupCheckpoints, ...]
    unreachable: tuple[Unreachable, ...] = ()
    notes: tuple[str, ...] = ()
    # the sparkmirror process that runs the flow, as its file's coordination group says ("" none; None unknown)
    runs_in: str | None = None

    @property
    def removed_before_copy(self) -> int:
        return sum(p.removed_before_copy for p in self.partitions)

    def to_json(self) -> dict:
        return {**asdict(self), "removed_before_copy": self.removed_before_copy}


BEATING, SILENT, NO_BEAT = "beating", "silent", "no heartbeat"


@dataclass(frozen=True, slots=True)
class PairReport:
    """A heartbeat-only pair (MM2's clusterPairs: no flow, heartbeats only) as its target's heartbeats topic shows
    it: `beating` while its newest beat is younger than three intervals (at least 10 s)."""

    source: str
    target: str
    state: str  # beating | silent | no heartbeat | unreachable
    last_beat_ms: int | None
    age_s: float | None
    error: str = ""


def pair_report(source: str, target: str, last_beat_ms: int | None, interval_s: int, now_ms: int) -> PairReport:
    if last_beat_ms is None:
        return PairReport(source, target, NO_BEAT, None, None)
    age = _age_s(now_ms, last_beat_ms)
    return PairReport(source, target, BEATING if age <= max(10.0, 3.0 * interval_s) else SILENT, last_beat_ms, age)


@dataclass(frozen=True, slots=True)
class StatusReport:
    flows: tuple[FlowReport, ...]
    pairs: tuple[PairReport, ...] = ()

    @property
    def unreachable(self) -> tuple[str, ...]:
        """The aliases of the clusters that did not answer, each once."""
        return tuple(dict.fromkeys(u.cluster for f in self.flows for u in f.unreachable))

    def to_json(self) -> dict:
        return {"flows": [f.to_json() for f in self.flows], "heartbeat_pairs": [asdict(p) for p in self.pairs],
                "unreachable": list(self.unreachable)}


# -- assembly -----------------------------------------------------------------------------------------------

def syncs_by_partition(syncs: Iterable[WrittenSync]) -> dict[TopicPartition, list[WrittenSync]]:
    """Each source partition's syncs, in the order written."""
    out: dict[TopicPartition, list[WrittenSync]] = {}
    for written in syncs:
        out.setdefault((written.sync.topic, written.sync.partition), []).append(written)
    return out


def replicated_position(last: WrittenSync) -> int:
    """The next source offset to replicate after the last sync written: one past it, or for sparkmirror's
    `end` link the offset the flow had read to (offsets between were markers or already on the target).

    Exact for sparkmirror, which writes a sync for the last record of every report. MM2 writes syncs
    sparsely, so for its flows this is a lower bound (and the lag an upper bound)."""
    after = last.sync.upstream_offset + 1
    if last.link is not None and last.link.kind == SYNC_END and last.link.next_upstream is not None:
        return max(after, last.link.next_upstream)
    return after


def positions(by_partition: Mapping[TopicPartition, Sequence[WrittenSync]],
              watermarks: Mapping[TopicPartition, tuple[int, int]]) -> dict[TopicPartition, int]:
    """The replicated position of every partition of `watermarks`: its low watermark when it has no sync."""
    out = {}
    for tp, (low, _) in watermarks.items():
        syncs = by_partition.get(tp)
        out[tp] = replicated_position(syncs[-1]) if syncs else low
    return out


def throughput(syncs: Sequence[WrittenSync], now_ms: int, window_ms: int = ACTIVE_WINDOW_MS) -> float:
    """Records/s of one partition over the last `window_ms`: upstream offsets advanced from the last sync
    before the window (or the first in it) to the newest, over the time from the window's start (or that
    first sync) to the newest. 0 when no sync was written in the window."""
    start_ms = now_ms - window_ms
    if not syncs or syncs[-1].timestamp_ms < start_ms:
        return 0.0
    first_in = next(i for i, s in enumerate(syncs) if s.timestamp_ms >= start_ms)
    base = syncs[first_in - 1] if first_in > 0 else syncs[first_in]
    newest = syncs[-1]
    elapsed_ms = newest.timestamp_ms - max(base.timestamp_ms, start_ms)
    if elapsed_ms <= 0:
        return 0.0
    return max(0, newest.sync.upstream_offset - base.sync.upstream_offset) * 1000.0 / elapsed_ms


def group_checkpoints(checkpoints: Iterable[tuple[Checkpoint, int]], now_ms: int) -> tuple[GroupCheckpoints, ...]:
    """Per group, the latest checkpoint of each (remote topic, partition), as MM2's readers keep them, and
    when the newest of those was written. `checkpoints` are (checkpoint, record timestamp) in topic order."""
    latest: dict[str, dict[TopicPartition, tuple[Checkpoint, int]]] = {}
    for checkpoint, timestamp_ms in checkpoints:
        latest.setdefault(checkpoint.group, {})[(checkpoint.topic, checkpoint.partition)] = (checkpoint, timestamp_ms)
    out = []
    for group, by_tp in sorted(latest.items()):
        newest = max(ts for _, ts in by_tp.values())
        out.append(GroupCheckpoints(group, newest, _age_s(now_ms, newest), tuple(
            CheckpointedPartition(c.topic, c.partition, c.upstream_offset, c.downstream_offset)
            for _, (c, _) in sorted(by_tp.items()))))
    return tuple(out)


def in_step(records: int | None, seconds: float | None) -> bool:
    """No lag, or only records younger than `IN_FLIGHT_MS` (those a copy in step has in flight)."""
    return records == 0 or (records is not None and seconds is not None and seconds * 1000 < IN_FLIGHT_MS)


def partition_state(lag: PartitionLag | None, last: WrittenSync | None, now_ms: int,
                    window_ms: int = ACTIVE_WINDOW_MS, in_flight: bool = True) -> str:
    if lag is None:
        return UNKNOWN
    if lag.records == 0 or (in_flight and last is not None and in_step(lag.records, lag.seconds(now_ms))):
        return CAUGHT_UP
    if last is None:
        return NOT_STARTED
    return REPLICATING if last.timestamp_ms >= now_ms - window_ms else STALLED


def flow_state(lag_records: int | None, syncs: Sequence[WrittenSync] | None, unreachable: Sequence[Unreachable],
               now_ms: int, window_ms: int = ACTIVE_WINDOW_MS, lag_seconds: float | None = None,
               in_flight: bool = True) -> str:
    """unreachable (a cluster did not answer), caught up (no lag, or, once it copies, only records younger
    than `IN_FLIGHT_MS`), not started (no offset sync at all), replicating (a sync in the window) or stalled (lag,
    and no sync for the whole window). `in_flight` False: no process runs the flow, so young records are lag too.
    """
    if unreachable:
        return UNREACHABLE
    if lag_records == 0 or (in_flight and syncs and in_step(lag_records, lag_seconds)):
        return CAUGHT_UP
    if not syncs:
        return NOT_STARTED
    newest = max(s.timestamp_ms for s in syncs)
    return REPLICATING if newest >= now_ms - window_ms else STALLED


def assemble_flow(flow: str, source: str, target: str, syncs: Sequence[WrittenSync] | None,
                  watermarks: Mapping[TopicPartition, tuple[int, int]] | None,
                  oldest: Mapping[TopicPartition, int | None], checkpoints: Iterable[tuple[Checkpoint, int]],
                  now_ms: int, unreachable: Sequence[Unreachable] = (), notes: Sequence[str] = (),
                  window_ms: int = ACTIVE_WINDOW_MS, in_flight: bool = True) -> FlowReport:
    """The report of one flow from what was read.

    `syncs` None: the offset syncs could not be read; `watermarks` None: the source did not answer (the
    partitions are then those with syncs). `oldest` is `kafka.records.oldest_records` of the unreplicated
    ranges: a partition missing from it has records of unknown age.
    """
    by_partition = syncs_by_partition(syncs or ())
    partitions = sorted(watermarks) if watermarks is not None else sorted(by_partition)
    rows, lags = [], []
    for tp in partitions:
        topic, partition = tp
        history = by_partition.get(tp, [])
        last = history[-1] if history else None
        end = watermarks[tp][1] if watermarks is not None else None
        position = (replicated_position(last) if last is not None
                    else watermarks[tp][0] if watermarks is not None and syncs is not None else None)
        lag = None
        low = watermarks[tp][0] if watermarks is not None else None
        exact = last is not None and last.link is not None  # sparkmirror's sync: the flow's very position
        removed = max(0, low - position) if exact and low is not None and position is not None else 0
        if end is not None and position is not None:
            has_record = tp not in oldest or oldest[tp] is not None
            lag = partition_lag(topic, partition, end, position, oldest.get(tp), has_record, now_ms)
            lags.append(lag)
        rows.append(PartitionStatus(
            topic, partition, partition_state(lag, last, now_ms, window_ms, in_flight), end, position,
            None if lag is None else lag.records, None if lag is None else lag.seconds(now_ms),
            throughput(history, now_ms, window_ms),
            None if last is None else LastSync(last.sync.upstream_offset, last.sync.downstream_offset,
                                               last.timestamp_ms, _age_s(now_ms, last.timestamp_ms)),
            removed))
    known = watermarks is not None and syncs is not None  # else partitions or positions are missing
    point = recovery_point(lags, now_ms)
    lag_records, lag_seconds = (point.records, point.seconds) if known else (None, None)
    state = flow_state(lag_records, syncs, unreachable, now_ms, window_ms, lag_seconds, in_flight)
    return FlowReport(flow, source, target, state, now_ms, lag_records, lag_seconds,
                      sum(r.throughput for r in rows), tuple(rows), group_checkpoints(checkpoints, now_ms),
                      tuple(unreachable), tuple(notes))


def _age_s(now_ms: int, timestamp_ms: int) -> float:
    return max(0, now_ms - timestamp_ms) / 1000.0
