"""The record path in Real-Time Mode beyond the tests that run in both modes (test_replication,
test_offset_syncs, test_topic_lifecycle, active/active in test_topologies): repeated and null headers with
provenance, a topic change and a restart in one long run, the slot rule, and the JVM writer's sync rule."""

from __future__ import annotations

import json
import random
import time

import pytest
from confluent_kafka import Producer

from sparkmirror.config.mm2 import load_config
from sparkmirror.errors import PipelineError
from sparkmirror.kafka.records import has_records_between
from sparkmirror.model import KafkaRecord
from sparkmirror.offsets.syncs import sync_points
from sparkmirror.policy.provenance import PROVENANCE_HEADER
from sparkmirror.runtime.supervisor import Supervisor
from sparkmirror.testing.records import produce, read_all

from .conftest import count_records, records, wait_until
from .test_offset_syncs import assert_syncs_exact


@pytest.fixture
def trigger_mode() -> str:
    return "real-time"


def sample(tag: str, n: int, partitions: int) -> list[KafkaRecord]:
    """Null keys and values, repeated and null headers, and distinct timestamps an hour old (not the
    producer's own). Not older: records past the brokers' 7-day retention are deleted by the next retention
    check, in the middle of whichever test is running then."""
    hour_ago = int(time.time() * 1000) - 3_600_000
    return [KafkaRecord(i % partitions, -1, None if i % 7 == 0 else f"k{i}".encode(),
                        None if i % 11 == 0 else f"{tag}-{i}".encode(),
                        (("h", b"1"), ("h", None), ("z", f"{i}".encode())), 0, hour_ago + i)
            for i in range(n)]


def test_real_time_mode_copies_exactly_and_survives_topic_changes_and_restarts(clusters, create_topic, mm2_properties,
                                                                              running, unique, tmp_path):
    first, second = f"rt-{unique}", f"rt-{unique}-late"
    create_topic("A", first, 2)
    written = sample("a", 120, 2)
    produce(clusters.source, first, written)
    path = mm2_properties(f"rt-{unique}.*", "sparkmirror.provenance.header.enabled = true\n")
    state = tmp_path / "state"
    with running(path, state_dir=state) as supervisor:
        assert supervisor.flows["A->B"].trigger().mode == "real-time"
        wait_until(lambda: count_records(clusters.target, f"A.{first}") == 120, 90, "the backlog")
        source, target = read_all(clusters.source, first, 2), read_all(clusters.target, f"A.{first}", 2)
        for p in (0, 1):
            assert [(r.key, r.value, r.headers + ((PROVENANCE_HEADER, b"A"),), r.timestamp) for r in source[p]] == \
                   [(r.key, r.value, r.headers, r.timestamp) for r in target[p]], f"partition {p} differs"
        # A new topic changes the partition set: the query is stopped between records and restarted.
        create_topic("A", second, 1)
        produce(clusters.source, second, records("b", 30))
        produce(clusters.source, first, sample("c", 40, 2))
        wait_until(lambda: count_records(clusters.target, f"A.{second}") == 30, 90, "the new topic")
        wait_until(lambda: count_records(clusters.target, f"A.{first}") == 160, 90, "records written meanwhile")
        assert supervisor.flows["A->B"].restarts[-1].reason.startswith("new topics")
    produce(clusters.source, first, sample("d", 20, 2))
    with running(path, state_dir=state):  # a restart continues at the saved positions
        wait_until(lambda: count_records(clusters.target, f"A.{first}") >= 180, 90, "records after the restart")
    values = [r.value for rs in read_all(clusters.target, f"A.{first}", 2).values() for r in rs]
    assert len(values) == 180, "no record may be copied twice by a topic change or a restart"
    assert assert_syncs_exact(clusters, first, 2) >= 2


def test_real_time_tasks_switch_to_batched_fetches_under_load_and_back_without_a_gap_or_a_repeat(
        clusters, create_topic, mm2_properties, running, spark, unique):
    """FetchPace's switches between a task's two consumers, each seeking the other to where it is: forced often by a
    bound of 2 polls with records a second, with bursts of polls and idle seconds between them."""
    topic = f"rt-pace-{unique}"
    create_topic("A", topic, 2)
    pace = spark.sparkContext._jvm.io.sparkmirror.recordpath.FetchPace
    before = pace.switches()
    path = mm2_properties(topic, "sparkmirror.real.time.batch.fetches.per.second = 2\n")
    with running(path):
        sent = 0
        for burst in range(3):
            for _ in range(10):  # ten polls with records in about a second: batched from the next window
                produce(clusters.source, topic, sample(f"b{burst}", 20, 2))
                sent += 20
                time.sleep(0.1)
            wait_until(lambda n=sent: count_records(clusters.target, f"A.{topic}") == n, 60, f"burst {burst}")
            time.sleep(2.5)  # a window without polls with records: plain again
    source, target = read_all(clusters.source, topic, 2), read_all(clusters.target, f"A.{topic}", 2)
    for p in (0, 1):
        assert [(r.key, r.value, r.timestamp) for r in source[p]] == [(r.key, r.value, r.timestamp) for r in target[p]]
    assert pace.switches() - before >= 4, "to batched and back in at least two of the three bursts"


