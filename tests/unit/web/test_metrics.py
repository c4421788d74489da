"""Status snapshots into Prometheus metrics: MM2's names and labels, KIP-1280's, and sparkmirror's own."""

from __future__ import annotations

import math

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from sparkmirror.control.checkpointer import CheckpointMetrics
from sparkmirror.offsets.lag import partition_lag
from sparkmirror.runtime.progress import Durations, PartitionProgress, ProgressSnapshot
from sparkmirror.runtime.status import FlowStatus, JobStatus, Status
from sparkmirror.sampled import Distribution
from sparkmirror.web.metrics import StatusCollector

NOW_MS = 1_700_000_000_000


def flow_status(formats=("legacy",), lag=True) -> FlowStatus:
    progress = ProgressSnapshot(
        "A->B", 3, 150, 1500, 2.0, 1, 4,
        {("orders", 0): PartitionProgress(100, 800, 10.0, 80.0, Distribution(5, 1, 9, 4.5),
                                          Distribution(20, 10, 30, 15)),
         ("orders", 1): PartitionProgress(50, 400, 5.0, 40.0, None, None)},
        Durations(((0.5, 1), (1.0, 3)), 3, 1.5, 0.4), {("orders", 1): 15})
    lags = (partition_lag("orders", 0, 100, 100, None, True, NOW_MS),
            partition_lag("orders", 1, 60, 50, NOW_MS - 4000, True, NOW_MS))
    checkpoints = CheckpointMetrics({("app", "A.orders", 0): Distribution(7, 5, 9, 7)}, {"app": 12})
    return FlowStatus("A->B", "running", None, {"orders": 2}, {("orders", 0): 100, ("orders", 1): 50}, progress,
                      2, "start", "A", "B", {"orders": "A.orders"}, lags if lag else None, checkpoints, formats)


def scrape(status: Status) -> dict[tuple[str, tuple], float]:
    registry = CollectorRegistry()
    registry.register(StatusCollector(lambda: status, clock_ms=lambda: NOW_MS + 1000))
    samples = {}
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def labels(**kw) -> tuple:
    return tuple(sorted(kw.items()))


P0 = labels(source="A", target="B", topic="A.orders", partition="0")
P1 = labels(source="A", target="B", topic="A.orders", partition="1")
FLOW = labels(source="A", target="B")


def test_mm2s_source_connector_metrics_under_strimzis_names_with_the_remote_topic():
    m = scrape(Status((flow_status(),)))
    prefix = "kafka_connect_mirror_mirrorsourceconnector_"
    assert m[(prefix + "record_count", P0)] == 100 and m[(prefix + "record_count", P1)] == 50
    assert m[(prefix + "byte_count", P0)] == 800 and m[(prefix + "byte_rate", P0)] == 80.0
    assert m[(prefix + "record_rate", P1)] == 5.0
    assert [m[(prefix + "record_age_ms" + s, P0)] for s in ("", "_min", "_max", "_avg")] == [5, 1, 9, 4.5]
    assert [m[(prefix + "replication_latency_ms" + s, P0)] for s in ("", "_min", "_max", "_avg")] == [20, 10, 30, 15]
    assert math.isnan(m[(prefix + "replication_latency_ms_avg", P1)])  # nothing yet: NaN, as Kafka's stats
    key = labels(source="A", target="B", group="app", topic="A.orders", partition="0")
    assert m[("kafka_connect_mirror_mirrorcheckpointconnector_checkpoint_latency_ms_max", key)] == 9
    assert not any(name.startswith("kafka_connect_plugins_") for name, _ in m)


def test_kip_1280_names_carry_connector_and_task_and_both_formats_can_be_on():
    m = scrape(Status((flow_status(("new",)),)))
    new = labels(connector="MirrorSourceConnector", task="0", source="A", target="B", topic="A.orders",
                 partition="0")
    assert m[("kafka_connect_plugins_record_count", new)] == 100
    assert not any(name.startswith("kafka_connect_mirror_") for name, _ in m)
    both = scrape(Status((flow_status(("legacy", "new")),)))
    assert both[("kafka_connect_plugins_record_count", new)] == both[
        ("kafka_connect_mirror_mirrorsourceconnector_record_count", P0)] == 100


