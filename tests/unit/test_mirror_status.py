"""`sparkmirror status` from what was read off the clusters: the pure assembly (offsets/flow_report.py) that
mirror_status.py feeds."""

from __future__ import annotations

import json
from dataclasses import dataclass

from sparkmirror.offsets import syncs as sync_codec
from sparkmirror.offsets.codec import Checkpoint
from sparkmirror.offsets.flow_report import (
    CAUGHT_UP,
    IN_FLIGHT_MS,
    NOT_STARTED,
    REPLICATING,
    STALLED,
    UNKNOWN,
    UNREACHABLE,
    StatusReport,
    Unreachable,
    WrittenSync,
    assemble_flow,
    flow_state,
    group_checkpoints,
    positions,
    replicated_position,
    syncs_by_partition,
    throughput,
    written_syncs,
)
from sparkmirror.offsets.syncs import SYNC_END, SYNC_GAP, SYNC_RUN, OffsetSync, SyncLink

NOW = 1_700_000_000_000
MINUTE = 60_000


def sync(up: int, down: int, at: int, partition: int = 0, link: SyncLink | None = None,
         topic: str = "orders") -> WrittenSync:
    return WrittenSync(OffsetSync(topic, partition, up, down), link, at)


def end(up: int, down: int, at: int, next_upstream: int, partition: int = 0) -> WrittenSync:
    return sync(up, down, at, partition, SyncLink(SYNC_END, next_upstream))


# -- positions ------------------------------------------------------------------------------------------------

def test_position_is_one_past_the_last_sync_written_by_mm2():
    assert replicated_position(sync(41, 7, NOW)) == 42


def test_position_of_an_end_sync_is_where_the_flow_had_read_to_past_trailing_markers():
    assert replicated_position(end(41, 7, NOW, next_upstream=44)) == 44
    assert replicated_position(end(41, 7, NOW, next_upstream=42)) == 42


def test_position_follows_the_last_sync_written_even_after_a_rewind():
    syncs = [end(99, 99, NOW - 2, 100), end(49, 49, NOW - 1, next_upstream=50)]
    assert positions(syncs_by_partition(syncs), {("orders", 0): (0, 120)}) == {("orders", 0): 50}


def test_a_partition_without_sync_is_at_its_low_watermark():
    got = positions(syncs_by_partition([end(9, 9, NOW, 10)]), {("orders", 0): (0, 10), ("orders", 1): (5, 8)})
    assert got == {("orders", 0): 10, ("orders", 1): 5}


# -- throughput -----------------------------------------------------------------------------------------------

def test_throughput_counts_from_the_sync_before_the_window_to_the_newest():
    syncs = [end(99, 99, NOW - 2 * MINUTE, 100), sync(100, 100, NOW - 20_000, link=SyncLink(SYNC_RUN)),
             end(699, 699, NOW - 10_000, 700)]
    # 600 records since the window opened (NOW - 60 s) until the newest sync (NOW - 10 s): 50 s
    assert throughput(syncs, NOW) == 600 / 50


def test_throughput_within_the_window_only():
    syncs = [sync(0, 0, NOW - 30_000, link=SyncLink(SYNC_RUN)), end(99, 99, NOW - 30_000, 100),
             sync(100, 100, NOW - 10_000, link=SyncLink(SYNC_RUN)), end(299, 299, NOW - 10_000, 300)]
    assert throughput(syncs, NOW) == 299 / 20


def test_throughput_is_zero_without_a_recent_sync_or_a_time_span():
    assert throughput([], NOW) == 0.0
    assert throughput([end(99, 99, NOW - 2 * MINUTE, 100)], NOW) == 0.0
    assert throughput([sync(0, 0, NOW - 5, link=SyncLink(SYNC_GAP)), end(9, 9, NOW - 5, 10)], NOW) == 0.0


def test_throughput_never_negative_after_a_rewind():
    assert throughput([end(99, 99, NOW - 20_000, 100), end(9, 9, NOW - 10_000, 10)], NOW) == 0.0


# -- checkpoints ----------------------------------------------------------------------------------------------

