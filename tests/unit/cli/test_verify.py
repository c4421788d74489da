"""`sparkmirror verify`'s table: the verdict per flow, a row per partition, each difference with its offsets."""

import json

from sparkmirror.cli.verify import report_lines
from sparkmirror.offsets.flow_report import WrittenSync
from sparkmirror.offsets.syncs import SYNC_END, OffsetSync, SyncLink
from sparkmirror.offsets.verification import Comparison, FlowVerdict, Unmatched, VerifyReport, judge, plan_range


def report(comparison: Comparison) -> VerifyReport:
    r = plan_range("orders", 0, "A.orders", (0, 12), (0, 10), [WrittenSync(OffsetSync("orders", 0, 9, 9),
                                                                           SyncLink(SYNC_END, 10), 0)])
    return VerifyReport((FlowVerdict("A->B", (judge(r, comparison),)),), 20, 2.0)


def test_a_whole_copy_reads_whole_with_the_rate():
    text = "\n".join(report_lines(report(Comparison(10, 10, 10, last_matched=(9, 9)))))
    assert "flow A->B: whole; nothing differs" in text
    assert "20 records read in 2.0 s (10 records/s)" in text
    row = next(line.split() for line in text.splitlines() if line.startswith("  orders"))
    assert row == ["orders", "0", "0-10", "0-10", "10/10", "0", "0", "0", "0", "0", "2"]  # 2 not copied yet


def test_each_difference_is_named_with_its_offsets_and_json_has_them_all():
    damaged = report(Comparison(10, 10, 9, (Unmatched(4, 4, (3, 3)),), (Unmatched(4, 4, (3, 3)),),
                                unmatched_source_count=1, unmatched_target_count=1, last_matched=(9, 9)))
    text = "\n".join(report_lines(damaged))
    assert "flow A->B: NOT whole; 1 changed" in text
    assert "changed: source orders-0@4, target A.orders-0@4" in text
    doc = json.loads(json.dumps(damaged.to_json()))  # as --json prints it
    assert doc["whole"] is False and doc["flows"][0]["counts"]["changed"] == 1
    assert doc["flows"][0]["partitions"][0]["differences"] == [
        {"kind": "changed", "source_offset": 4, "target_offset": 4, "note": ""}]
