"""The benchmark harness runs end to end on tiny sizes and reports every field. No timing is asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PER_REPLICATOR = ("records_per_s", "mb_per_s", "wall_s", "cpu_s", "peak_rss_mb")
LATENCY = ("p50_ms", "p99_ms", "max_ms")


def test_quick_benchmark_reports_every_field(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--quick", "--records", "3000", "--partitions", "3",
         "--latency-seconds", "3", "--latency-rate-mb", "1", "--scale-topics", "3", "--scale-partitions", "2",
         "--modes", "throughput,metrics,latency,scale,transforms", "--metrics-reps", "1", "--out", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    [path] = list(tmp_path.glob("bench-*-quick.json"))
    report = json.loads(path.read_text())
    for name in ("limit", "mm2", "sparkmirror", "sparkmirror-exactly-once"):
        for field in PER_REPLICATOR:
            assert isinstance(report["replicators"][name][field], int | float), (name, field)
    for name in ("mm2", "sparkmirror", "sparkmirror-real-time", "sparkmirror-exactly-once"):  # latency: each mode
        for field in LATENCY:
            assert report["replicators"][name][field] >= 0, (name, field)
        assert report["replicators"][name]["latency_cpu_s_per_million_records"] > 0, name
    for field in LATENCY:  # the floor: a consumer on the source itself, no replicator
        assert report["replicators"]["direct"][field] >= 0, ("direct", field)
    for name in ("mm2", "sparkmirror", "sparkmirror-exactly-once"):
        assert report["replicators"][name]["cpu_s_per_million_records"] > 0, name
        for field in PER_REPLICATOR:
            assert report["scale"][name][field] > 0, (name, field)
    assert report["throughput_ratio_vs_mm2"] > 0
    assert report["throughput_ratio_vs_limit"] > 0
    assert report["exactly_once_throughput_ratio_vs_at_least_once"] > 0
    assert report["scale_throughput_ratio_vs_mm2"] > 0 and report["latency_p99_ratio_vs_mm2"] > 0
    assert report["machine"]["cores"] >= 1 and report["machine"]["memory_gib"] > 0
    assert report["parameters"]["records"] == 3000
    assert "| sparkmirror |" in result.stdout
    cost = report["metrics_cost"]  # metrics off, then on (one repetition), on the throughput backlog
    assert cost["order"] == ["off", "on"]
    assert cost["off"]["records_per_s"] > 0 and cost["on"]["records_per_s"] > 0
    assert cost["on"]["scrapes"] >= 1 and "scrapes" not in cost["off"]
    assert report["metrics_on_off_ratio"] > 0
    assert "### metrics cost" in result.stdout
    shaped = report["transforms"]  # the same backlog with and without MM2's chain, and MM2 with it
    for name in ("sparkmirror", "sparkmirror-transforms", "mm2-transforms"):
        assert shaped[name]["records_per_s"] > 0, name
    assert shaped["sparkmirror"]["records_written"] == 3000
    assert shaped["sparkmirror-transforms"]["records_written"] == shaped["mm2-transforms"]["records_written"] == 2700
    # sparkmirror's rows each add a copy before MM2's and one after (plain, chain, MM2, chain, plain)
    assert [shaped[n]["copies"] for n in ("sparkmirror", "sparkmirror-transforms", "mm2-transforms")] == [2, 2, 1]
    for name in ("sparkmirror-real-time", "sparkmirror-real-time-sql-filter"):
        assert shaped[name]["p50_ms"] >= 0 and shaped[name]["copies"] == 2, name
    for key in ("transforms_throughput_ratio_vs_plain", "transforms_throughput_ratio_vs_mm2",
                "sql_filter_latency_p50_ratio"):
        assert report[key] > 0, key
