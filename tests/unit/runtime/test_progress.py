from sparkmirror.model import PartitionSummary
from sparkmirror.runtime.progress import FlowProgress


def summary(partition, records):
    return PartitionSummary("t", partition, records, 0, records * 10, records, (0, records - 1),
                            (0, records - 1))


def test_progress_accumulates_per_partition_and_rate():
    now = iter([10.0, 12.0])
    progress = FlowProgress("A->B", clock=lambda: next(now))
    progress.record(0, [summary(0, 100), summary(1, 50)], started_at=8.0)
    progress.record(1, [summary(0, 50)], started_at=11.0)
    snap = progress.snapshot()
    assert snap.per_partition == {("t", 0): 150, ("t", 1): 50}
    assert (snap.records, snap.bytes, snap.batches) == (200, 2000, 2)
    assert snap.elapsed_s == 4.0
    assert snap.records_per_s == 50.0
