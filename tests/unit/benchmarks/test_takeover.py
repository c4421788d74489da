"""The pure parts of the takeover trial: when the copy came back after a kill (takeover_watch), which sparkmirror
process runs the flow (takeover_subjects), the figures and their markdown (takeover_figures), and its options."""

from __future__ import annotations

import pytest
from benchmarks.takeover_figures import COLUMNS, markdown, spread, takeover_figures
from benchmarks.takeover_subjects import first_runner, flow_states
from benchmarks.takeover_trial import mm2_name, parse_args, settle_delays
from benchmarks.takeover_watch import Probe, RemoteLog

KILLED_AT = 1000.0  # wall clock, s
GONE_MS = 1_000_100  # the killed process was gone 0.1 s later


def test_the_takeover_ends_when_every_partition_holds_a_record_created_after_the_kill():
    probe = Probe(2, KILLED_AT, GONE_MS, {0: 10, 1: 20})
    probe.observe(0, 4, GONE_MS - 5000, now=1003.0)  # a re-send, written before the mark: nothing yet
    assert probe.resumed_s() is None and not probe.complete
    probe.observe(0, 10, GONE_MS - 4000, now=1004.0)  # written after the kill, but an old record
    assert probe.resumed_s() == 4.0 and probe.takeover_s() is None
    probe.observe(0, 11, GONE_MS + 1, now=1005.0)
    assert not probe.complete  # partition 1 has nothing new yet
    probe.observe(1, 21, GONE_MS + 2, now=1007.5)
    probe.observe(0, 12, GONE_MS + 3, now=1009.0)  # later records change nothing
    assert probe.complete and probe.takeover_s() == 7.5 and probe.resumed_s() == 4.0


def test_a_record_created_just_before_the_process_was_gone_is_not_the_successors():
    probe = Probe(1, KILLED_AT, GONE_MS, {0: 0})
    probe.observe(0, 0, GONE_MS, now=1001.0)
    assert not probe.complete


def test_the_log_keeps_ids_offsets_and_the_newest_time_per_partition():
    log = RemoteLog(2)
    log.add(0, 0, 0, 100, now=1.0)
    log.add(1, 0, 1, 150, now=1.0)
    log.add(0, 1, 2, 90, now=1.0)  # an older CreateTime does not move the newest
    log.add(0, 2, 2, 200, now=1.0)  # a duplicate
    log.add(1, 1, -1, 300, now=1.0)  # no id: kept for the order checks, not counted
    assert list(log.ids[0]) == [0, 2, 2] and list(log.offsets[0]) == [0, 1, 2]
    assert log.newest_ms == {0: 200, 1: 300}
    assert log.distinct == 3 and log.missing(3) == 0 and log.missing(5) == 2
    assert log.all_newer_than(199) and not log.all_newer_than(200)


def test_the_log_feeds_the_probe_while_one_is_set():
    log = RemoteLog(1)
    log.probe = probe = Probe(1, KILLED_AT, GONE_MS, {0: 0})
    log.add(0, 0, 5_000_000, GONE_MS + 1, now=1002.0)  # a large id grows the seen ids
    assert probe.takeover_s() == 2.0 and log.distinct == 1
    log.probe = None
    log.add(0, 1, 7, GONE_MS + 2, now=1003.0)
    assert probe.takeover_s() == 2.0


def test_the_process_running_the_flow_is_the_first_whose_state_is_running():
    statuses = {
        "sm-1": None,  # no answer
        "sm-2": {"flows": [{"name": "other->tgt", "state": "running"}, {"name": "smsrc->tgt", "state": "standby"}]},
        "sm-3": {"flows": [{"name": "smsrc->tgt", "state": "running"}]},
        "sm-4": {"flows": [{"name": "smsrc->tgt", "state": "running"}]},
    }
    states = flow_states(statuses, "smsrc->tgt")
    assert states == {"sm-1": None, "sm-2": "standby", "sm-3": "running", "sm-4": "running"}
    assert first_runner(states) == "sm-3"


def test_no_process_runs_the_flow():
    states = flow_states({"a": {"flows": []}, "b": {"flows": "broken"}, "c": {}}, "smsrc->tgt")
    assert states == {"a": None, "b": None, "c": None}
    assert first_runner(states) is None


def test_spread_leaves_out_what_was_not_measured():
    assert spread([3.0, None, 1.0, 2.5]) == {"min": 1.0, "median": 2.5, "max": 3.0}
    assert spread([None]) == {"min": None, "median": None, "max": None}


def test_takeover_figures_from_the_kills():
    events = [{"takeover_s": 20.0, "resumed_s": 18.0, "moved_s": 17.0, "timed_out": False},
              {"takeover_s": None, "resumed_s": None, "moved_s": None, "timed_out": True},
              {"takeover_s": 10.0, "resumed_s": 9.5, "moved_s": None, "timed_out": False}]
    figures = takeover_figures(events)
    assert (figures["takeover_s_min"], figures["takeover_s_median"], figures["takeover_s_max"]) == (10.0, 15.0, 20.0)
    assert figures["takeover_s_each_kill"] == [20.0, None, 10.0]
    assert figures["moved_s_median"] == 17.0 and figures["takeovers_timed_out"] == 1


def test_markdown_has_a_row_per_replicator_a_line_per_kill_and_the_failures():
    row = {c: 1 for c in COLUMNS} | {"events": [{"victim": "w1", "takeover_s": 12.5, "duplicates": 300},
                                                 {"victim": "w2", "timed_out": True, "duplicates": 0}]}
    text = markdown({"replicators": {"mm2-distributed": row,
                                     "sparkmirror": {"error": "boom\nmore", "events": [{"victim": "sm-1"}]}}})
    lines = text.splitlines()
    assert lines[0].startswith("| replicator | kills | lost |")
    assert any(line.startswith("| mm2-distributed | 1 |") for line in lines)
    assert "| 1 | w1 | 12.5 | 300 | sm-1 |  |  |" in lines
    assert "| 2 | w2 | timed out | 0 |  |  |  |" in lines
    assert "- sparkmirror: FAILED: boom (the whole text is in the JSON)" in lines


def test_settle_delays_are_seeded_and_within_the_jitter():
    delays = settle_delays(5, 15.0, 5.0, seed=42)
    assert delays == settle_delays(5, 15.0, 5.0, seed=42) != settle_delays(5, 15.0, 5.0, seed=43)
    assert all(15.0 <= d <= 20.0 for d in delays)


def test_options():
    args = parse_args(["--only", "mm2", "--mm2-rebalance-delay-ms", "300000,10000"])
    assert args.rebalance_delays == [300000, 10000] and args.kills == 10
    assert [mm2_name(d) for d in args.rebalance_delays] == ["mm2-distributed", "mm2-distributed-delay-10000ms"]
    assert parse_args([]).rebalance_delays == [300000]
    for bad in (["--mm2-rebalance-delay-ms", "soon"], ["--kills", "-1"], ["--mm2-workers", "1"], ["--rate", "0"]):
        with pytest.raises(SystemExit):
            parse_args(bad)
