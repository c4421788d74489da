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
