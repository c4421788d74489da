"""Status snapshots: a running flow's condition (a cluster of it down, stalled) and the log lines."""

from __future__ import annotations

from dataclasses import replace

from sparkmirror.offsets.lag import PartitionLag
from sparkmirror.runtime.progress import ProgressSnapshot
from sparkmirror.runtime.status import ClusterHealth, FlowStatus, HeartbeatPairStatus, Status, flow_condition

NOW_MS = 1_700_000_100_000


def lag(records: int, oldest_s_ago: float, measured_s_ago: float = 1.0) -> PartitionLag:
    return PartitionLag("orders", 0, 100, 100 - records, records,
                        int(NOW_MS - oldest_s_ago * 1000) if records else None, int(NOW_MS - measured_s_ago * 1000))


def flow(quiet_s: float | None, *lags: PartitionLag, state: str = "running") -> FlowStatus:
    progress = ProgressSnapshot("A->B", 3, 50, 500, 2.0)
    return FlowStatus("A->B", state, None, {"orders": 1}, {("orders", 0): 50}, progress, 1, "start",
                      "A", "B", {"orders": "A.orders"}, tuple(lags), quiet_s=quiet_s, stall_after_s=5.0)


UP = {alias: ClusterHealth(alias, "up", None, 0, 0) for alias in "AB"}


def test_a_running_flow_of_a_cluster_that_is_down_is_bad_naming_the_cluster():
    down = {**UP, "B": ClusterHealth("B", "down", "unreachable", 0, 0)}
    condition = flow_condition(flow(0.5, lag(0, 0)), down, NOW_MS)
    assert (condition.level, condition.text) == ("bad", "target B down")
    source_down = {**UP, "A": ClusterHealth("A", "down", "unreachable", 0, 0)}
    assert flow_condition(flow(0.5), source_down, NOW_MS).text == "source A down"
    assert flow_condition(flow(None, state="failed"), down, NOW_MS) is None  # its state says it already


def test_a_flow_with_old_records_behind_that_wrote_nothing_for_a_while_stalls():
    stalled = flow_condition(flow(12.0, lag(50, 12.0)), UP, NOW_MS)
    assert (stalled.level, stalled.text) == ("warn", "stalled: nothing written for 12 s, 50 records behind")


def test_no_stall_when_it_wrote_lately_is_caught_up_or_its_records_are_young_or_the_lag_predates_its_last_write():
    assert flow_condition(flow(3.0, lag(50, 12.0)), UP, NOW_MS) is None  # wrote 3 s ago
    assert flow_condition(flow(12.0, lag(0, 0)), UP, NOW_MS) is None  # caught up, nothing to write
    assert flow_condition(flow(12.0, lag(50, 2.0)), UP, NOW_MS) is None  # behind by records 2 s old only
    assert flow_condition(flow(12.0, lag(50, 30.0, measured_s_ago=20.0)), UP, NOW_MS) is None  # measured before
    assert flow_condition(flow(None, lag(50, 30.0)), UP, NOW_MS) is None  # not running a query


def test_the_log_lines_name_clusters_down_flow_conditions_and_heartbeat_pairs():
    status = Status((flow(12.0, lag(50, 12.0)),), clusters=("A", "B", "C"),
                    cluster_health=(UP["A"], UP["B"], ClusterHealth("C", "down", "no answer", NOW_MS - 7000, NOW_MS)),
                    heartbeat_pairs=(HeartbeatPairStatus("B->A", "B", "A", 1.0, 4, 0, 0, None, NOW_MS - 2000),
                                     HeartbeatPairStatus("C->A", "C", "A", 1.0, 0, 3, 3, "C down", None)))
    lines = status.lines(NOW_MS)
    assert lines[0] == "cluster C: down for 7 s: no answer"
    assert lines[1].startswith("flow A->B: running, stalled: nothing written for 12 s, 50 records behind; ")
    assert lines[2:] == ["heartbeats B->A: beating; 4 beat(s), the last 2 s ago",
                         "heartbeats C->A: failing; 0 beat(s); 3 failure(s) in a row: C down"]
    assert replace(status, cluster_health=()).lines(NOW_MS)[0].startswith("flow A->B: running, stalled")
