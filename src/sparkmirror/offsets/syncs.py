"""Offset syncs, in one place: which pairs become syncs, their kinds, their records and their reading back.

An offset sync says upstream offset U of a source partition was written at downstream offset D. MM2 writes
them sparsely; sparkmirror's record path (the JVM writer's `PartitionLog`, which applies `sync_points` to
what the target acknowledged) reports a pair around every discontinuity, and each record carries a
`SyncLink` header saying what lies between it and the next, so every offset translates exactly
(offsets/translation.py). The record layout is MM2's: key topic STRING, partition INT32; value
upstreamOffset INT64, offset INT64 (no version); see offsets/codec.py for the primitives.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from sparkmirror.model import PartitionSummary
from sparkmirror.offsets.codec import OffsetCodecError, StructReader, StructWriter

if TYPE_CHECKING:
    from sparkmirror.offsets.translation import SyncIndex

Header = tuple[str, bytes | None]
SyncRecord = tuple[bytes, bytes, list[Header]]
"""(key, value, headers) of one offset-syncs record, ready to write to partition 0 of the topic."""


@dataclass(frozen=True, slots=True)
class OffsetSync:
    """Upstream offset `upstream_offset` of a source partition was written at `downstream_offset`."""

    topic: str
    partition: int
    upstream_offset: int
    downstream_offset: int


def encode_offset_sync(sync: OffsetSync) -> tuple[bytes, bytes]:
    """(key, value) of an offset-syncs record, as MM2's OffsetSync.recordKey/recordValue."""
    key = StructWriter("offset-syncs record key").string("topic", sync.topic).int32("partition", sync.partition)
    value = (StructWriter("offset-syncs record value").int64("upstreamOffset", sync.upstream_offset)
             .int64("offset", sync.downstream_offset))
    return key.done(), value.done()


def decode_offset_sync(key: bytes | None, value: bytes | None) -> OffsetSync:
    """An offset-syncs record, as MM2's OffsetSync.deserializeRecord reads it."""
    k, v = StructReader(key, "offset-syncs record key"), StructReader(value, "offset-syncs record value")
    return OffsetSync(k.string("topic"), k.int32("partition"), v.int64("upstreamOffset"), v.int64("offset"))


# -- sparkmirror's addition: what lies between two offset syncs ----------------------------------------------

SYNC_LINK_HEADER = "sparkmirror.sync"
SYNC_RUN, SYNC_GAP, SYNC_END = "run", "gap", "end"


@dataclass(frozen=True, slots=True)
class SyncLink:
    """Carried in a record header of each offset sync sparkmirror writes (MM2 ignores headers and writes
    none). It says what lies between this sync and the next one of the same partition, which makes the
    syncs dense enough to translate every offset exactly:

    - `run`: every record in between was replicated, upstream and downstream offsets advancing by one;
    - `gap`: the next sync is the very next record replicated (nothing replicated in between);
    - `end`: the last record of a micro-batch; the flow had read the source up to `next_upstream`
      (exclusive) and the next sync is the next record it replicates.
    """

    kind: str
    next_upstream: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in (SYNC_RUN, SYNC_GAP, SYNC_END):
            raise OffsetCodecError(f"bad offset-sync link kind {self.kind!r}")
        if (self.kind == SYNC_END) != (self.next_upstream is not None):
            raise OffsetCodecError("an offset-sync link carries next_upstream exactly when it is 'end'")


def encode_sync_link(link: SyncLink) -> bytes:
    return (f"{SYNC_END}:{link.next_upstream}" if link.kind == SYNC_END else link.kind).encode("ascii")


_RUN_LINK = ((SYNC_LINK_HEADER, encode_sync_link(SyncLink(SYNC_RUN))),)
_GAP_LINK = ((SYNC_LINK_HEADER, encode_sync_link(SyncLink(SYNC_GAP))),)
_OFFSETS = struct.Struct(">qq")  # an offset-syncs value: upstreamOffset INT64, offset INT64


def decode_sync_link(raw: bytes | None) -> SyncLink:
    text = (raw or b"").decode("ascii", errors="replace")
    kind, _, rest = text.partition(":")
    try:
        return SyncLink(kind, int(rest) if kind == SYNC_END else None)
    except ValueError:
        raise OffsetCodecError(f"bad '{SYNC_LINK_HEADER}' header {text!r}: expected run, gap or end:<offset>") \
            from None


