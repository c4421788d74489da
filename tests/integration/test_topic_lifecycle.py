"""Topics and partitions that appear, grow, vanish and come back while a flow runs (no restarts)."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME, Consumer
from confluent_kafka.admin import AdminClient, NewPartitions

from sparkmirror.model import KafkaRecord
from sparkmirror.testing.records import produce, read_all

from .conftest import TRIGGER_MODES, SteadyProducer, count_records, records, wait_until

FAST = ("refresh.topics.interval.seconds = 1\nsync.topic.configs.enabled = false\n"
        "emit.heartbeats.enabled = false\n")


class ArrivalClock:
    """Consumes a remote topic and keeps when each record arrived, to measure pauses of a running topic."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.arrivals: list[float] = []
        self._stop = threading.Event()
        self._consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"clock-{time.time_ns()}",
                                   "auto.offset.reset": "earliest", "enable.auto.commit": "false",
                                   "topic.metadata.refresh.interval.ms": "500"})
        self._consumer.subscribe([topic])
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for msg in self._consumer.consume(500, timeout=0.1):
                if not msg.error():
                    self.arrivals.append(time.monotonic())

    def largest_gap(self, after: float, before: float) -> float:
        times = [t for t in self.arrivals if after <= t <= before]
        return max((b - a for a, b in zip(times, times[1:], strict=False)), default=float("inf"))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._consumer.close()



@pytest.fixture(params=TRIGGER_MODES)
def trigger_mode(request) -> str:
    """Every test here runs in both record-path modes: micro-batch and Real-Time Mode."""
    return request.param

def test_new_topics_and_partitions_join_a_running_flow_without_stopping_the_others(
        clusters, create_topic, mm2_properties, running, unique):
    steady, late = f"live-{unique}-steady", f"live-{unique}-late"
    create_topic("A", steady, 2)
    path = mm2_properties(f"live-{unique}-.*", FAST)
    producer = SteadyProducer(clusters.source, steady)
    clock = ArrivalClock(clusters.target, f"A.{steady}")
    try:
        with running(path) as supervisor:
            wait_until(lambda: count_records(clusters.target, f"A.{steady}") > 0, 60, "the first topic to flow")
            # A topic created at runtime, written to before its remote topic exists.
            created_at = time.monotonic()
            create_topic("A", late, 3)
            produce(clusters.source, late, records("late", 300, 3))
            wait_until(lambda: count_records(clusters.target, f"A.{late}") == 300, 60, "the new topic's records")
            pickup_s = time.monotonic() - created_at
            restart = supervisor.flows["A->B"].restarts[-1]
            gap_s = clock.largest_gap(created_at - 2, time.monotonic())
            print(f"\nnew topic: replicated {pickup_s:.1f} s after creation (refresh interval 1 s); "
                  f"query restart: stop {restart.stopped_s:.2f} s + start {restart.started_s:.2f} s; "
                  f"largest gap in the running topic's arrivals: {gap_s:.2f} s")
            assert "new topics" in restart.reason and late in restart.reason

            # Partitions added on the source: the remote topic grows and the new partition's records flow.
            source_admin = AdminClient({"bootstrap.servers": clusters.source})
            source_admin.create_partitions([NewPartitions(late, 5)])[late].result()
            produce(clusters.source, late, [KafkaRecord(4, -1, b"k", b"in-partition-4", (), TIMESTAMP_CREATE_TIME,
                                                        int(time.time() * 1000))])
            wait_until(lambda: count_records(clusters.target, f"A.{late}") == 301, 60,
                       "the record written to the added partition")
            assert read_all(clusters.target, f"A.{late}", 5)[4][0].value == b"in-partition-4"

            written = producer.stop()
            wait_until(lambda: count_records(clusters.target, f"A.{steady}") >= written, 60,
                       "every record of the running topic")
            assert count_records(clusters.target, f"A.{steady}") == written, "restarts must not duplicate"
    finally:
        producer.stop()
        clock.close()


def test_deleted_topic_stops_quietly_and_a_recreated_one_replicates_from_its_start(
        clusters, create_topic, mm2_properties, running, unique, caplog):
    keep, doomed = f"gone-{unique}-keep", f"gone-{unique}-doomed"
    create_topic("A", keep, 1)
    create_topic("A", doomed, 1)
    produce(clusters.source, keep, records("keep", 10))
    produce(clusters.source, doomed, records("old", 50))
    source_admin = AdminClient({"bootstrap.servers": clusters.source})
    with caplog.at_level(logging.INFO, logger="sparkmirror"), running(mm2_properties(f"gone-{unique}-.*", FAST)) as sup:
        wait_until(lambda: count_records(clusters.target, f"A.{doomed}") == 50, 60, "the doomed topic's records")
        source_admin.delete_topics([doomed])[doomed].result()
        wait_until(lambda: doomed not in sup.flows["A->B"].assignment, 30, "the flow to drop the deleted topic")
        produce(clusters.source, keep, records("keep-after", 10))
        wait_until(lambda: count_records(clusters.target, f"A.{keep}") == 20, 60, "the other topic to keep flowing")
        assert sup.flows["A->B"].failure is None

        create_topic("A", doomed, 1)
        produce(clusters.source, doomed, records("new", 7))
        wait_until(lambda: count_records(clusters.target, f"A.{doomed}") == 57, 60,
                   "the re-created topic's records, from its start")
        values = [r.value for r in read_all(clusters.target, f"A.{doomed}", 1)[0]]
        assert values[50:] == [f"new-{i}".encode() for i in range(7)]
        assert sup.flows["A->B"].failure is None
    assert any("was deleted and re-created" in r.getMessage() and r.levelno == logging.WARNING
               for r in caplog.records), "re-creation must be reported as a warning"


