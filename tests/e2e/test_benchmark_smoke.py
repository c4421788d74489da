"""The benchmark harness runs end to end on tiny sizes and reports every field. No timing is asserted.

Throughput and latency with MM2 and sparkmirror only: `scale` (the throughput mode's copy over more topics), the
exactly-once rows, `metrics` and `transforms` add fourteen more replicator starts (over three minutes of the suite's
45); the transforms mode's figures have unit tests (tests/unit/benchmarks/test_transforms_mode.py)."""

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
         "--latency-seconds", "2", "--latency-warmup-seconds", "1", "--latency-rate-mb", "1",
         "--modes", "throughput,latency", "--replicators", "mm2,sparkmirror", "--out", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    [path] = list(tmp_path.glob("bench-*-quick.json"))
    report = json.loads(path.read_text())
    for name in ("limit", "mm2", "sparkmirror"):
        for field in PER_REPLICATOR:
            assert isinstance(report["replicators"][name][field], int | float), (name, field)
    for name in ("mm2", "sparkmirror", "sparkmirror-real-time"):  # latency: each trigger mode
        for field in LATENCY:
            assert report["replicators"][name][field] >= 0, (name, field)
        assert report["replicators"][name]["latency_cpu_s_per_million_records"] > 0, name
    for field in LATENCY:  # the floor: a consumer on the source itself, no replicator
        assert report["replicators"]["direct"][field] >= 0, ("direct", field)
    for name in ("mm2", "sparkmirror"):
        assert report["replicators"][name]["cpu_s_per_million_records"] > 0, name
    assert report["throughput_ratio_vs_mm2"] > 0
    assert report["throughput_ratio_vs_limit"] > 0
    assert report["latency_p99_ratio_vs_mm2"] > 0
    assert report["machine"]["cores"] >= 1 and report["machine"]["memory_gib"] > 0
    assert report["parameters"]["records"] == 3000
    assert "| sparkmirror |" in result.stdout
