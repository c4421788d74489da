"""The kill trial's analysis: duplicates charged to the event after which they were written, the per-kill
figures counting process kills only, and the other events' duplicates summed per kind."""

from __future__ import annotations

import pytest
from benchmarks.kill_analysis import analyse, reported, summary
from benchmarks.kill_events import BROKER_RESTART, EXECUTOR_KILL, KILL

RECORDS = 8  # two partitions: ids 0, 2, 4, 6 in partition 0 and 1, 3, 5, 7 in partition 1


def test_each_duplicate_is_charged_to_the_event_before_it_and_kills_alone_make_the_per_kill_figures():
    # partition 0: a kill after offset 1 (re-sends id 2), a broker restart after offset 3 (re-sends 2 and 4),
    # an executor kill after offset 6 (partition 0 not affected), then the rest.
    ids = {0: [0, 2, 2, 4, 2, 4, 6], 1: [1, 3, 5, 1, 3, 5, 7]}
    offsets = {p: list(range(len(v))) for p, v in ids.items()}
    # partition 1: nothing until the executor kill, after which ids 1, 3, 5 come again (offsets 3 to 5)
    marks = [{0: 2, 1: 3}, {0: 4, 1: 3}, {0: 7, 1: 3}]
    verdict = analyse(ids, offsets, RECORDS, marks)
    assert verdict.duplicates_by_segment == [0, 1, 2, 3]
    assert verdict.resumed_behind == [1, 2, 3]
    figures = summary(verdict, RECORDS, [KILL, BROKER_RESTART, EXECUTOR_KILL])
    assert figures["lost"] == 0 and figures["duplicates"] == 6 and figures["kills"] == 1
    assert figures["duplicates_each_kill"] == [1] and figures["duplicates_per_kill"] == 1.0
    assert figures["resumed_behind_each_kill"] == [1]
    assert figures["duplicates_each_event"] == [1, 2, 3]
    assert figures["duplicates_by_event_kind"] == {BROKER_RESTART: 2, EXECUTOR_KILL: 3}
    assert figures["partitions_in_order"] == 2


def test_without_kills_there_are_no_per_kill_figures():
    ids = {0: [0, 2, 4, 6], 1: [1, 3, 5, 7]}
    verdict = analyse(ids, {p: range(4) for p in ids}, RECORDS, [{0: 2, 1: 2}])
    figures = summary(verdict, RECORDS, [BROKER_RESTART])
    assert figures["kills"] == 0 and figures["duplicates_per_kill"] is None
    assert figures["duplicates_by_event_kind"] == {BROKER_RESTART: 0}


def test_summary_needs_a_kind_per_event():
    verdict = analyse({0: [0], 1: [1]}, {0: [0], 1: [0]}, 2, [{0: 1, 1: 1}])
    with pytest.raises(ValueError, match="1 events"):
        summary(verdict, 2, [])


def test_the_report_lines_give_the_records_saved_and_those_read_again(tmp_path):
    log = tmp_path / "sparkmirror.log"
    log.write_text(
        "2026-11-28 03:30:59,698 INFO sparkmirror.runtime.flow_runner: flow a->b batch 1: 0 records, 966 skipped, "
        "0 bytes, 1 partitions, 0.00 s\n"
        "03:31:00 WARN MirrorWriter: flow task failed: a record of 10000 bytes\n"
        "2026-11-28 03:31:00,208 INFO sparkmirror.runtime.flow_runner: flow a->b batch 2: 12 records, 3 skipped, "
        "22 bytes, 6 partitions, 0.01 s\n")
    out = reported(log)
    assert (out.records, out.skipped, out.lines) == (12, 969, 2)
    assert out.last_at is not None and out.last_at.second == 0 and out.last_at.minute == 31