def sync_link_of(headers: tuple[tuple[str, bytes | None], ...] | list | None) -> SyncLink | None:
    """The link of an offset-syncs record, or None when it has no such header (MM2 wrote it)."""
    for name, value in headers or ():
        if name == SYNC_LINK_HEADER:
            return decode_sync_link(value)
    return None


# -- which pairs become syncs ---------------------------------------------------------------------------------

def sync_points(upstream: Sequence[int], downstream: Sequence[int]) -> tuple[list[int], list[int], list[bool]]:
    """The first and last pair, and both pairs around every place where the two offset sequences stop
    advancing one by one (a gap upstream such as a transaction marker or a compacted record, or a foreign
    record downstream). The third list says, per point, whether every record up to the next point was
    replicated contiguously (a run); otherwise the next point is the very next record replicated.

    The JVM writer applies this rule; this is its reference, and the writer is checked against it
    (tests/integration/test_record_path.py).
    """
    n = len(upstream)
    broken = [upstream[i + 1] - upstream[i] != 1 or downstream[i + 1] - downstream[i] != 1 for i in range(n - 1)]
    ups: list[int] = []
    downs: list[int] = []
    runs: list[bool] = []
    for i in range(n):
        if i in (0, n - 1) or broken[i - 1] or (i < n - 1 and broken[i]):
            ups.append(upstream[i])
            downs.append(downstream[i])
            runs.append(i < n - 1 and not broken[i])
    return ups, downs, runs


def report_syncs(summary: PartitionSummary) -> list[tuple[OffsetSync, SyncLink]]:
    """The offset syncs of one writer report for one partition, each with its link to the next: the
    writer's run flags become `run`/`gap`, and the last sync is the report's `end`."""
    out = []
    last = len(summary.sync_upstream) - 1
    for i, (up, down) in enumerate(summary.syncs):
        run = i < len(summary.sync_runs) and summary.sync_runs[i]
        link = (SyncLink(SYNC_END, summary.next_upstream) if i == last
                else SyncLink(SYNC_RUN) if run else SyncLink(SYNC_GAP))
        out.append((OffsetSync(summary.topic, summary.partition, up, down), link))
    return out


def sync_records(summaries: Iterable[PartitionSummary]) -> list[SyncRecord]:
    """The offset-syncs records of writer reports, keyed by source topic-partition as MM2 keys them: the records
    `report_syncs` describes, encoded as `encode_offset_sync` and `encode_sync_link` do. A filter that drops one
    record in ten makes a sync of every fifth record, so this is the hot loop of the control plane: one key per
    partition, the constant links and the value's two offsets packed at once."""
    out: list[SyncRecord] = []
    for summary in summaries:
        if not summary.sync_upstream:
            continue
        key = encode_offset_sync(OffsetSync(summary.topic, summary.partition, 0, 0))[0]
        runs = summary.sync_runs
        last = len(summary.sync_upstream) - 1
        end = [(SYNC_LINK_HEADER, encode_sync_link(SyncLink(SYNC_END, summary.next_upstream)))]
        for i, (up, down) in enumerate(zip(summary.sync_upstream, summary.sync_downstream, strict=True)):
            try:
                value = _OFFSETS.pack(up, down)
            except struct.error:  # out of INT64's range: the one-by-one encoder names the field
                value = encode_offset_sync(OffsetSync(summary.topic, summary.partition, up, down))[1]
            links = end if i == last else _RUN_LINK if i < len(runs) and runs[i] else _GAP_LINK
            out.append((key, value, list(links)))
    return out


# -- reading them back ---------------------------------------------------------------------------------------

class SyncRecordLike(Protocol):
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]


def index_syncs(records: Iterable[SyncRecordLike], index: SyncIndex) -> list[tuple[int, str]]:
    """Add offset-syncs records (sparkmirror's or MM2's) to `index`. Records that are not offset syncs are
    skipped, as MM2's readers skip them; returns them as (offset, why) for the caller to log."""
    skipped = []
    for record in records:
        try:
            index.add(decode_offset_sync(record.key, record.value), sync_link_of(record.headers))
        except OffsetCodecError as exc:
            skipped.append((record.offset, str(exc)))
    return skipped
