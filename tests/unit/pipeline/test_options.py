import json

import pytest

from sparkmirror.errors import ConfigError
from sparkmirror.pipeline.options import (
    CAPPED_FETCH_BUDGET_BYTES,
    FLOW_SOURCE,
    SPARK_KAFKA_SOURCE,
    TriggerSpec,
    fetch_batching,
    producer_settings,
    real_time_slots,
    real_time_slots_problem,
    source_format,
    source_options,
)


def test_source_options_prefix_client_settings_and_drop_spark_managed_ones():
    opts = source_options({"bootstrap.servers": "a:1", "security.protocol": "SSL", "enable.auto.commit": "true",
                           "group.id": "g"}, {"t2": {1: 7, 0: 5}, "t1": {0: 0}},
                          max_offsets_per_trigger=100)
    assert opts["kafka.bootstrap.servers"] == "a:1"
    assert opts["kafka.security.protocol"] == "SSL"
    assert "kafka.enable.auto.commit" not in opts and "kafka.group.id" not in opts
    assert json.loads(opts["assign"]) == {"t1": [0], "t2": [0, 1]}
    assert json.loads(opts["startingOffsets"]) == {"t1": {"0": 0}, "t2": {"0": 5, "1": 7}}
    assert opts["includeHeaders"] == "true"
    assert opts["maxOffsetsPerTrigger"] == "100"
    assert opts["kafka.fetch.max.wait.ms"] == "10"


def test_an_explicit_fetch_wait_beats_the_source_default():
    opts = source_options({"bootstrap.servers": "a:1", "fetch.max.wait.ms": "250"}, {"t": {0: 0}})
    assert opts["kafka.fetch.max.wait.ms"] == "250"


def test_spark_source_consumers_register_no_metrics_unless_asked():
    opts = source_options({"bootstrap.servers": "a:1"}, {"t": {0: 0}})
    assert opts["kafka.auto.include.jmx.reporter"] == "false"
    assert opts["kafka.enable.metrics.push"] == "false"
    explicit = source_options({"bootstrap.servers": "a:1", "enable.metrics.push": "true"}, {"t": {0: 0}})
    assert explicit["kafka.enable.metrics.push"] == "true"


