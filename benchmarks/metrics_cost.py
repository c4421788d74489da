"""What the Prometheus endpoint costs: sparkmirror's backlog throughput with metrics off and on, in one run.

Both sides copy the same backlog on the same clusters. Each copy gets its own source alias, so its own
remote topic (`smoff0.bench`, `smon0.bench`, ...). Repetitions alternate the order (off-on, on-off, ...) so
that a machine getting slower or faster during the run does not favour one side. With metrics on,
`sparkmirror run --metrics-port PORT` serves `/metrics` and a scraper GETs it every second, as Prometheus
would; a run in which no scrape succeeded fails instead of reporting a figure.
"""

from __future__ import annotations

import argparse
import http.client
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass

from benchmarks import dataset
from benchmarks.replicators import CopyIncomplete, Run, SparkmirrorRunner, count_records, measure_copy
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import NewTopicSpec
from sparkmirror.testing.kafka_cluster import free_ports

BACKLOG = "bench"  # the throughput mode's topic: reused when that mode has loaded it in this run
SCRAPE_INTERVAL_S = 1.0
SCRAPE_TIMEOUT_S = 2.0
MIRROR_METRIC = b"kafka_connect_mirror_mirrorsourceconnector_"
SIDES = ("off", "on")


class MetricsUnavailable(RuntimeError):
    """Metrics were on but `/metrics` never answered: the 'on' figure would measure nothing."""


@dataclass(frozen=True)
class Scrapes:
    ok: int
    failed: int
    with_mirror_metrics: int  # answers that already carried MirrorSourceConnector samples


class MetricsScraper(threading.Thread):
    """GETs http://127.0.0.1:PORT/metrics every second until stop(), counting what answered."""

    def __init__(self, port: int, interval_s: float = SCRAPE_INTERVAL_S) -> None:
        super().__init__(daemon=True, name=f"metrics-scraper-{port}")
        self.port, self.interval_s = port, interval_s
        self._stop_event = threading.Event()
        self._ok = self._failed = self._with_mirror = 0

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.scrape()
            self._stop_event.wait(self.interval_s)

    def scrape(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=SCRAPE_TIMEOUT_S)
        try:
            conn.request("GET", "/metrics")
            response = conn.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException):  # not serving yet, or going away
            self._failed += 1
            return
        finally:
            conn.close()
        if response.status != 200:
            self._failed += 1
            return
        self._ok += 1
        self._with_mirror += int(MIRROR_METRIC in body)

    def stop(self) -> Scrapes:
        self._stop_event.set()
        self.join()
        return Scrapes(self._ok, self._failed, self._with_mirror)


def run_metrics_cost(args: argparse.Namespace, src: str, tgt: str, runners: dict, result: dict,
                     log: Callable[[str], None], timeout_s: float) -> None:
    """Copy the backlog `args.metrics_reps` times with metrics off and as often with them on; record both."""
    base: SparkmirrorRunner = runners["sparkmirror"]
    src_admin = ClusterAdmin("source", {"bootstrap.servers": src})
    tgt_admin = ClusterAdmin("target", {"bootstrap.servers": tgt})
    _ensure_backlog(args, src, src_admin, log)
    runs: dict[str, list[dict]] = {side: [] for side in SIDES}
    order = []
    for rep in range(args.metrics_reps):
        for side in SIDES if rep % 2 == 0 else SIDES[::-1]:
            order.append(side)
            log(f"sparkmirror, metrics {side} (repetition {rep + 1} of {args.metrics_reps}): replicating the backlog")
            runs[side].append(_copy(base, f"sm{side}{rep}", side == "on", args, tgt_admin, timeout_s))
            log(f"metrics {side}: {runs[side][-1]}")
    cost = {"repetitions": args.metrics_reps, "order": order,
            **{side: _summary(rows, args.records) for side, rows in runs.items()}}
    result["metrics_cost"] = cost
    result["metrics_on_off_ratio"] = round(cost["on"]["records_per_s"] / cost["off"]["records_per_s"], 3)


def _ensure_backlog(args: argparse.Namespace, src: str, admin: ClusterAdmin, log: Callable[[str], None]) -> None:
    if BACKLOG in admin.topic_partitions():
        held = count_records(admin, {BACKLOG: args.partitions})
        if held != args.records:
            raise CopyIncomplete(f"topic {BACKLOG!r} holds {held} records, not the {args.records} expected")
        log(f"metrics cost: reusing the {held:,} records of {BACKLOG!r}")
        return
    for name, error in admin.create_topics([NewTopicSpec(BACKLOG, args.partitions, 1)]).items():
        if error:
            raise RuntimeError(f"creating {name}: {error}")
    log(f"loading {args.records:,} records of {args.record_size} B into {BACKLOG!r} ({args.partitions} partitions)")
    dataset.load(src, [BACKLOG], args.partitions, args.records, args.record_size, args.seed)


def _copy(base: SparkmirrorRunner, alias: str, metrics_on: bool, args: argparse.Namespace,
          tgt_admin: ClusterAdmin, timeout_s: float) -> dict:
    port = free_ports(1)[0] if metrics_on else None
    runner = SparkmirrorRunner(base.source, base.target, base.cores, base.workdir, base.trigger,
                               source_alias=alias, run_args=("--metrics-port", str(port)) if port else ())
    scraper = MetricsScraper(port) if port else None
    if scraper is not None:
        scraper.start()
    try:
        run = measure_copy(runner, BACKLOG, {f"{alias}.{BACKLOG}": args.partitions}, args.records, tgt_admin,
                           timeout_s)
    finally:
        scrapes = scraper.stop() if scraper is not None else None
    row = _figures(run, args.records)
    if scrapes is not None:
        if scrapes.ok == 0:
            raise MetricsUnavailable(f"no scrape of http://127.0.0.1:{port}/metrics succeeded during the copy "
                                     f"({scrapes.failed} failed):\n{runner.log_tail()}")
        row.update({f"scrapes_{k}": v for k, v in asdict(scrapes).items()})
    return row


def _figures(run: Run, records: int) -> dict:
    return {"records_per_s": round(records / run.wall_s, 1), "wall_s": run.wall_s,
            "first_record_s": run.first_record_s, "cpu_s": run.usage.cpu_s, "peak_rss_mb": run.usage.peak_rss_mb}


def _summary(rows: list[dict], records: int) -> dict:
    """One side's figures: records/s over the summed wall time (so every copy weighs by its length)."""
    wall = sum(r["wall_s"] for r in rows)
    out = {"records_per_s": round(records * len(rows) / wall, 1),
           "cpu_s_per_million_records": round(sum(r["cpu_s"] for r in rows) / (records * len(rows)) * 1e6, 2),
           "runs": rows}
    if rows and "scrapes_ok" in rows[0]:
        out["scrapes"] = sum(r["scrapes_ok"] for r in rows)
    return out


def markdown(result: dict) -> list[str]:
    """The metrics-cost table for the run's summary, or nothing if the mode did not run."""
    cost = result.get("metrics_cost")
    if not cost:
        return []
    lines = ["", f"### metrics cost ({cost['repetitions']} repetitions, order {'-'.join(cost['order'])})",
             "| metrics | records/s | wall s per copy | CPU s / M records | scrapes |", "|---|---|---|---|---|"]
    for side in SIDES:
        row = cost[side]
        walls = ", ".join(f"{r['wall_s']:,}" for r in row["runs"])
        lines.append(f"| {side} | {row['records_per_s']:,} | {walls} | {row['cpu_s_per_million_records']:,} | "
                     f"{row.get('scrapes', '')} |")
    return lines