def test_groups_keep_the_latest_checkpoint_per_partition_and_their_newest_time():
    records = [(Checkpoint("billing", "A.orders", 0, 10, 10), NOW - 9_000),
               (Checkpoint("billing", "A.orders", 0, 20, 20), NOW - 5_000),
               (Checkpoint("billing", "A.orders", 1, 7, 7), NOW - 8_000),
               (Checkpoint("audit", "A.orders", 0, 3, 3), NOW - 30_000)]
    audit, billing = group_checkpoints(records, NOW)
    assert (audit.group, audit.age_s, len(audit.partitions)) == ("audit", 30.0, 1)
    assert (billing.group, billing.timestamp_ms, billing.age_s) == ("billing", NOW - 5_000, 5.0)
    assert [(p.topic, p.partition, p.upstream_offset, p.downstream_offset) for p in billing.partitions] == [
        ("A.orders", 0, 20, 20), ("A.orders", 1, 7, 7)]


# -- states ---------------------------------------------------------------------------------------------------

def test_flow_states():
    recent, old = [end(9, 9, NOW - 1_000, 10)], [end(9, 9, NOW - MINUTE - 1, 10)]
    assert flow_state(0, old, [], NOW) == CAUGHT_UP
    assert flow_state(5, recent, [], NOW) == REPLICATING
    assert flow_state(5, old, [], NOW) == STALLED
    assert flow_state(5, [], [], NOW) == NOT_STARTED
    assert flow_state(0, recent, [Unreachable("B", "down")], NOW) == UNREACHABLE


def test_a_flow_whose_lag_is_only_records_in_flight_is_caught_up():
    """MM2's heartbeats add a record a second to the source's heartbeats topic: a copy in step is almost always
    a record or two behind, seconds old at most."""
    recent = [end(9, 9, NOW - 1_000, 10)]
    assert flow_state(2, recent, [], NOW, lag_seconds=1.2) == CAUGHT_UP
    assert flow_state(2, recent, [], NOW, lag_seconds=IN_FLIGHT_MS / 1000) == REPLICATING
    assert flow_state(2, recent, [], NOW, lag_seconds=None) == REPLICATING  # the age unknown: not in step
    syncs = [end(9, 9, NOW - 1_000, 10, 0)]
    flow = assemble_flow("A->B", "A", "B", syncs, {("orders", 0): (0, 11)}, {("orders", 0): NOW - 800},
                         [], NOW)
    assert (flow.state, flow.lag_records, flow.partitions[0].state) == (CAUGHT_UP, 1, CAUGHT_UP)
    flow = assemble_flow("A->B", "A", "B", syncs, {("orders", 0): (0, 11)}, {("orders", 0): NOW - 9_000},
                         [], NOW)
    assert (flow.state, flow.partitions[0].state) == (REPLICATING, REPLICATING)
    # no process runs the flow (its coordination group is empty): nothing is in flight, a young record is lag
    stopped = assemble_flow("A->B", "A", "B", syncs, {("orders", 0): (0, 11)}, {("orders", 0): NOW - 800}, [],
                            NOW, in_flight=False)
    assert (stopped.state, stopped.partitions[0].state) == (REPLICATING, REPLICATING)


def stopped_flow():
    """A flow that replicated 10 records of each partition, then stopped; 4 more records reached partition 1."""
    syncs = [sync(0, 0, NOW - 3 * MINUTE, 0, SyncLink(SYNC_RUN)), end(9, 9, NOW - 3 * MINUTE, 10, 0),
             sync(0, 0, NOW - 3 * MINUTE, 1, SyncLink(SYNC_RUN)), end(9, 9, NOW - 3 * MINUTE, 10, 1)]
    watermarks = {("orders", 0): (0, 10), ("orders", 1): (0, 14)}
    return assemble_flow("A->B", "A", "B", syncs, watermarks, {("orders", 0): None, ("orders", 1): NOW - 90_000},
                         [(Checkpoint("billing", "A.orders", 0, 10, 10), NOW - 100_000)], NOW)


def test_a_stopped_flow_reports_the_lag_of_each_partition():
    flow = stopped_flow()
    p0, p1 = flow.partitions
    assert (p0.state, p0.end_offset, p0.position, p0.lag_records, p0.lag_seconds) == (CAUGHT_UP, 10, 10, 0, 0.0)
    assert (p1.state, p1.end_offset, p1.position, p1.lag_records, p1.lag_seconds) == (STALLED, 14, 10, 4, 90.0)
    assert (p1.last_sync.upstream_offset, p1.last_sync.downstream_offset, p1.last_sync.age_s) == (9, 9, 180.0)
    assert (flow.state, flow.lag_records, flow.lag_seconds, flow.throughput) == (STALLED, 4, 90.0, 0.0)
    assert [g.group for g in flow.groups] == ["billing"]


