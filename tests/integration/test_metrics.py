"""`/metrics` of a running process against what the test measures on the clusters themselves (issue 15).

On clusters of this module's own, so that the target can be stopped: record and byte counts per partition
equal what the target holds, lag falls to 0 once caught up and rises while the target broker is down (and
its age grows), checkpoint latency appears for a committed group, and every metric the Grafana dashboard
queries is exported. While the target is down, /metrics, /api/status and the web view (headless Chromium) say
so, and draw the flow writing to it as failing with its recent rate, not the minute's average (issue 34); the
screenshot is kept in test-output/web-view-target-down.png.
"""

from __future__ import annotations

import json
import math
import shutil
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from tests.dashboard_queries import dashboard_metric_names

from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import NewTopicSpec
from sparkmirror.testing.browser import read_web_view, render
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER, start_clusters
from sparkmirror.testing.records import produce
from sparkmirror.web.server import MetricsServer

from .conftest import ONLY_OWN_TOPICS, commit, records, trigger_settings, wait_until

DASHBOARD = Path(__file__).parents[2] / "dashboards" / "sparkmirror.json"
SOURCE = "kafka_connect_mirror_mirrorsourceconnector_"
KEPT_SCREENSHOT = Path(__file__).resolve().parents[2] / "test-output" / "web-view-target-down.png"


@pytest.fixture(scope="module")
def own_pair():
    pair = start_clusters(["metrics-a", "metrics-b"])
    yield pair
    for cluster in pair:
        cluster.stop()