def test_lag_rpo_and_checkpoint_lag_with_ages_at_scrape_time():
    m = scrape(Status((flow_status(),)))
    assert m[("sparkmirror_replication_lag_records", P0)] == 0
    assert (m[("sparkmirror_replication_lag_records", P1)], m[("sparkmirror_replication_lag_seconds", P1)]) == (10, 5.0)
    assert m[("sparkmirror_flow_replication_lag_records", FLOW)] == m[("sparkmirror_flow_rpo_records", FLOW)] == 10
    assert m[("sparkmirror_flow_rpo_seconds", FLOW)] == 5.0
    assert m[("sparkmirror_checkpoint_lag_records", labels(source="A", target="B", group="app"))] == 12


def test_no_lag_metric_before_the_first_measurement():
    m = scrape(Status((flow_status(lag=False),)))
    assert not any(name.startswith(("sparkmirror_replication_lag", "sparkmirror_flow_rpo")) for name, _ in m)


def test_flow_state_restarts_jobs_and_durations():
    jobs = (JobStatus("A->B", "emit checkpoints", 7, 2, 1, "boom"),)
    m = scrape(Status((flow_status(),), jobs))
    assert m[("sparkmirror_flow_state", labels(source="A", target="B", state="running"))] == 1
    assert m[("sparkmirror_flow_state", labels(source="A", target="B", state="failed"))] == 0
    assert (m[("sparkmirror_flow_restarts_total", FLOW)], m[("sparkmirror_flow_retries_total", FLOW)]) == (2, 1)
    assert m[("sparkmirror_records_written_again_total", FLOW)] == 4
    assert m[("sparkmirror_records_removed_before_copy_total", P1)] == 15  # a counter per partition
    assert ("sparkmirror_records_removed_before_copy_total", P0) not in m
    job = labels(source="A", target="B", job="emit checkpoints")
    assert (m[("sparkmirror_job_runs_total", job)], m[("sparkmirror_job_failures_total", job)]) == (7, 2)
    assert m[("sparkmirror_job_failures_in_a_row", job)] == 1
    assert m[("sparkmirror_batch_duration_seconds_bucket", labels(source="A", target="B", le="1.0"))] == 3
    assert m[("sparkmirror_batch_duration_seconds_count", FLOW)] == 3
    assert m[("sparkmirror_batch_duration_seconds_sum", FLOW)] == 1.5


def test_clusters_up_or_down_heartbeat_pairs_and_the_recent_rate():
    from dataclasses import replace

    from sparkmirror.runtime.status import ClusterHealth, HeartbeatPairStatus

    f = flow_status()
    f = replace(f, progress=replace(f.progress, recent_records_per_s=42.0))
    status = Status((f,), clusters=("A", "B", "C"),
                    cluster_health=(ClusterHealth("A", "up", None, 0, 0), ClusterHealth("B", "down", "gone", 0, 0),
                                    ClusterHealth("C", "unknown", None, None, None)),
                    heartbeat_pairs=(HeartbeatPairStatus("B->A", "B", "A", 1.0, 7, 2, 0, None, NOW_MS - 3000),
                                     HeartbeatPairStatus("C->A", "C", "A", 1.0, 0, 1, 1, "C down", None)))
    m = scrape(status)
    assert m[("sparkmirror_cluster_up", labels(cluster="A"))] == 1
    assert m[("sparkmirror_cluster_up", labels(cluster="B"))] == 0
    assert ("sparkmirror_cluster_up", labels(cluster="C")) not in m  # not probed yet: no sample
    assert m[("sparkmirror_flow_recent_record_rate", FLOW)] == 42.0
    b_a, c_a = labels(source="B", target="A"), labels(source="C", target="A")
    assert m[("sparkmirror_heartbeat_pair_beats_total", b_a)] == 7
    assert m[("sparkmirror_heartbeat_pair_failures_total", b_a)] == 2
    assert m[("sparkmirror_heartbeat_pair_last_beat_age_seconds", b_a)] == 4.0  # scraped 1 s after NOW_MS
    assert math.isnan(m[("sparkmirror_heartbeat_pair_last_beat_age_seconds", c_a)])
