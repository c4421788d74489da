"""The writer report's schema: PartitionSummary's fields, read by name."""

from __future__ import annotations

import pytest

from sparkmirror.model import PartitionSummary

REPORT = {"topic": "t", "partition": 2, "records": 3, "skipped": 1, "bytes": 30, "next_upstream": 14,
          "sync_upstream": [10, 13], "sync_downstream": [0, 2], "sync_runs": [False, False],
          "value_bytes": 24, "record_age_ms": [3, 30, 5, 15, 10], "replication_latency_ms": [],
          "dropped": 1, "failed": 0}


def test_a_report_reads_into_its_summary():
    summary = PartitionSummary.from_report(REPORT)
    assert summary == PartitionSummary("t", 2, 3, 1, 30, 14, (10, 13), (0, 2), (False, False), 24,
                                       (3, 30, 5, 15, 10), (), dropped=1, failed=0)
    assert summary.syncs == [(10, 0), (13, 2)]


@pytest.mark.parametrize("row", [{**REPORT, "remote_topic": "A.t"},
                                 {k: v for k, v in REPORT.items() if k != "skipped"}])
def test_a_report_with_other_fields_is_refused_naming_the_version_mismatch(row):
    with pytest.raises(ValueError, match="different versions; run `sparkmirror setup`"):
        PartitionSummary.from_report(row)
