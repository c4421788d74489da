from sparkmirror.model import PartitionSummary
from sparkmirror.runtime.progress import FlowProgress
from sparkmirror.runtime.supervisor import _root_cause


def summary(partition, records):
    return PartitionSummary("t", partition, "A.t", records, records * 10, 0, records - 1, 0, records - 1)


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


def test_root_cause_prefers_our_error_raised_in_a_python_worker():
    text = ("org.apache.spark.SparkException: Job aborted\nTraceback (most recent call last):\n"
            "  File \"x.py\", line 1\nsparkmirror.errors.PipelineError: writing t-0@5 to cluster 'B' failed: "
            "too large\n\tat org.apache.spark.api.python...")
    assert _root_cause(Exception(text)) == "writing t-0@5 to cluster 'B' failed: too large"
    assert _root_cause(Exception("Traceback\nValueError: bad thing\n")) == "ValueError: bad thing"


def test_root_cause_explains_source_data_loss():
    text = ("An exception was raised by the Python Proxy. Return Message: Traceback\n"
            "py4j.protocol.Py4JJavaError: An error occurred while calling o97.collectToPython.\n"
            ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 2 failed 4 times: "
            "org.apache.spark.sql.kafka010.KafkaIllegalStateException: Some data may have been lost\n"
            "Reason: Could not read records in offset [0, 200) for topic partition orders-2\n")
    cause = _root_cause(Exception(text))
    assert cause.startswith("records 0..199 of source partition orders-2 are no longer on the source cluster")


def test_root_cause_falls_back_to_the_deepest_named_exception():
    text = ("org.apache.spark.SparkException: Job aborted: "
            "org.apache.kafka.common.errors.TopicAuthorizationException: Not authorized to access topics: [t]\n")
    assert _root_cause(Exception(text)) == "TopicAuthorizationException: Not authorized to access topics: [t]"
