"""Repeated benchmark runs: medians as the figures, ratios from the medians, each repeat's ratios listed."""

from __future__ import annotations

from benchmarks.run import combine, ratios


def _repeat(mm2: float, sparkmirror: float, limit: float, mm2_p99: float, rtm_p99: float) -> dict:
    return {"load_s": 10.0, "replicators": {
        "limit": {"records_per_s": limit}, "mm2": {"records_per_s": mm2, "p99_ms": mm2_p99},
        "sparkmirror": {"records_per_s": sparkmirror, "p99_ms": 900.0},
        "sparkmirror-real-time": {"p99_ms": rtm_p99, "failed_note": None}}, "scale": {}}


def test_figures_are_the_medians_of_the_repeats_and_each_repeats_ratios_are_kept():
    repeats = [_repeat(40_000, 76_000, 100_000, 300.0, 150.0), _repeat(45_000, 59_000, 110_000, 250.0, 700.0),
               _repeat(42_000, 70_000, 105_000, 280.0, 200.0)]
    result: dict = {"replicators": {}, "scale": {}}
    combine(result, repeats)
    ratios(result)
    assert result["replicators"]["sparkmirror"]["records_per_s"] == 70_000
    assert result["replicators"]["mm2"]["records_per_s"] == 42_000
    assert result["replicators"]["sparkmirror-real-time"]["p99_ms"] == 200.0
    assert result["load_s"] == 10.0
    assert result["throughput_ratio_vs_mm2"] == round(70_000 / 42_000, 3)
    assert result["latency_p99_ratio_vs_mm2"] == round(200.0 / 280.0, 3)
    assert result["ratios_per_repeat"]["throughput_ratio_vs_mm2"] == [1.9, round(59_000 / 45_000, 3),
                                                                     round(70_000 / 42_000, 3)]
    assert result["ratios_per_repeat"]["latency_p99_ratio_vs_mm2"] == [0.5, 2.8, round(200 / 280, 3)]


def test_a_row_missing_from_a_repeat_takes_the_median_of_the_others():
    first, second = _repeat(40_000, 60_000, 100_000, 300.0, 150.0), _repeat(44_000, 64_000, 100_000, 300.0, 150.0)
    del second["replicators"]["sparkmirror"]
    result: dict = {"replicators": {}, "scale": {}}
    combine(result, [first, second])
    assert result["replicators"]["sparkmirror"]["records_per_s"] == 60_000
    assert result["replicators"]["mm2"]["records_per_s"] == 42_000
