"""The latency mode's figures: the warm-up's records are reported apart from the measured ones."""

from __future__ import annotations

from benchmarks.latency import _percentiles, percentile


def test_records_of_the_warm_up_are_kept_out_of_the_figures_and_reported_as_startup():
    start = 1_000_000
    warm = [(start + i, 900.0) for i in range(0, 2_000, 10)]  # the first 2 s: a cold start
    measured = [(start + 2_000 + i, float(i % 100)) for i in range(1_000)]
    figures = _percentiles(warm + measured, warmup_s=2.0)
    assert figures["records"] == 1_000 and figures["startup_records"] == 200
    assert figures["max_ms"] == 99.0 and figures["p99_ms"] == 98.0 and figures["p50_ms"] == 49.0
    assert figures["startup_p99_ms"] == 900.0 and figures["startup_max_ms"] == 900.0


def test_without_a_warm_up_every_record_counts():
    samples = [(1_000 + i, float(i)) for i in range(100)]
    figures = _percentiles(samples, warmup_s=0.0)
    assert figures["records"] == 100 and "startup_p99_ms" not in figures and figures["max_ms"] == 99.0


def test_nearest_rank_percentile():
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0 and percentile(values, 99) == 99.0 and percentile(values, 100) == 100.0


def test_the_tail_is_placed_in_the_seconds_that_hold_it():
    start = 1_000_000
    steady = [(start + i, 10.0 + i % 7) for i in range(0, 20_000, 5)]  # 20 s at 200 records/s
    stall = [(start + 12_000 + i, 300.0 - i) for i in range(0, 250, 5)]  # an epoch's end 12 s in
    figures = _percentiles(steady + stall, warmup_s=0.0)
    over = sum(1 for _, latency in steady + stall if latency > figures["p99_ms"])
    assert figures["tail_seconds"] == [[12, over, 300.0]]  # every record over p99 came in the stall's second
