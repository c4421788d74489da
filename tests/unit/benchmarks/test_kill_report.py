"""The kill trial's markdown: the figures of the replicators that have them, one line per scheduled event with
each replicator's cells (skipped, not made, or what it did), and the skips and failures spelled out."""

from __future__ import annotations

from benchmarks.kill_report import COLUMNS, markdown

SCHEDULE = [{"kind": "kill", "delay_s": 1.279}, {"kind": "broker-restart", "delay_s": 0.5},
            {"kind": "executor-kill", "delay_s": 0.25}]


def made(kind: str, before: int, after: int, duplicates: int, behind: int) -> dict[str, object]:
    return {"kind": kind, "made": True, "target_before": before, "target_after": after, "duplicates": duplicates,
            "resumed_behind": behind}


def row(**figures: object) -> dict[str, object]:
    return {c: 0 for c in COLUMNS} | figures


RESULT = {
    "schedule": SCHEDULE,
    "replicators": {
        "sparkmirror": row(kills=1, duplicates=1500, events=[
            made("kill", 9855, 10131, 1000, 1713), made("broker-restart", 12000, 12500, 500, 800),
            {"kind": "executor-kill", "made": False, "not_made": "copy complete"}]),
        "mm2": row(kills=1, executor_kill_duplicates=None, events=[
            made("kill", 8067, 8757, 855, 2311), made("broker-restart", 9000, 9100, 0, 0),
            {"kind": "executor-kill", "made": False, "skipped": "MM2 has no executors"}]),
        "sparkmirror-exactly-once": {"error": "sparkmirror-exactly-once exited (1) while copying, after event 2 "
                                              "(broker-restart):\nlog tail", "events": [
            made("kill", 100, 200, 0, 0), {"kind": "broker-restart", "made": True, "target_before": 300,
                                           "target_after": 310}]},
    },
    "duplicates_per_kill_ratio_vs_mm2": 1.1696,
}


def test_the_figures_table_has_a_row_per_replicator_with_figures():
    lines = markdown(RESULT).splitlines()
    assert lines[0] == "| replicator | " + " | ".join(COLUMNS) + " |"
    assert lines[2].startswith("| sparkmirror | 1 | 0 | 0 | 1,500 |")
    assert lines[3].startswith("| mm2 | 1 |") and "| executor-kill" not in lines[3]
    assert not any(line.startswith("| sparkmirror-exactly-once |") for line in lines)


def test_each_scheduled_event_has_a_line_with_every_replicators_cells():
    text = markdown(RESULT)
    assert ("| # | event | delay s | sparkmirror duplicates | sparkmirror resumed behind | sparkmirror target before "
            "→ after | mm2 duplicates |") in text
    assert "| 1 | kill | 1.28 | 1,000 | 1,713 | 9,855 → 10,131 | 855 | 2,311 | 8,067 → 8,757 | 0 | 0 | 100 → 200 |" \
        in text
    # a failed trial's event has no analysis: its duplicates are unknown, its offsets are shown
    assert "| 2 | broker-restart | 0.50 | 500 | 800 | 12,000 → 12,500 | 0 | 0 | 9,000 → 9,100 |  |  | 300 → 310 |" \
        in text
    assert "| 3 | executor-kill | 0.25 | not made |  |  | skipped |  |  |  |  |  |" in text


def test_skips_failures_and_the_ratio_are_spelled_out():
    text = markdown(RESULT)
    assert "- mm2: executor-kill skipped: MM2 has no executors" in text
    assert ("- sparkmirror-exactly-once: FAILED: sparkmirror-exactly-once exited (1) while copying, after event 2 "
            "(broker-restart): (the whole text is in the JSON)") in text
    assert text.endswith("- duplicates_per_kill_ratio_vs_mm2: 1.1696")


def test_a_result_without_events_has_the_figures_only():
    text = markdown({"schedule": [], "replicators": {"mm2": row(kills=0)}})
    assert len(text.splitlines()) == 3
