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
            "position": position, "end_offset": end, "lag_records": end - position, "lag_seconds": lag_s,
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
            "rpo_seconds": lag_seconds, "restarts": 1, "retries": 0, "partitions": list(partitions), "jobs": list(jobs)}


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
        "A->B": {"state": "running", "lag_records": 0, "lag_seconds": 0, "records_per_s": 400,
                 "label": "lag 0 rec · 0.0 s · 400 rec/s"},
        "B->A": {"state": "running", "lag_records": 250, "lag_seconds": 1.5, "records_per_s": 80,
                 "label": "lag 250 rec · 1.5 s · 80 rec/s"},
        "A->C": {"state": "running", "lag_records": 48000, "lag_seconds": 95.25, "records_per_s": 1250,
                 "label": "lag 48,000 rec · 95 s · 1,250 rec/s"},
    }
    for flow in STATUS["flows"]:
        row = view.flows[flow["name"]]
        expected = {k: v for k, v in flow.items() if k not in ("source", "target", "bytes", "partitions", "jobs")}
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
                                  "label": "lag – rec · – s · – rec/s"}
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
