"""The web view's page (`sparkmirror/web/page.html`) in headless Chromium, against a loopback server that
serves fixed status documents: what it draws for three clusters, that it follows the status live, and what it
shows when the status cannot be read. No Kafka here; the real-cluster run of the page is the server's test.

The screenshot of the first test is kept in test-output/web-view.png at the repository's root.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from sparkmirror.testing.browser import read_web_view, render

KEPT_SCREENSHOT = Path(__file__).resolve().parents[2] / "test-output" / "web-view.png"


def _partition(topic: str, remote: str, p: int, records: int, position: int, end: int, lag_s: float) -> dict:
    return {"topic": topic, "remote_topic": remote, "partition": p, "records": records, "records_per_s": 200.0,
            "position": position, "removed_before_copy": 0, "end_offset": end, "lag_records": end - position,
            "lag_seconds": lag_s,
            "record_age_ms_avg": 12.0, "replication_latency_ms_avg": 30.5}


def _job(name: str, runs: int, failures: int = 0, in_a_row: int = 0, error: str | None = None) -> dict:
    return {"name": name, "runs": runs, "failures": failures, "failures_in_a_row": in_a_row, "last_error": error}


def _flow(source: str, target: str, state: str, lag_records: int | None, lag_seconds: float | None,
          rate: float | None, partitions: Sequence[dict] = (), jobs: Sequence[dict] = (),
          owner: str | None = None) -> dict:
    return {"name": f"{source}->{target}", "source": source, "target": target, "state": state, "owner": owner,
            "failure": "the query failed: target C unreachable" if state == "failed" else None,
            "records": 1200, "bytes": 50000, "records_per_s": rate, "bytes_per_s": None if rate is None else rate * 40,
            "lag_records": lag_records, "lag_seconds": lag_seconds, "rpo_records": lag_records,
            "rpo_seconds": lag_seconds, "restarts": 1, "retries": 0, "removed_before_copy": 0,
            "recent_records_per_s": None, "condition": None, "condition_level": None, "quiet_s": None,
            "partitions": list(partitions), "jobs": list(jobs)}


NOT_COLUMNS = ("source", "target", "bytes", "partitions", "jobs", "condition", "condition_level", "quiet_s")


def well(colour: str) -> dict:
    """An edge's fields of a status without a recent rate or condition (as before issue 34), drawn in `colour`."""
    return {"recent_records_per_s": None, "condition": None, "colour": colour}


CHECKPOINT_ERROR = "AdminOperationError: list consumer group offsets of g1 on cluster C: timed out"

STATUS: dict[str, Any] = {"time_ms": 1_700_000_000_000, "clusters": ["A", "B", "C"], "flows": [
    _flow("A", "B", "running", 0, 0.0, 400.0,
          [_partition("orders", "A.orders", 0, 600, 600, 600, 0.0),
           _partition("orders", "A.orders", 1, 600, 600, 600, 0.0)],
          [_job("emit checkpoints", 10), _job("sync topic configs", 2, failures=1, error="timed out")]),
    _flow("B", "A", "running", 250, 1.5, 80.0,
          [_partition("payments", "B.payments", 0, 1200, 950, 1200, 1.5)], [_job("emit checkpoints", 10)]),
    _flow("A", "C", "running", 48_000, 95.25, 1250.0,
          [_partition("orders", "A.orders", 0, 9000, 3000, 51_000, 95.25)],
          [_job("emit checkpoints", 10, failures=3, in_a_row=3, error=CHECKPOINT_ERROR)]),
]}


def _caught_up(status: dict[str, Any]) -> dict[str, Any]:
    """The next status: A->C has caught up and its job recovered, B->A failed, C->B is new and knows nothing yet."""
    later = copy.deepcopy(status)
    later["time_ms"] += 5000
    a_to_c = later["flows"][2]
    a_to_c.update(lag_records=7, lag_seconds=0.5)
    a_to_c["jobs"][0].update(runs=11, failures_in_a_row=0)
    later["flows"][1].update(state="failed", failure="the query failed: target A unreachable")
    later["flows"].append(_flow("C", "B", "idle", None, None, None))
    return later