def scrape(port: int) -> dict[tuple[str, tuple], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def labels(**values: str) -> tuple:
    """Labels as `scrape` keys them: A->B's, plus these."""
    return tuple(sorted({"source": "A", "target": "B", **values}.items()))


def partition(topic: str, p: int) -> tuple:
    return labels(topic=f"A.{topic}", partition=str(p))


def target_counts(bootstrap: str, topic: str) -> dict[int, int]:
    marks = ClusterAdmin("B", {"bootstrap.servers": bootstrap}).watermarks(topic, 2)
    return {p: high - low for p, (low, high) in marks.items()}


def test_metrics_match_the_clusters_and_lag_rises_while_the_target_is_down(own_pair, running, tmp_path, unique):
    a, b = own_pair
    topic, group = f"metrics-{unique}", f"g-{unique}"
    assert ClusterAdmin("A", a.client_settings()).create_topics([NewTopicSpec(topic, 2, 1)])[topic] is None
    first = records(unique, 300, partitions=2)
    produce(a.bootstrap_servers, topic, first)
    commit(a.bootstrap_servers, group, {(topic, 0): 100})
    path = tmp_path / "mm2.properties"
    path.write_text(f"clusters = A, B\nA.bootstrap.servers = {a.bootstrap_servers}\n"
                    f"B.bootstrap.servers = {b.bootstrap_servers}\nA->B.enabled = true\nA->B.topics = {topic}\n"
                    f"{SINGLE_BROKER}{trigger_settings('micro-batch')}emit.checkpoints.interval.seconds = 1\n"
                    f"sparkmirror.measure.lag.interval.seconds = 1\nemit.heartbeats.enabled = false\n"
                    # B, the coordination cluster, is down for half a minute below: with the default session the
                    # flow would be stopped and started again, and its counters (like MM2's task's) start over
                    f"sparkmirror.coordination.session.timeout.ms = 60000\n")
    p0, p1 = partition(topic, 0), partition(topic, 1)

    with running(path) as supervisor, MetricsServer(supervisor.status, 0, host="127.0.0.1") as server:
        def caught_up() -> dict | None:
            m = scrape(server.port)
            done = (m.get((SOURCE + "record_count", p0)) == 150 and m.get((SOURCE + "record_count", p1)) == 150
                    and m.get(("sparkmirror_replication_lag_records", p0)) == 0
                    and m.get(("sparkmirror_replication_lag_records", p1)) == 0)
            return m if done else None

        m = wait_until(caught_up, 120, "150 records per partition and lag 0 on /metrics")
        assert target_counts(b.bootstrap_servers, f"A.{topic}") == {0: 150, 1: 150}
        value_bytes = {p: sum(len(r.value) for r in first if r.partition == p) for p in (0, 1)}
        assert (m[(SOURCE + "byte_count", p0)], m[(SOURCE + "byte_count", p1)]) == (value_bytes[0], value_bytes[1])
        flow = labels()
        assert (m[("sparkmirror_flow_rpo_records", flow)], m[("sparkmirror_flow_rpo_seconds", flow)]) == (0, 0)
        assert m[("sparkmirror_replication_lag_seconds", p0)] == 0
        for measure in ("record_age_ms", "replication_latency_ms"):
            low, high = m[(SOURCE + measure + "_min", p0)], m[(SOURCE + measure + "_max", p0)]
            assert 0 <= low <= m[(SOURCE + measure + "_avg", p0)] <= high
        # every record's acknowledgement comes after its send: latency >= age for the same records
        assert m[(SOURCE + "replication_latency_ms_max", p0)] >= m[(SOURCE + "record_age_ms_min", p0)]
        assert m[("sparkmirror_flow_state", labels(state="running"))] == 1

        checkpoint = labels(group=group, topic=f"A.{topic}", partition="0")
        m = wait_until(lambda: (s := scrape(server.port)).get(
            ("kafka_connect_mirror_mirrorcheckpointconnector_checkpoint_latency_ms_avg", checkpoint)) is not None
            and s, 30, "the group's checkpoint latency")
        assert m[("kafka_connect_mirror_mirrorcheckpointconnector_checkpoint_latency_ms_max", checkpoint)] >= 0
        group_labels = labels(group=group)
        assert m[("sparkmirror_checkpoint_lag_records", group_labels)] == 0
        commit(a.bootstrap_servers, group, {(topic, 0): 130})
        wait_until(lambda: scrape(server.port).get(("sparkmirror_checkpoint_lag_records", group_labels)) == 0
                   and scrape(server.port).get(("sparkmirror_job_runs_total", labels(job="emit checkpoints")))
                   , 30, "the checkpoint of the new commit")

        exported = {name for name, _ in scrape(server.port)}
        missing = dashboard_metric_names(DASHBOARD) - exported
        assert not missing, f"the dashboard queries metrics sparkmirror does not export: {sorted(missing)}"

        b.kill()
        try:
            produce(a.bootstrap_servers, topic, [r for r in records(f"{unique}-late", 100, 2) if r.partition == 0])
            m = wait_until(lambda: (s := scrape(server.port)).get(("sparkmirror_replication_lag_records", p0)) == 50
                           and s, 30, "lag 50 on partition 0 while the target is down")
            assert m[("sparkmirror_replication_lag_records", p1)] == 0
            assert m[("sparkmirror_flow_rpo_records", flow)] == 50
            age = m[("sparkmirror_replication_lag_seconds", p0)]
            assert not math.isnan(age)
            time.sleep(2.5)
            later = scrape(server.port)[("sparkmirror_replication_lag_seconds", p0)]
            assert later >= age + 2, "the oldest unreplicated record's age grows while nothing is replicated"
        finally:
            b.restart()
        def back_in_step() -> dict | None:
            s = scrape(server.port)
            done = (s.get(("sparkmirror_replication_lag_records", p0)) == 0
                    and s.get((SOURCE + "record_count", p0), 0) >= 200)
            return s if done else None

        m = wait_until(back_in_step, 120, "lag 0 again after the target came back")
        assert m[(SOURCE + "record_count", p0)] == target_counts(b.bootstrap_servers, f"A.{topic}")[0]


def api_status(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=10) as answer:
        return json.loads(answer.read())


def test_a_target_that_is_down_is_drawn_down_and_its_flow_failing_with_its_recent_rate(own_pair, running, tmp_path,
                                                                                        unique):
    a, b = own_pair
    topic = f"down-{unique}"
    assert ClusterAdmin("A", a.client_settings()).create_topics([NewTopicSpec(topic, 1, 1)])[topic] is None
    produce(a.bootstrap_servers, topic, records(unique, 300, partitions=1))
    path = tmp_path / "mm2.properties"
    path.write_text(f"clusters = A, B\nA.bootstrap.servers = {a.bootstrap_servers}\n"
                    f"B.bootstrap.servers = {b.bootstrap_servers}\nA->B.enabled = true\nA->B.topics = {topic}\n"
                    f"{SINGLE_BROKER}{trigger_settings('micro-batch')}sparkmirror.measure.lag.interval.seconds = 1\n"
                    f"emit.heartbeats.interval.seconds = 1\nemit.checkpoints.enabled = false\n{ONLY_OWN_TOPICS}"
                    f"sparkmirror.coordination.session.timeout.ms = 60000\n")  # outlives the outage (see above)

    with running(path) as supervisor, MetricsServer(supervisor.status, 0, host="127.0.0.1") as server:
        def flow() -> dict:
            return next(f for f in api_status(server.port)["flows"] if f["name"] == "A->B")

        wait_until(lambda: flow()["lag_records"] == 0 and flow()["records"] == 300, 120, "A->B caught up")
        assert scrape(server.port)[("sparkmirror_cluster_up", (("cluster", "B"),))] == 1
        wait_until(lambda: any(p["name"] == "B->A" and p["beats"] > 0
                               for p in api_status(server.port)["heartbeat_pairs"]), 30, "B->A's heartbeats")
        b.kill()
        killed = time.monotonic()
        try:
            produce(a.bootstrap_servers, topic, records(f"{unique}-late", 100, partitions=1))

            def down_and_stopped() -> dict | None:
                doc = api_status(server.port)
                f = next(f for f in doc["flows"] if f["name"] == "A->B")
                states = {c["name"]: c["state"] for c in doc["cluster_states"]}
                done = (states == {"A": "up", "B": "down"} and f["condition"] == "target B down"
                        and f["recent_records_per_s"] == 0 and (f["lag_records"] or 0) > 0)
                return doc if done else None

            doc = wait_until(down_and_stopped, 30, "B down, A->B failing with a recent rate of 0")
            seen_s = time.monotonic() - killed
            f = next(f for f in doc["flows"] if f["name"] == "A->B")
            assert f["state"] == "running" and f["condition_level"] == "bad"
            assert f["records_per_s"] > 0  # the minute's average still counts the copy before the outage
            assert "unreachable" in next(c for c in doc["cluster_states"] if c["name"] == "B")["error"]
            m = scrape(server.port)
            up = {alias: m[("sparkmirror_cluster_up", (("cluster", alias),))] for alias in "AB"}
            assert up == {"A": 1, "B": 0}
            assert m[("sparkmirror_flow_recent_record_rate", labels())] == 0
            assert m[("sparkmirror_heartbeat_pair_beats_total", (("source", "B"), ("target", "A")))] > 0

            screenshot = tmp_path / "target-down.png"
            view = read_web_view(render(f"http://127.0.0.1:{server.port}/", screenshot, budget_ms=3000))
            KEPT_SCREENSHOT.parent.mkdir(exist_ok=True)
            shutil.copyfile(screenshot, KEPT_SCREENSHOT)
            assert view.nodes["B"]["state"] == "down" and "unreachable" in str(view.nodes["B"]["title"])
            assert view.nodes["A"]["state"] == "up"
            edge = view.edges["A->B"]
            assert (edge["state"], edge["colour"], edge["condition"]) == ("running", "bad", "target B down")
            assert str(edge["label"]).startswith("target B down · ") and str(edge["label"]).endswith(" 0.0 rec/s")
            assert view.beats["B->A"]["state"] == "beating"
            print(f"B seen down {seen_s:.1f} s after its kill")  # the measurement, seen with -s
        finally:
            b.restart()
        wait_until(lambda: (f := flow())["condition"] is None and f["lag_records"] == 0 and f["records"] == 400
                   and {c["name"]: c["state"] for c in api_status(server.port)["cluster_states"]}["B"] == "up",
                   120, "B up again and A->B caught up")
