"""The latency ratios a benchmark run reports against MM2's row of the same run."""

from benchmarks.run import latency_ratios


def result(partitions: int | None, seconds: float) -> dict:
    return {"parameters": {"latency_partitions": partitions, "latency_seconds": seconds},
            "replicators": {
                "direct": {"p50_ms": 700.0, "p99_ms": 13_000.0},
                "mm2": {"p50_ms": 3_000.0, "p99_ms": 18_000.0, "latency_cpu_s_per_million_records": 200.0},
                "sparkmirror": {"p50_ms": 1_500.0, "p99_ms": 5_400.0,
                                "latency_cpu_s_per_million_records": 190.0},
                "sparkmirror-real-time": {"p50_ms": 2_200.0, "p99_ms": 12_000.0,
                                          "latency_cpu_s_per_million_records": 150.0}}}


def test_a_1000_partition_run_gives_the_best_rows_p50_and_p99_against_mm2_and_each_rows_cpu():
    r = result(1000, 30.0)
    latency_ratios(r)
    assert (r["latency_1000p_p50_ratio_vs_mm2"], r["latency_1000p_p99_ratio_vs_mm2"]) == (0.5, 0.3)
    assert r["latency_1000p_replicator"] == "sparkmirror"
    assert r["latency_cpu_ratio_vs_mm2"] == {"sparkmirror": 0.95, "sparkmirror-real-time": 0.75}
    assert "latency_long_p99_ratio_vs_mm2" not in r


def test_a_long_run_on_the_default_partitions_gives_only_the_long_p99_ratio():
    r = result(None, 300.0)
    latency_ratios(r)
    assert r["latency_long_p99_ratio_vs_mm2"] == 0.3
    assert not any(key.startswith("latency_1000p") for key in r)


def test_idle_cpu_is_a_ratio_per_row_only_when_the_run_measured_it():
    r = result(None, 30.0)
    latency_ratios(r)
    assert "latency_idle_cpu_ratio_vs_mm2" not in r
    r["replicators"]["mm2"]["idle_cpu_s_per_minute"] = 2.0
    r["replicators"]["sparkmirror-real-time"]["idle_cpu_s_per_minute"] = 3.0
    latency_ratios(r)
    assert r["latency_idle_cpu_ratio_vs_mm2"] == {"sparkmirror-real-time": 1.5}
