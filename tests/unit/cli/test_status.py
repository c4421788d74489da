"""The text view of `sparkmirror status` (cli/status.py)."""

from __future__ import annotations

from sparkmirror.cli.status import report_lines
from sparkmirror.offsets.codec import Checkpoint
from sparkmirror.offsets.flow_report import StatusReport, Unreachable, WrittenSync, assemble_flow
from sparkmirror.offsets.syncs import SYNC_END, OffsetSync, SyncLink

NOW = 1_700_000_000_000


def test_text_names_the_flow_each_partition_its_lag_and_the_groups():
    syncs = [WrittenSync(OffsetSync("orders", p, 9, 9), SyncLink(SYNC_END, 10), NOW - 5_000) for p in (0, 1)]
    flow = assemble_flow("A->B", "A", "B", syncs, {("orders", 0): (0, 10), ("orders", 1): (0, 13)},
                         {("orders", 1): NOW - 4_000}, [(Checkpoint("billing", "A.orders", 0, 10, 10), NOW)], NOW)
    text = "\n".join(report_lines(StatusReport((flow,))))
    assert "flow A->B: replicating; lag 3 records, 4.0 s" in text
    rows = [line.split() for line in text.splitlines() if line.startswith("  orders")]
    assert [(r[1], r[2]) for r in rows] == [("0", "caught"), ("1", "replicating")]
    assert rows[1][3:6] == ["13", "10", "3"]
    assert "9 -> 9, 5 s ago" in text
    assert "billing" in text


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
