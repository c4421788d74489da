import pytest

from sparkmirror.model import PartitionSummary
from sparkmirror.runtime.progress import DURATION_BUCKETS, FlowProgress


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def summary(partition, records, age=(), latency=()):
    return PartitionSummary("t", partition, records, 0, records * 10, records, (0, records - 1),
                            (0, records - 1), (True, False), records * 8, age, latency)


def test_progress_accumulates_per_partition_and_rate():
    clock = Clock(10.0)
    progress = FlowProgress("A->B", clock=clock)
    progress.record(0, [summary(0, 100), summary(1, 50)], started_at=8.0)
    clock.now = 12.0
    progress.record(1, [summary(0, 50)], started_at=11.0)
    snap = progress.snapshot()
    assert snap.per_partition == {("t", 0): 150, ("t", 1): 50}
    assert (snap.records, snap.bytes, snap.batches) == (200, 2000, 2)
    assert snap.elapsed_s == 4.0
    assert snap.records_per_s == 50.0


def test_partition_counts_value_bytes_and_rates_over_the_window_falling_to_zero_when_idle():
    clock = Clock(100.0)
    progress = FlowProgress("A->B", clock=clock)
    progress.record(0, [summary(0, 100)], started_at=90.0)  # the window starts at the first batch
    clock.now = 110.0
    progress.record(1, [summary(0, 100)], started_at=109.0)
    p = progress.snapshot().partitions[("t", 0)]
    assert (p.records, p.value_bytes) == (200, 1600)
    assert p.records_per_s == pytest.approx(200 / 20.0)
    assert p.value_bytes_per_s == pytest.approx(1600 / 20.0)
    clock.now = 300.0  # nothing replicated for longer than the window
    p = progress.snapshot().partitions[("t", 0)]
    assert (p.records, p.records_per_s, p.value_bytes_per_s) == (200, 0.0, 0.0)


def test_record_age_and_replication_latency_combine_reports_and_keep_the_last_value():
    clock = Clock(1000.0)
    progress = FlowProgress("A->B", clock=clock)
    progress.record(0, [summary(0, 2, age=(2, 30, 10, 20, 20), latency=(2, 100, 40, 60, 60))], started_at=999.0)
    progress.record(1, [summary(0, 1, age=(1, 5, 5, 5, 5))], started_at=999.5)
    p = progress.snapshot().partitions[("t", 0)]
    assert (p.record_age_ms.min, p.record_age_ms.max, p.record_age_ms.avg, p.record_age_ms.last) == (5, 20, 35 / 3, 5)
    assert (p.replication_latency_ms.min, p.replication_latency_ms.max, p.replication_latency_ms.avg,
            p.replication_latency_ms.last) == (40, 60, 50, 60)
    clock.now = 2000.0
    p = progress.snapshot().partitions[("t", 0)]
    assert (p.record_age_ms.avg, p.record_age_ms.last) == (None, 5)


def test_a_partition_without_timing_reports_has_no_distribution():
    progress = FlowProgress("A->B", clock=Clock(5.0))
    progress.record(0, [summary(0, 3)], started_at=4.0)
    p = progress.snapshot().partitions[("t", 0)]
    assert (p.record_age_ms, p.replication_latency_ms) == (None, None)


def test_report_durations_fill_a_cumulative_histogram():
    clock = Clock(10.0)
    progress = FlowProgress("A->B", clock=clock)
    progress.record(0, [summary(0, 1)], started_at=9.8)  # 0.2 s
    progress.record(1, [summary(0, 1)], started_at=7.0)  # 3 s
    progress.record(2, [], started_at=0.0)  # an empty batch is no report
    d = progress.snapshot().durations
    counts = dict(d.buckets)
    assert (d.count, d.sum_s, d.last_s) == (2, pytest.approx(3.2), 3.0)
    assert counts[0.1] == 0 and counts[0.25] == 1 and counts[2.5] == 1 and counts[5.0] == 2
    assert counts[DURATION_BUCKETS[-1]] == 2


def test_recent_rate_falls_to_zero_seconds_after_the_copy_stops_while_the_window_rate_remembers():
    clock = Clock(100.0)
    progress = FlowProgress("A->B", clock=clock)
    assert (progress.snapshot().recent_records_per_s, progress.snapshot().since_last_write_s) == (0.0, None)
    for second in range(20):  # 100 records a second for 20 s
        clock.now = 100.0 + second
        progress.record(second, [summary(0, 100)], started_at=clock.now - 0.1)
    snap = progress.snapshot()
    assert snap.recent_records_per_s == pytest.approx(100, rel=0.25)
    assert snap.since_last_write_s == 0.0
    clock.now += 6  # the copy stopped 6 s ago
    snap = progress.snapshot()
    assert snap.recent_records_per_s == 0.0
    assert snap.since_last_write_s == 6.0
    assert snap.window_records_per_s > 30  # a minute's average still counts the copy that stopped