class _StatusServer:
    """page.html at / and the n-th request for api/status answered by `statuses[n]` (the last one repeats);
    None answers 503. Records every path asked for."""

    def __init__(self, statuses: Sequence[dict[str, Any] | None]) -> None:
        self.statuses = list(statuses)
        self.paths: list[str] = []
        self.status_requests = 0
        page = resources.files("sparkmirror.web").joinpath("page.html").read_bytes()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.paths.append(self.path)
                if self.path == "/":
                    self._answer(200, "text/html; charset=utf-8", page)
                elif self.path == "/api/status":
                    n, owner.status_requests = owner.status_requests, owner.status_requests + 1
                    status = owner.statuses[min(n, len(owner.statuses) - 1)]
                    if status is None:
                        self._answer(503, "text/plain", b"unavailable")
                    else:
                        self._answer(200, "application/json", json.dumps(status).encode())
                else:
                    self._answer(404, "text/plain", b"not found")

            def _answer(self, code: int, content_type: str, body: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/"
        self._thread = threading.Thread(target=self._server.serve_forever, name="web-page-test", daemon=True)

    def __enter__(self) -> _StatusServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[_StatusServer] = []

    def start(*statuses: dict[str, Any] | None) -> _StatusServer:
        server = _StatusServer(statuses)
        servers.append(server.__enter__())
        return server

    yield start
    for server in servers:
        server.__exit__()


def test_page_draws_every_cluster_flow_partition_and_job(serve, tmp_path):
    server = serve(STATUS)
    screenshot = tmp_path / "web-view.png"
    dom = render(server.url, screenshot, budget_ms=2000, window=(1400, 1300))
    (tmp_path / "web-view.html").write_text(dom)
    KEPT_SCREENSHOT.parent.mkdir(exist_ok=True)
    shutil.copyfile(screenshot, KEPT_SCREENSHOT)

    view = read_web_view(dom)
    assert view.connection == "ok" and view.updates >= 1
    assert view.updated_time_ms == STATUS["time_ms"]
    assert sorted(view.clusters) == ["A", "B", "C"]
    assert view.edges == {
        "A->B": {"state": "running", "lag_records": 0, "lag_seconds": 0, "records_per_s": 400, **well("ok"),
                 "label": "lag 0 rec · 0.0 s · 400 rec/s"},
        "B->A": {"state": "running", "lag_records": 250, "lag_seconds": 1.5, "records_per_s": 80, **well("ok"),
                 "label": "lag 250 rec · 1.5 s · 80 rec/s"},
        "A->C": {"state": "running", "lag_records": 48000, "lag_seconds": 95.25, "records_per_s": 1250,
                 **well("warn"), "label": "lag 48,000 rec · 95 s · 1,250 rec/s"},
    }
    for flow in STATUS["flows"]:
        row = view.flows[flow["name"]]
        expected = {k: v for k, v in flow.items() if k not in NOT_COLUMNS}
        assert row == expected, flow["name"]
        for p in flow["partitions"]:
            assert view.partitions[(flow["name"], p["topic"], p["partition"])] == {**p, "flow": flow["name"]}
    assert len(view.partitions) == 4
    assert {key: job["failed"] for key, job in view.jobs.items()} == {
        ("A->B", "emit checkpoints"): False, ("A->B", "sync topic configs"): False,
        ("B->A", "emit checkpoints"): False, ("A->C", "emit checkpoints"): True}
    assert view.jobs[("A->C", "emit checkpoints")]["last_error"] == CHECKPOINT_ERROR
    assert set(server.paths) <= {"/", "/api/status", "/favicon.ico"}


def test_page_follows_the_status_live(serve, tmp_path):
    later = _caught_up(STATUS)
    server = serve(STATUS, STATUS, later)
    view = read_web_view(render(server.url, tmp_path / "live.png", budget_ms=4000))

    assert server.status_requests >= 3 and view.updates >= 3  # one page load, polled and redrawn
    assert view.updated_time_ms == later["time_ms"]
    assert view.edges["A->C"]["lag_records"] == 7 and view.edges["A->C"]["lag_seconds"] == 0.5
    assert view.edges["B->A"]["state"] == "failed"
    assert view.flows["B->A"]["failure"] == "the query failed: target A unreachable"
    assert view.edges["C->B"] == {"state": "idle", "lag_records": None, "lag_seconds": None, "records_per_s": None,
                                  **well("idle"), "label": "lag – rec · – s · – rec/s"}
    assert view.flows["C->B"]["lag_records"] is None
    assert not view.jobs[("A->C", "emit checkpoints")]["failed"]


def test_page_says_connection_lost_and_keeps_the_last_status(serve, tmp_path):
    server = serve(STATUS, None)
    view = read_web_view(render(server.url, tmp_path / "lost.png", budget_ms=3000))

    assert server.status_requests >= 2
    assert view.connection == "lost" and view.updates == 1
    assert view.edges["A->C"]["lag_records"] == 48000  # the last status read stays on screen
    assert view.updated_time_ms == STATUS["time_ms"]


def test_page_says_which_flows_another_process_runs(serve, tmp_path):
    status = {"time_ms": 1_700_000_000_000, "clusters": ["A", "B"], "process": "sparkmirror-h1-3",
              "coordinated": True, "flows": [
                  _flow("A", "B", "running", 0, 0.0, 400.0, owner="sparkmirror-h1-3"),
                  _flow("B", "A", "standby", None, None, None, owner="sparkmirror-h2-7")]}
    dom = render(serve(status).url, tmp_path / "standby.png", budget_ms=2000)
    view = read_web_view(dom)
    assert view.flows["B->A"]["state"] == "standby" and view.flows["B->A"]["owner"] == "sparkmirror-h2-7"
    assert view.edges["B->A"]["state"] == "standby"
    assert "(1 running, 1 standby)" in dom and "process sparkmirror-h1-3" in dom
    assert "B-&gt;A (standby in sparkmirror-h2-7)" in dom  # the arrow's tooltip


def test_page_is_self_contained():
    """Nothing outside the page: no URL but the SVG namespace, no linked stylesheet, script or image."""
    page = resources.files("sparkmirror.web").joinpath("page.html").read_text()
    assert re.findall(r"\w+://[^\s\"'<>)]*", page) == ["http://www.w3.org/2000/svg"]
    assert not re.search(r"<(link|img|iframe)\b|<script[^>]*\bsrc=|@import|url\((?!#)", page)
    assert 'fetch("api/status"' in page


B_DOWN = "cluster 'B' is unreachable at bootstrap.servers=127.0.0.1:9: no broker"
OUTAGE: dict[str, Any] = {
    "time_ms": 1_700_000_000_000, "clusters": ["A", "B", "C"],
    "cluster_states": [{"name": "A", "state": "up", "error": None, "since_ms": 1_699_999_000_000, "checked_ms": 0},
                       {"name": "B", "state": "down", "error": B_DOWN, "since_ms": 1_699_999_987_000,
                        "checked_ms": 0},
                       {"name": "C", "state": "up", "error": None, "since_ms": 1_699_999_000_000, "checked_ms": 0}],
    "flows": [{**_flow("A", "B", "running", 9000, 13.0, 692.0), "recent_records_per_s": 0.0,
               "condition": "target B down", "condition_level": "bad", "quiet_s": 13.0},
              {**_flow("C", "A", "running", 40, 20.0, 3.0), "recent_records_per_s": 0.0,
               "condition": "stalled: nothing written for 20 s, 40 records behind", "condition_level": "warn",
               "quiet_s": 20.0},
              {**_flow("A", "C", "running", 0, 0.0, 50.0), "recent_records_per_s": 55.0}],
    "heartbeat_pairs": [
        {"name": "B->A", "source": "B", "target": "A", "state": "beating", "interval_s": 1.0, "beats": 40,
         "failures": 0, "failures_in_a_row": 0, "last_error": None, "last_beat_ms": 0, "last_beat_age_s": 0.5},
        {"name": "C->B", "source": "C", "target": "B", "state": "failing", "interval_s": 1.0, "beats": 27,
         "failures": 4, "failures_in_a_row": 4, "last_error": "write to 'heartbeats' timed out",
         "last_beat_ms": 0, "last_beat_age_s": 13.0}]}
KEPT_OUTAGE_SCREENSHOT = KEPT_SCREENSHOT.parent / "web-view-cluster-down.png"


def test_page_draws_a_cluster_down_its_flows_not_green_with_their_recent_rate_and_the_heartbeat_pairs(serve, tmp_path):
    screenshot = tmp_path / "cluster-down.png"
    dom = render(serve(OUTAGE).url, screenshot, budget_ms=2000, window=(1400, 1500))
    KEPT_OUTAGE_SCREENSHOT.parent.mkdir(exist_ok=True)
    shutil.copyfile(screenshot, KEPT_OUTAGE_SCREENSHOT)
    view = read_web_view(dom)

    assert {a: n["state"] for a, n in view.nodes.items()} == {"A": "up", "B": "down", "C": "up"}
    assert view.nodes["B"]["error"] == B_DOWN and B_DOWN in str(view.nodes["B"]["title"])
    assert str(view.nodes["B"]["title"]).startswith("cluster B: down for 13 s")
    a_b, c_a, a_c = view.edges["A->B"], view.edges["C->A"], view.edges["A->C"]
    assert (a_b["state"], a_b["colour"], a_b["condition"]) == ("running", "bad", "target B down")
    assert a_b["label"] == "target B down · lag 9,000 rec · 13 s · 0.0 rec/s"  # not the minute's 692
    assert (c_a["colour"], c_a["label"]) == ("warn", "stalled: nothing written for 20 s, 40 records behind · "
                                                     "lag 40 rec · 20 s · 0.0 rec/s")
    assert (a_c["colour"], a_c["label"]) == ("ok", "lag 0 rec · 0.0 s · 55 rec/s")
    assert view.flows["A->B"]["state"] == "running" and view.flows["A->B"]["recent_records_per_s"] == 0
    assert ">running, target B down</span>" in dom  # the state badge's text
    assert "3 clusters (B down)" in dom and "55 rec/s" in dom  # the header sums the recent rates
    assert view.beats == {"B->A": {"state": "beating", "beats": 40, "last_beat_age_s": 0.5,
                                   "label": "♥ 40 · 0.5 s ago"},
                          "C->B": {"state": "failing", "beats": 27, "last_beat_age_s": 13,
                                   "label": "♥ 27 · 13 s ago"}}
    assert view.heartbeat_pairs["C->B"]["failed"] and not view.heartbeat_pairs["B->A"]["failed"]
    assert view.heartbeat_pairs["C->B"]["last_error"] == "write to 'heartbeats' timed out"
