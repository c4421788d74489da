"""The text view of `sparkmirror status` (cli/status.py)."""

from __future__ import annotations

from sparkmirror.cli.status import report_lines
from sparkmirror.offsets.codec import Checkpoint
from sparkmirror.offsets.flow_report import StatusReport, Unreachable, WrittenSync, assemble_flow, pair_report
from sparkmirror.offsets.syncs import SYNC_END, OffsetSync, SyncLink

NOW = 1_700_000_000_000


def test_text_names_the_flow_each_partition_its_lag_and_the_groups():
    syncs = [WrittenSync(OffsetSync("orders", p, 9, 9), SyncLink(SYNC_END, 10), NOW - 5_000) for p in (0, 1)]
    flow = assemble_flow("A->B", "A", "B", syncs, {("orders", 0): (0, 10), ("orders", 1): (0, 13)},
                         {("orders", 1): NOW - 40_000}, [(Checkpoint("billing", "A.orders", 0, 10, 10), NOW)], NOW)
    text = "\n".join(report_lines(StatusReport((flow,))))
    assert "flow A->B: replicating; lag 3 records, 40.0 s" in text
    assert "removed before copy" not in text
    rows = [line.split() for line in text.splitlines() if line.startswith("  orders")]
    assert [(r[1], r[2]) for r in rows] == [("0", "caught"), ("1", "replicating")]
    assert rows[1][3:6] == ["13", "10", "3"]
    assert "9 -> 9, 5 s ago" in text
    assert "billing" in text


def test_records_removed_at_the_source_before_the_copy_are_counted_and_named():
    """The flow stopped at 10 (sparkmirror's exact sync); retention then moved partition 0's log start to 25."""
    syncs = [WrittenSync(OffsetSync("orders", p, 9, 9), SyncLink(SYNC_END, 10), NOW - 5_000) for p in (0, 1)]
    flow = assemble_flow("A->B", "A", "B", syncs, {("orders", 0): (25, 40), ("orders", 1): (0, 10)},
                         {("orders", 0): NOW - 60_000}, [], NOW)
    assert [p.removed_before_copy for p in flow.partitions] == [15, 0]
    assert flow.removed_before_copy == 15 and flow.to_json()["removed_before_copy"] == 15
    text = "\n".join(report_lines(StatusReport((flow,))))
    assert "removed before copy: 15 records were removed at the source" in text
    assert [line.split()[-1] for line in text.splitlines() if line.startswith("  orders")] == ["15", "0"]
    # MM2's sparse syncs lag behind its position: a sync below the log start proves nothing there
    mm2 = assemble_flow("A->B", "A", "B", [WrittenSync(OffsetSync("orders", 0, 9, 9), None, NOW - 5_000)],
                        {("orders", 0): (25, 40)}, {("orders", 0): NOW - 60_000}, [], NOW)
    assert mm2.removed_before_copy == 0


def test_text_names_a_cluster_that_did_not_answer():
    down = [Unreachable("A", "cluster 'A' is unreachable"), Unreachable("B", "cluster 'B' is unreachable")]
    flow = assemble_flow("A->B", "A", "B", None, None, {}, [], NOW, down)
    text = "\n".join(report_lines(StatusReport((flow,))))
    assert "flow A->B: unreachable; lag unknown" in text
    assert "unreachable: cluster 'A' is unreachable" in text
    assert "(no source partition to replicate)" in text
    assert "checkpoints on B: not read (B did not answer)" in text


def test_text_names_the_process_that_runs_the_flow_or_that_none_does():
    from dataclasses import replace

    flow = assemble_flow("A->B", "A", "B", [], {}, {}, [], NOW)
    assert "runs in" not in report_lines(StatusReport((flow,)))[0]  # the group could not be read
    assert report_lines(StatusReport((replace(flow, runs_in="sparkmirror-h1-42"),)))[0].endswith(
        "; runs in sparkmirror-h1-42")
    assert report_lines(StatusReport((replace(flow, runs_in=""),)))[0].endswith("; no sparkmirror process runs it")


def test_heartbeat_only_pairs_are_listed_with_their_newest_beat():
    beating = pair_report("B", "A", NOW - 1_500, 1, NOW)
    silent = pair_report("C", "A", NOW - 60_000, 5, NOW)
    none = pair_report("C", "B", None, 1, NOW)
    assert (beating.state, beating.age_s, silent.state, none.state) == ("beating", 1.5, "silent", "no heartbeat")
    text = "\n".join(report_lines(StatusReport((), (beating, silent, none))))
    assert "heartbeats B->A (no flow, heartbeats only): beating; newest beat" in text and "(1.5 s ago)" in text
    assert "heartbeats C->A (no flow, heartbeats only): silent" in text
    assert "heartbeats C->B (no flow, heartbeats only): no heartbeat; no beat in its target's heartbeats topic" in text
    assert StatusReport((), (beating,)).to_json()["heartbeat_pairs"][0]["state"] == "beating"
