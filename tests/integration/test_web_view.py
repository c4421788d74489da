"""The web view of a running process on three real clusters, rendered by headless Chromium (issue 15).

Flows A->B, A->C and B->C run in one process; B->C copies one record per micro-batch, so it is still
behind when the page is read. The page must show the three clusters and every flow with its lag: 0 for the
flows that caught up, B->C's backlog for B->C. The screenshot is kept in test-output/web-view-clusters.png.
"""

from __future__ import annotations

import json
import shutil
import urllib.request
from pathlib import Path

from sparkmirror.testing.browser import read_web_view, render
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER
from sparkmirror.testing.records import produce
from sparkmirror.web.server import MetricsServer

from .conftest import ONLY_OWN_TOPICS, records, trigger_settings, wait_until

KEPT_SCREENSHOT = Path(__file__).resolve().parents[2] / "test-output" / "web-view-clusters.png"
SLOW_BACKLOG = 400


def api_status(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=10) as answer:
        return json.loads(answer.read())


def test_the_web_view_shows_three_clusters_and_every_flow_with_its_lag(clusters, more_clusters, create_topic,
                                                                     running, tmp_path, unique):
    a, b, c = clusters.source, clusters.target, more_clusters[0]
    orders, payments = f"web-orders-{unique}", f"web-payments-{unique}"
    create_topic("A", orders, 2)
    create_topic("B", payments, 1)
    produce(a, orders, records(unique, 40, partitions=2))
    produce(b, payments, records(unique, SLOW_BACKLOG))
    path = tmp_path / "mm2.properties"
    path.write_text(f"clusters = A, B, C\nA.bootstrap.servers = {a}\nB.bootstrap.servers = {b}\n"
                    f"C.bootstrap.servers = {c}\nA->B.enabled = true\nA->B.topics = {orders}\n"
                    f"A->C.enabled = true\nA->C.topics = {orders}\nB->C.enabled = true\nB->C.topics = {payments}\n"
                    f"B->C.sparkmirror.max.offsets.per.trigger = 1\nsparkmirror.measure.lag.interval.seconds = 1\n"
                    f"{SINGLE_BROKER}{ONLY_OWN_TOPICS}{trigger_settings('micro-batch')}")

    with running(path) as supervisor, MetricsServer(supervisor.status, 0, host="127.0.0.1") as server:
        def ready() -> dict | None:
            flows = {f["name"]: f for f in api_status(server.port)["flows"]}
            done = (flows["A->B"]["lag_records"] == 0 and flows["A->C"]["lag_records"] == 0
                    and (flows["B->C"]["lag_records"] or 0) > 0)
            return flows if done else None

        wait_until(ready, 120, "A->B and A->C caught up while B->C is still behind")
        screenshot = tmp_path / "web-view.png"
        view = read_web_view(render(f"http://127.0.0.1:{server.port}/", screenshot, budget_ms=3000))
        after = {f["name"]: f for f in api_status(server.port)["flows"]}

    KEPT_SCREENSHOT.parent.mkdir(exist_ok=True)
    shutil.copyfile(screenshot, KEPT_SCREENSHOT)
    assert view.updates >= 1 and view.connection == "ok"
    assert set(view.clusters) == {"A", "B", "C"}
    assert set(view.edges) == set(view.flows) == {"A->B", "A->C", "B->C"}
    for name in ("A->B", "A->C"):
        assert (view.edges[name]["lag_records"], view.flows[name]["lag_records"]) == (0, 0)
        assert view.edges[name]["state"] == "running"
    behind = view.edges["B->C"]["lag_records"]
    # one record per batch: the page's lag lies between the lag after the page and the whole backlog
    assert after["B->C"]["lag_records"] <= behind <= SLOW_BACKLOG
    assert view.flows["B->C"]["lag_records"] == behind
    assert view.edges["B->C"]["lag_seconds"] is not None and view.edges["B->C"]["lag_seconds"] > 0
    rows = {key: row for key, row in view.partitions.items() if key[0] == "B->C"}
    assert [(key[1], key[2]) for key in rows] == [(payments, 0)]
    assert rows["B->C", payments, 0]["lag_records"] == behind
    assert {job for flow, job in view.jobs if flow == "B->C"} >= {"measure lag"}