def refusal(path, tmp_path) -> str:
    supervisor = Supervisor(load_config(path), tmp_path / "state")
    try:
        with pytest.raises(PipelineError) as info:
            supervisor.start()
    finally:
        supervisor.stop()
    return str(info.value)


@pytest.mark.parametrize("source_reader", ["spark-kafka"])
def test_real_time_mode_on_sparks_source_refuses_more_partitions_than_task_slots(clusters, create_topic,
                                                                                 mm2_properties, spark, unique,
                                                                                 tmp_path):
    topic = f"rt-wide-{unique}"
    slots = int(spark.sparkContext.defaultParallelism)
    create_topic("A", topic, slots + 1)
    message = refusal(mm2_properties(topic), tmp_path)
    assert f"{slots + 1} partitions but {slots} free slots" in message, message
    assert "sparkmirror.trigger.mode = micro-batch" in message and "sparkmirror.source.reader = sparkmirror" in message


@pytest.mark.parametrize("source_reader", ["sparkmirror"])
def test_real_time_mode_refuses_more_tasks_than_task_slots_and_reads_more_partitions_than_slots(
        clusters, create_topic, mm2_properties, spark, unique, tmp_path):
    topic = f"rt-tasks-{unique}"
    slots = int(spark.sparkContext.defaultParallelism)
    create_topic("A", topic, slots + 2)
    message = refusal(mm2_properties(topic, f"tasks.max = {slots + 1}\n"), tmp_path)
    assert f"runs its {slots + 1} tasks at once but {slots} Spark task slots are free" in message, message
    assert f"A->B.tasks.max = {slots}" in message
    # sparkmirror's source: the same partitions on as many tasks as there are slots
    produce(clusters.source, topic, sample("wide", 40, slots + 2))
    wide = mm2_properties(topic, f"tasks.max = {slots}\n")
    supervisor = Supervisor(load_config(wide), tmp_path / "wide", until_caught_up=True)
    try:
        supervisor.start()
        supervisor.wait()
    finally:
        supervisor.stop()
    assert count_records(clusters.target, f"A.{topic}") == 40


@pytest.mark.parametrize("seed", range(5))
def test_the_jvm_writer_reports_the_syncs_of_the_reference_rule(spark, seed):
    """PartitionLog.java against offsets/syncs.sync_points on stretches with markers and foreign records."""
    rng = random.Random(seed)  # noqa: S311 - reproducible
    up, down, u, d = [], [], rng.randrange(100), rng.randrange(100)
    for _ in range(300):
        u += 1 + (rng.random() < 0.2) * rng.randrange(1, 4)
        d += 1 + (rng.random() < 0.1)
        up.append(u)
        down.append(d)
    jvm_class = spark.sparkContext._jvm.io.sparkmirror.recordpath.PartitionLog
    got = json.loads(jvm_class.summaryOf(",".join(map(str, up)), ",".join(map(str, down))))
    ups, downs, runs = sync_points(up, down)
    assert (got["sync_upstream"], got["sync_downstream"], got["sync_runs"]) == (ups, downs, runs)
    assert (got["records"], got["next_upstream"], got["bytes"]) == (300, up[-1] + 1, 300)



def test_only_markers_and_aborted_records_count_as_read_to_the_end(clusters, create_topic, unique):
    """What stops a Real-Time Mode query run until caught up: offsets past the last record it copied that
    hold no record its consumer sees."""
    topic = f"rt-end-{unique}"
    create_topic("A", topic, 1)
    producer = Producer({"bootstrap.servers": clusters.source, "transactional.id": f"tx-{topic}"})
    producer.init_transactions(30)
    for commit in (True, False):  # offsets 0 record, 1 commit marker, 2 aborted record, 3 abort marker
        producer.begin_transaction()
        producer.produce(topic, value=b"v", partition=0)
        producer.flush(30)  # on the log before the abort (an abort drops what is not sent yet)
        if commit:
            producer.commit_transaction(30)
        else:
            producer.abort_transaction(30)
    committed = {"bootstrap.servers": clusters.source, "isolation.level": "read_committed"}
    uncommitted = {**committed, "isolation.level": "read_uncommitted"}
    assert has_records_between(committed, topic, 0, 0, 4)
    assert not has_records_between(committed, topic, 0, 1, 4), "a marker and an aborted record are no records"
    assert has_records_between(uncommitted, topic, 0, 1, 4), "read_uncommitted sees the aborted record"
    assert not has_records_between(uncommitted, topic, 0, 3, 4)
