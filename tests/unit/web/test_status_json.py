from tests.unit.web.test_metrics import NOW_MS, flow_status

from sparkmirror.runtime.status import JobStatus, Status
from sparkmirror.web.status_json import status_json


def test_the_web_views_json_has_clusters_flows_partitions_and_jobs():
    status = Status((flow_status(),), (JobStatus("A->B", "measure lag", 3, 1, 0, "timed out"),), ("A", "B", "C"))
    doc = status_json(status, NOW_MS)
    assert doc["clusters"] == ["A", "B", "C"]
    [flow] = doc["flows"]
    assert (flow["name"], flow["source"], flow["target"], flow["state"]) == ("A->B", "A", "B", "running")
    assert (flow["lag_records"], flow["lag_seconds"], flow["rpo_records"]) == (10, 4.0, 10)
    assert flow["records_per_s"] == 15.0 and flow["bytes_per_s"] == 120.0
    p1 = next(p for p in flow["partitions"] if p["partition"] == 1)
    assert (p1["remote_topic"], p1["position"], p1["end_offset"], p1["lag_records"]) == ("A.orders", 50, 60, 10)
    assert p1["record_age_ms_avg"] is None
    assert (flow["removed_before_copy"], p1["removed_before_copy"]) == (15, 15)
    assert flow["jobs"] == [{"name": "measure lag", "runs": 3, "failures": 1, "failures_in_a_row": 0,
                             "last_error": "timed out"}]


def test_before_lag_is_measured_it_is_null_not_zero():
    doc = status_json(Status((flow_status(lag=False),)), NOW_MS)
    assert doc["clusters"] == ["A", "B"]
    assert doc["flows"][0]["lag_records"] is None and doc["flows"][0]["partitions"][0]["lag_seconds"] is None


def test_a_standby_flow_names_the_process_that_runs_it():
    from dataclasses import replace

    status = Status((replace(flow_status(), state="standby", owner="sparkmirror-h2-7"),), process="sparkmirror-h1-3",
                    coordinated=True)
    doc = status_json(status, NOW_MS)
    assert (doc["process"], doc["coordinated"]) == ("sparkmirror-h1-3", True)
    assert (doc["flows"][0]["state"], doc["flows"][0]["owner"]) == ("standby", "sparkmirror-h2-7")


def test_clusters_down_a_flows_condition_its_recent_rate_and_heartbeat_pairs():
    from dataclasses import replace

    from sparkmirror.runtime.status import ClusterHealth, HeartbeatPairStatus

    f = flow_status()
    f = replace(f, progress=replace(f.progress, recent_records_per_s=0.0, since_last_write_s=9.0), quiet_s=9.0)
    status = Status((f,), clusters=("A", "B"),
                    cluster_health=(ClusterHealth("A", "up", None, NOW_MS - 60_000, NOW_MS),
                                    ClusterHealth("B", "down", "cluster 'B' is unreachable", NOW_MS - 8000, NOW_MS)),
                    heartbeat_pairs=(HeartbeatPairStatus("B->A", "B", "A", 1.0, 7, 2, 2, "B down", NOW_MS - 3000),))
    doc = status_json(status, NOW_MS)
    assert doc["clusters"] == ["A", "B"]  # as before: names
    assert doc["cluster_states"] == [
        {"name": "A", "state": "up", "error": None, "since_ms": NOW_MS - 60_000, "checked_ms": NOW_MS},
        {"name": "B", "state": "down", "error": "cluster 'B' is unreachable", "since_ms": NOW_MS - 8000,
         "checked_ms": NOW_MS}]
    [flow] = doc["flows"]
    assert (flow["state"], flow["condition"], flow["condition_level"]) == ("running", "target B down", "bad")
    assert (flow["records_per_s"], flow["recent_records_per_s"], flow["quiet_s"]) == (15.0, 0.0, 9.0)
    assert doc["heartbeat_pairs"] == [{"name": "B->A", "source": "B", "target": "A", "state": "failing",
                                       "interval_s": 1.0, "beats": 7, "failures": 2, "failures_in_a_row": 2,
                                       "last_error": "B down", "last_beat_ms": NOW_MS - 3000, "last_beat_age_s": 3.0}]


def test_a_flow_well_has_no_condition():
    [flow] = status_json(Status((flow_status(),)), NOW_MS)["flows"]
    assert (flow["condition"], flow["condition_level"], flow["recent_records_per_s"]) == (None, None, 0.0)
