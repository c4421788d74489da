"""A headless Chromium (Debian's `chromium` package) for the web view's tests: load a page, let its scripts run,
return the DOM and keep a screenshot; and read the web view's data-* attributes back from that DOM.

One `--dump-dom` run under `--virtual-time-budget` is enough for a live page: virtual time waits for pending
network requests, so the page's fetch() calls reach the real (loopback) server and its setInterval fires once
per virtual second, deterministically and in well under a second of real time. No DevTools protocol needed.
The screenshot is taken in the same run, at the end of the budget.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from sparkmirror.errors import EmbeddedSetupError, SparkmirrorError
from sparkmirror.testing import watchdog

logger = logging.getLogger(__name__)

CHROMIUM = Path("/usr/bin/chromium")
TIMEOUT_S = 60.0  # a render takes about 1 s here; a start-up on a busy machine may take several
WINDOW = (1400, 1800)  # wide and tall enough for the web view of a few flows without scrolling

# Offline and quiet: no first-run UI, no background, component, sync or DNS traffic (every host but loopback
# resolves to nothing), a fresh profile per run. --no-sandbox: we run as root in a container.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--disable-breakpad", "--hide-scrollbars",
         "--mute-audio", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1")


class BrowserError(SparkmirrorError):
    """Chromium failed, or did not finish in time, rendering a page; the message has its exit code and stderr."""


def chromium_executable() -> Path:
    """Debian's Chromium, or an error that says how to install it."""
    if not os.access(CHROMIUM, os.X_OK):
        raise EmbeddedSetupError(f"{CHROMIUM} not found: the web view's tests need Debian's chromium package "
                                 "(run `make browser` as root, or `apt-get install --no-install-recommends chromium`)")
    return CHROMIUM


def render(url: str, screenshot: Path | None = None, budget_ms: int = 5000,
           window: tuple[int, int] = WINDOW, timeout_s: float = TIMEOUT_S) -> str:
    """The DOM of `url` after `budget_ms` of virtual time, serialized (the web view polls once per 1000 ms of it).

    The screenshot, when asked for, is a PNG of the window at that moment. Chromium's whole process group
    (renderers, zygotes) is killed on every exit path, and a watchdog kills it should this process die first.
    """
    cmd = [str(chromium_executable()), *FLAGS, f"--virtual-time-budget={budget_ms}",
           f"--window-size={window[0]},{window[1]}", "--dump-dom"]
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        screenshot.unlink(missing_ok=True)
        cmd.append(f"--screenshot={screenshot}")
    with tempfile.TemporaryDirectory(prefix="sparkmirror-chromium-") as profile:
        home = Path(profile) / "home"  # Chromium also writes under $HOME (crash and font caches): keep it ours
        home.mkdir()
        env = {**os.environ, "HOME": str(home)}
        out, err, code = _run([*cmd, f"--user-data-dir={Path(profile) / 'profile'}", url], env, timeout_s)
    if code != 0 or "</html>" not in out:
        raise BrowserError(f"chromium exited with {code} rendering {url}:\n{_tail(err)}")
    if screenshot is not None and not screenshot.is_file():
        raise BrowserError(f"chromium wrote no screenshot to {screenshot} rendering {url}:\n{_tail(err)}")
    logger.debug("rendered url=%s budget_ms=%d dom_chars=%d", url, budget_ms, len(out))
    return out


def _run(cmd: list[str], env: dict[str, str], timeout_s: float) -> tuple[str, str, int]:
    """Run Chromium in a process group of its own led by a watchdog; kill the whole group whatever happens."""
    dog = watchdog.Watchdog()
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env, process_group=dog.pgid)
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired as exc:
            raise BrowserError(f"chromium did not finish within {timeout_s:.0f} s: {' '.join(cmd)}") from exc
        finally:
            _kill_group(dog.pgid)
            proc.wait()
        return out, err, proc.returncode
    finally:
        dog.release()  # after the group's SIGKILL the watchdog is gone too: release() just reaps it


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


# ---- reading the web view back ----

Value = int | float | str | None


def parse_value(text: str) -> Value:
    """A data-value attribute as the JSON had it: "" is null, numbers are numbers, anything else stays text."""
    if text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


