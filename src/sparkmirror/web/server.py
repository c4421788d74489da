"""The metrics port: `/metrics` (Prometheus), `/api/status` (JSON) and `/` (the live web view).

A stdlib threading HTTP server on daemon threads: a scrape or a page never blocks replication, and the
process's stop does not wait for a slow client. Every answer is built from one `Supervisor.status()` snapshot.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.process_collector import ProcessCollector

from sparkmirror.errors import SparkmirrorError
from sparkmirror.runtime.status import Status
from sparkmirror.web.metrics import StatusCollector
from sparkmirror.web.status_json import status_json

logger = logging.getLogger(__name__)


class MetricsServer:
    """Serves one status source on `port` (0: any free port; `port` then says which) of `host`."""

    def __init__(self, status: Callable[[], Status], port: int, host: str = "0.0.0.0") -> None:  # noqa: S104 - scraped from other hosts
        self.registry = CollectorRegistry()
        self.registry.register(StatusCollector(status))
        self.registry.register(ProcessCollector(registry=None))
        self._status = status
        page = resources.files("sparkmirror.web").joinpath("page.html").read_bytes()
        try:
            self._server = ThreadingHTTPServer((host, port), _handler(self, page))
        except OSError as exc:
            raise SparkmirrorError(f"cannot serve metrics on port {port}: {exc.strerror or exc}; choose another "
                                   f"with --metrics-port or sparkmirror.metrics.port (0: any free port)") from exc
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="sparkmirror-metrics", daemon=True)

    def start(self) -> MetricsServer:
        self._thread.start()
        logger.info("metrics on http://localhost:%d/metrics, web view on http://localhost:%d/", self.port, self.port)
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> MetricsServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def status_body(self) -> bytes:
        return json.dumps(status_json(self._status(), int(time.time() * 1000))).encode()


def _handler(server: MetricsServer, page: bytes) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            try:
                if path == "/metrics":
                    self._send(200, CONTENT_TYPE_LATEST, generate_latest(server.registry))
                elif path == "/api/status":
                    self._send(200, "application/json", server.status_body())
                elif path in ("/", "/index.html"):
                    self._send(200, "text/html; charset=utf-8", page)
                else:
                    self._send(404, "text/plain", b"not found: try /metrics, /api/status or /\n")
            except Exception as exc:  # noqa: BLE001 - a failed answer must not end the server
                logger.warning("metrics port: answering %s failed: %s", path, exc)
                self._send(500, "text/plain", f"{type(exc).__name__}: {exc}\n".encode())

        def _send(self, code: int, content_type: str, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            logger.debug("metrics port: %s", format % args)

    return Handler