def test_the_report_is_json():
    data = json.loads(json.dumps(StatusReport((stopped_flow(),)).to_json()))
    [flow] = data["flows"]
    assert data["unreachable"] == []
    assert flow["partitions"][1]["lag_records"] == 4
    assert flow["partitions"][1]["last_sync"]["upstream_offset"] == 9
    assert flow["groups"][0]["partitions"][0]["topic"] == "A.orders"


def test_only_transaction_markers_left_is_caught_up():
    flow = assemble_flow("A->B", "A", "B", [end(9, 9, NOW - 1_000, 10)], {("orders", 0): (0, 12)},
                         {("orders", 0): None}, [], NOW)
    assert (flow.partitions[0].lag_records, flow.partitions[0].state, flow.state) == (0, CAUGHT_UP, CAUGHT_UP)


def test_an_oldest_record_not_read_in_time_leaves_the_seconds_unknown():
    flow = assemble_flow("A->B", "A", "B", [end(9, 9, NOW - 1_000, 10)], {("orders", 0): (0, 12)}, {}, [], NOW)
    assert (flow.partitions[0].lag_records, flow.partitions[0].lag_seconds) == (2, None)
    assert (flow.state, flow.lag_records, flow.lag_seconds) == (REPLICATING, 2, None)


def test_a_flow_without_syncs_has_not_started_and_lags_from_the_low_watermark():
    flow = assemble_flow("A->B", "A", "B", [], {("orders", 0): (3, 8)}, {("orders", 0): NOW - 1_000}, [], NOW)
    [p] = flow.partitions
    assert (p.state, p.position, p.lag_records, p.last_sync, flow.state) == (NOT_STARTED, 3, 5, None, NOT_STARTED)


def test_an_empty_source_with_no_syncs_is_caught_up():
    flow = assemble_flow("A->B", "A", "B", [], {("orders", 0): (0, 0)}, {("orders", 0): None}, [], NOW)
    assert flow.state == CAUGHT_UP


def test_source_unreachable_still_reports_the_syncs_and_checkpoints():
    down = [Unreachable("A", "cluster 'A' is unreachable")]
    flow = assemble_flow("A->B", "A", "B", [end(9, 9, NOW - 1_000, 10, 2)], None, {},
                         [(Checkpoint("billing", "A.orders", 2, 10, 10), NOW - 2_000)], NOW, down)
    [p] = flow.partitions
    assert (p.partition, p.state, p.end_offset, p.position, p.lag_records) == (2, UNKNOWN, None, 10, None)
    assert p.last_sync.upstream_offset == 9
    assert (flow.state, flow.lag_records, flow.lag_seconds) == (UNREACHABLE, None, None)
    assert flow.groups[0].group == "billing"
    assert StatusReport((flow, flow)).unreachable == ("A",)


def test_offset_syncs_unreadable_leave_positions_unknown():
    down = [Unreachable("B", "cluster 'B' is unreachable")]
    flow = assemble_flow("A->B", "A", "B", None, {("orders", 0): (0, 12)}, {}, [], NOW, down)
    [p] = flow.partitions
    assert (p.end_offset, p.position, p.lag_records, p.state, flow.state) == (12, None, None, UNKNOWN, UNREACHABLE)


def test_offset_syncs_read_back_skip_what_is_not_one():
    """MM2's syncs carry no link; a record that is not an offset sync is counted and skipped, as MM2 skips it."""
    @dataclass
    class Record:
        offset: int
        key: bytes | None
        value: bytes | None
        headers: tuple
        timestamp_ms: int

    mm2, ours = OffsetSync("t", 0, 5, 7), OffsetSync("t", 1, 9, 9)
    link = ((sync_codec.SYNC_LINK_HEADER, sync_codec.encode_sync_link(SyncLink(SYNC_RUN))),)
    records = [Record(0, *sync_codec.encode_offset_sync(mm2), (), 10), Record(1, b"junk", b"x", (), 11),
               Record(2, *sync_codec.encode_offset_sync(ours), link, 12)]
    assert written_syncs(records) == ([WrittenSync(mm2, None, 10), WrittenSync(ours, SyncLink(SYNC_RUN), 12)], 1)