def test_capped_batches_share_a_fetch_budget_across_their_partitions():
    def fetch_bytes(partitions: int, cap: int | None = 500_000, **settings: str) -> str | None:
        opts = source_options({"bootstrap.servers": "a:1", **settings},
                              {f"t{i}": {0: 0} for i in range(partitions)}, max_offsets_per_trigger=cap)
        return opts.get("kafka.max.partition.fetch.bytes")

    assert fetch_bytes(12) == "1048576"  # few partitions: Java's own default
    assert fetch_bytes(300) == str(CAPPED_FETCH_BUDGET_BYTES // 300)
    assert fetch_bytes(1000) == str(CAPPED_FETCH_BUDGET_BYTES // 1000)  # 1,000 x this stays within the budget
    assert fetch_bytes(100_000) == "32768"  # never below 32 KiB
    assert fetch_bytes(1000, cap=None) is None  # batches read to the end of what is there: nothing left pinned
    assert fetch_bytes(1000, **{"max.partition.fetch.bytes": "2097152"}) == "2097152"  # the file's setting wins


def test_producer_settings_force_ordered_durable_writes():
    settings = producer_settings({"bootstrap.servers": "b:1", "acks": "1", "enable.idempotence": "false",
                                  "linger.ms": "50", "key.serializer": "x.Custom"})
    assert settings["acks"] == "all"
    assert settings["enable.idempotence"] == "true"
    assert settings["linger.ms"] == "50"
    assert "key.serializer" not in settings  # the writer sends bytes as read
    assert settings["batch.size"] == "1048576"  # a replicator's batches, not the Java default 16 KiB


def test_micro_batches_batch_fuller_than_real_time_mode():
    backlog, real_time = producer_settings({}), producer_settings({}, real_time=True)
    assert (backlog["linger.ms"], backlog["batch.size"]) == ("25", "1048576")
    assert (real_time["linger.ms"], real_time["batch.size"]) == ("5", "262144")
    assert producer_settings({"linger.ms": "0"}, real_time=True)["linger.ms"] == "0"


def test_more_than_five_requests_in_flight_are_refused_since_they_would_reorder():
    with pytest.raises(ConfigError, match="B.producer.max.in.flight.requests.per.connection: '10' would reorder"):
        producer_settings({"max.in.flight.requests.per.connection": "10"}, describe=lambda k: f"B.producer.{k}")
    with pytest.raises(ConfigError, match="'many' would reorder records or is not a number"):
        producer_settings({"max.in.flight.requests.per.connection": "many"})
    assert producer_settings({"max.in.flight.requests.per.connection": "5"})["enable.idempotence"] == "true"


def test_batches_stay_within_the_smallest_limit_and_requests_take_what_the_largest_topic_accepts():
    small = producer_settings({}, {"A.t": 2000})
    assert (small["batch.size"], small["max.request.size"]) == ("1488", "1048576")
    # A 3 MB topic beside the 1 MB heartbeats topic: a 1.5 MB record of the first is not refused by the producer.
    mixed = producer_settings({}, {"A.heartbeats": 1_048_588, "A.big": 3_000_000})
    assert (mixed["batch.size"], mixed["max.request.size"]) == ("1048076", "3000000")
    large = producer_settings({}, {"A.t": 10_000_000})
    assert (large["batch.size"], large["max.request.size"]) == ("1048576", "10000000")
    assert producer_settings({"batch.size": "4096"}, {"A.t": 10_000_000})["batch.size"] == "4096"
    # The file's own max.request.size wins (the writer still checks each record against its topic's limit).
    assert producer_settings({"max.request.size": "3000000"}, {"A.t": 1_048_588})["max.request.size"] == "3000000"
    assert "max.request.size" not in producer_settings({})


def test_real_time_mode_is_refused_with_the_numbers_when_partitions_exceed_free_slots():
    assert real_time_slots_problem("A->B", 12, 12, "local[12]") is None
    problem = real_time_slots_problem("A->B", 13, 12, "local[12]")
    assert "13 partitions but 12 free slots (spark.master = local[12])" in problem
    assert "spark.master = local[15]" in problem and "A->B.sparkmirror.trigger.mode = micro-batch" in problem
    assert "A->B.sparkmirror.source.reader = sparkmirror" in problem


def test_sparkmirrors_source_holds_a_slot_per_task_not_per_partition():
    assert real_time_slots("spark-kafka", 2, 1000) == 1000
    assert real_time_slots("sparkmirror", 2, 1000) == 2
    assert real_time_slots("sparkmirror", 4, 3) == 3
    problem = real_time_slots_problem("A->B", 1000, 1, "local[2]", wanted=2)
    assert "runs its 2 tasks at once but 1 Spark task slots are free" in problem and "A->B.tasks.max = 1" in problem
    assert real_time_slots_problem("A->B", 1000, 2, "local[2]", wanted=2) is None


def test_the_source_reader_names_the_readstream_format_and_gives_sparkmirrors_its_tasks_and_poll_timeout():
    opts: dict[str, str] = {}
    assert source_format("spark-kafka", 4, opts, 1000) == SPARK_KAFKA_SOURCE and opts == {}
    assert source_format("sparkmirror", 4, opts) == FLOW_SOURCE and opts == {"tasks": "4"}
    assert source_format("sparkmirror", 2, opts, 250) == FLOW_SOURCE and opts == {"tasks": "2", "pollMs": "250"}
    source_format("sparkmirror", 2, opts, 0)
    assert opts["pollMs"] == "1"  # MM2 takes 0; a source task's poll of 0 ms would spin


def test_real_time_tasks_batch_fetches_under_load_unless_the_file_sets_the_fetch_wait_itself():
    assert fetch_batching(200, {"bootstrap.servers": "a:1"}, real_time=True) == 200
    assert fetch_batching(200, {"bootstrap.servers": "a:1"}, real_time=False) == 0  # micro-batches read ranges
    assert fetch_batching(0, {}, real_time=True) == 0
    assert fetch_batching(200, {"fetch.max.wait.ms": "500"}, real_time=True) == 0  # the file's own, throughout
    assert fetch_batching(200, {"fetch.min.bytes": "1"}, real_time=True) == 0
    opts: dict[str, str] = {}
    source_format("sparkmirror", 2, opts, None, 200)
    assert opts == {"tasks": "2", "batchFetchesAbove": "200", "batchFetchMinBytes": "65536",
                    "batchFetchMaxWaitMs": "5"}
    opts = {}
    source_format("sparkmirror", 2, opts, None, 0)
    assert opts == {"tasks": "2"}
    spark_opts: dict[str, str] = {}
    assert source_format("spark-kafka", 2, spark_opts, None, 200) == SPARK_KAFKA_SOURCE and spark_opts == {}


def test_real_time_epochs_are_given_to_spark_as_a_duration():
    assert TriggerSpec("real-time", 60_000, 500).real_time_epoch == "60000 milliseconds"


def test_auto_offset_reset_is_left_to_the_flow_which_resolved_it_at_load():
    # tests/unit/config/test_model.py: FlowConfig.reset_policy refuses 'none'; Spark only sees starting offsets
    opts = source_options({"auto.offset.reset": "none"}, {"t": {0: 0}})
    assert "kafka.auto.offset.reset" not in opts


def test_consumer_interceptors_are_refused_not_dropped():
    with pytest.raises(ConfigError, match="interceptor.classes: consumer interceptors cannot run"):
        source_options({"interceptor.classes": "com.example.Audit"}, {})