def test_auto_offset_reset_latest_replicates_only_new_records(clusters, create_topic, mm2_properties, running,
                                                              unique):
    topic = f"latest-{unique}"
    create_topic("A", topic, 2)
    produce(clusters.source, topic, records("before", 40, 2))
    path = mm2_properties(topic, FAST + "A.consumer.auto.offset.reset = latest\n")
    with running(path) as supervisor:
        wait_until(lambda: supervisor.flows["A->B"].query is not None, 60, "the flow to start")
        produce(clusters.source, topic, records("after", 10, 2))
        wait_until(lambda: count_records(clusters.target, f"A.{topic}") >= 10, 60, "the new records")
        time.sleep(2)
    values = sorted(r.value for rs in read_all(clusters.target, f"A.{topic}", 2).values() for r in rs)
    assert values == sorted(f"after-{i}".encode() for i in range(10))


def test_a_topic_deleted_while_it_is_read_stalls_no_other_topic(clusters, create_topic, mm2_properties, running,
                                                                 unique):
    """Both topics take records until the deletion, the other one all along; the deletion must not stop the other
    topic's records for more than two refresh intervals (it stalled every topic of the flow for four minutes)."""
    refresh_s = 5
    keep, doomed = f"midread-{unique}-keep", f"midread-{unique}-doomed"
    create_topic("A", keep, 2)
    create_topic("A", doomed, 2)
    kept, gone = SteadyProducer(clusters.source, keep, 2), SteadyProducer(clusters.source, doomed, 2)
    clock = ArrivalClock(clusters.target, f"A.{keep}")
    path = mm2_properties(f"midread-{unique}-.*", f"refresh.topics.interval.seconds = {refresh_s}\n"
                                                    "sync.topic.configs.enabled = false\n")
    try:
        with running(path) as sup:
            # records written once the query runs reach the target (a round in flight may have begun before)
            marks = {f"A.{t}": w.written + w.per_round for t, w in ((doomed, gone), (keep, kept))}
            wait_until(lambda: all(count_records(clusters.target, t) > mark for t, mark in marks.items()), 90,
                       "both topics flowing")
            # Its writer stops first: a write begun after the deletion waits up to 30 s for the topic to come back
            # (librdkafka's topic.metadata.propagation.max.ms), and stop() would wait for it.
            gone.stop()
            deleted = time.monotonic()
            source_admin = AdminClient({"bootstrap.servers": clusters.source})
            source_admin.delete_topics([doomed])[doomed].result()
            wait_until(lambda: doomed not in sup.flows["A->B"].assignment, 120, "the flow to drop the topic")
            time.sleep(refresh_s)
            gap = clock.largest_gap(deleted - 1, time.monotonic())
            print(f"\nlargest pause of the other topic around the deletion: {gap:.1f} s")
            assert gap <= 2 * refresh_s, f"the other topic paused {gap:.1f} s"
            assert sup.flows["A->B"].failure is None
    finally:
        kept.stop()
        gone.stop()
        clock.close()


def test_a_topic_re_created_at_once_is_copied_from_its_start_in_order(clusters, create_topic, mm2_properties,
                                                                      running, unique):
    """Deleted and re-created with more records than before, faster than a topic refresh: the running query
    would read on at the old offsets, now the new topic's. The writer compares topic ids, so the new topic
    is copied from its start, after the old one's records, and never from its middle first."""
    topic = f"reborn-{unique}"
    create_topic("A", topic, 2)
    produce(clusters.source, topic, records("old", 400, 2))
    source_admin = AdminClient({"bootstrap.servers": clusters.source})
    path = mm2_properties(topic, "refresh.topics.interval.seconds = 600\nsync.topic.configs.enabled = false\n")
    with running(path) as sup:
        wait_until(lambda: count_records(clusters.target, f"A.{topic}") == 400, 90, "the old topic's records")
        source_admin.delete_topics([topic])[topic].result()
        wait_until(lambda: _created(source_admin, topic), 30, "the topic to be created again")
        produce(clusters.source, topic, records("new", 1200, 2))
        wait_until(lambda: count_records(clusters.target, f"A.{topic}") >= 1600, 120, "the new topic's records")
        assert sup.flows["A->B"].failure is None
    target = read_all(clusters.target, f"A.{topic}", 2)
    for p in (0, 1):
        firsts = list(dict.fromkeys(r.value for r in target[p]))
        assert firsts == [f"old-{i}".encode() for i in range(p, 400, 2)] + \
                         [f"new-{i}".encode() for i in range(p, 1200, 2)], f"partition {p} out of order"


def _created(admin: AdminClient, topic: str) -> bool:
    """Create the topic; False while the broker still finishes deleting the previous one."""
    from confluent_kafka.admin import NewTopic

    try:
        admin.create_topics([NewTopic(topic, 2, 1)])[topic].result()
    except Exception:  # noqa: BLE001 - TOPIC_ALREADY_EXISTS while the deletion completes: try again
        return False
    return True