@dataclass(frozen=True)
class WebView:
    """What the web view shows, keyed like its JSON: flows by name ("A->B"), partitions by (flow, topic,
    partition), jobs by (flow, job name). Edge and row values are parse_value()s of the data-* attributes."""

    clusters: tuple[str, ...]
    # flow -> state, lag_records, lag_seconds, records_per_s, recent_records_per_s, condition, colour, label
    edges: dict[str, dict[str, Value]]
    flows: dict[str, dict[str, Value]]  # flow -> field -> value
    partitions: dict[tuple[str, str, int], dict[str, Value]]
    jobs: dict[tuple[str, str], dict[str, Value]]  # plus "failed": highlighted as failing (failures in a row)
    updates: int  # successful renders so far (body's data-updates)
    connection: str  # connecting, ok or lost
    updated_time_ms: int | None  # the time_ms of the status shown
    nodes: dict[str, dict[str, Value]] = field(default_factory=dict)  # cluster -> state, error, since_ms, title
    beats: dict[str, dict[str, Value]] = field(default_factory=dict)  # heartbeat pair -> state, beats, ..., label
    heartbeat_pairs: dict[str, dict[str, Value]] = field(default_factory=dict)  # the table's rows by pair name


@dataclass
class _Row:
    table: str
    attrs: dict[str, str]
    cells: dict[str, Value] = field(default_factory=dict)


class _WebViewParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.body: dict[str, str] = {}
        self.updated: dict[str, str] = {}
        self.clusters: list[str] = []
        self.edges: dict[str, dict[str, Value]] = {}
        self.nodes: dict[str, dict[str, Value]] = {}
        self.beats: dict[str, dict[str, Value]] = {}
        self.rows: list[_Row] = []
        self._table: str | None = None
        self._edge: dict[str, Value] | None = None  # the edge (flow or heartbeat pair) whose label is being read
        self._node: dict[str, Value] | None = None  # the cluster whose tooltip is being read
        self._in: str | None = None  # "text" or "title" of the edge or node being read

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "body":
            self.body = a
        elif a.get("id") == "updated":
            self.updated = a
        elif tag == "table":
            self._table = a.get("id")
        elif tag == "g" and "data-cluster" in a:
            self.clusters.append(a["data-cluster"])
            self._node = self.nodes[a["data-cluster"]] = {**_data(a, "state", "error", "since_ms"), "title": ""}
        elif tag == "g" and "data-lag-records" in a:
            self._edge = self.edges[a["data-flow"]] = _data(
                a, "state", "lag_records", "lag_seconds", "records_per_s", "recent_records_per_s", "condition",
                "colour")
        elif tag == "g" and "data-pair" in a:
            self._edge = self.beats[a["data-pair"]] = _data(a, "state", "beats", "last_beat_age_s")
        elif tag in ("text", "title") and (self._edge is not None or self._node is not None):
            self._in = tag
        elif tag == "tr" and self._table is not None and "data-flow" in a:
            self.rows.append(_Row(self._table, a))
        elif tag == "td" and "data-field" in a and self.rows:
            self.rows[-1].cells[a["data-field"]] = parse_value(a.get("data-value", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table = None
        elif tag in ("text", "title"):
            self._in = None
        elif tag == "g":
            self._edge = self._node = None

    def handle_data(self, data: str) -> None:
        if self._in == "text" and self._edge is not None:
            self._edge["label"] = str(self._edge.get("label") or "") + data
        elif self._in == "title" and self._node is not None:
            self._node["title"] = str(self._node["title"]) + data


def _data(attrs: dict[str, str], *names: str) -> dict[str, Value]:
    return {k: parse_value(attrs.get("data-" + k.replace("_", "-"), "")) for k in names}


def _has_class(attrs: dict[str, str], name: str) -> bool:
    return name in attrs.get("class", "").split()


def read_web_view(dom: str) -> WebView:
    """Parse the DOM that render() returned for the web view's page."""
    p = _WebViewParser()
    p.feed(dom)
    p.close()
    by_table: dict[str, list[_Row]] = {"flows": [], "partitions": [], "jobs": []}
    for row in p.rows:
        by_table.setdefault(row.table, []).append(row)
    time_ms = parse_value(p.updated.get("data-time-ms", ""))
    return WebView(
        clusters=tuple(p.clusters),
        edges=p.edges,
        flows={r.attrs["data-flow"]: r.cells for r in by_table["flows"]},
        partitions={(r.attrs["data-flow"], r.attrs["data-topic"], int(r.attrs["data-partition"])): r.cells
                    for r in by_table["partitions"]},
        jobs={(r.attrs["data-flow"], r.attrs["data-job"]): {**r.cells, "failed": _has_class(r.attrs, "failed")}
              for r in by_table["jobs"]},
        updates=int(p.body.get("data-updates") or 0),
        connection=p.body.get("data-connection", ""),
        updated_time_ms=time_ms if isinstance(time_ms, int) else None,
        nodes=p.nodes,
        beats=p.beats,
        heartbeat_pairs={r.attrs["data-flow"]: {**r.cells, "failed": _has_class(r.attrs, "failed")}
                         for r in by_table.get("heartbeats", [])},
    )
