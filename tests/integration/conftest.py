"""Everything under tests/integration needs real clusters (and a local Spark)."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME

from sparkmirror.config.mm2 import load_config
from sparkmirror.errors import PipelineError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord, NewTopicSpec
from sparkmirror.runtime.supervisor import Supervisor
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER
from sparkmirror.testing.records import commit_offsets as commit  # noqa: F401 - the tests import it from here
from sparkmirror.testing.records import produce


def pytest_collection_modifyitems(items):
    for item in items:
        if "/integration/" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture
def create_topic(clusters):
    def create(side: str, name: str, partitions: int, configs: dict[str, str] | None = None) -> None:
        bootstrap = clusters.source if side == "A" else clusters.target
        for error in ClusterAdmin(side, {"bootstrap.servers": bootstrap}).create_topics(
                [NewTopicSpec(name, partitions, 1, configs or {})]).values():
            if error:
                raise error
    return create


# The test clusters are shared: without this, A's `heartbeats` topic (written by other tests' B->A flows)
# would join every A->B flow, since MM2 replicates heartbeats whatever `topics` says.
ONLY_OWN_TOPICS = "heartbeats.replication.enabled = false\n"


# Modules whose tests run in both record-path modes override this fixture with both values as params.
TRIGGER_MODES = ["micro-batch", "real-time"]


@pytest.fixture
def trigger_mode() -> str:
    return "micro-batch"


SOURCE_READERS = ["sparkmirror", "spark-kafka"]  # the default first


@pytest.fixture
def source_reader() -> str:
    """What reads the source (sparkmirror.source.reader); a test or module parametrizes it to run on both."""
    return SOURCE_READERS[0]


def trigger_settings(mode: str, reader: str = SOURCE_READERS[0]) -> str:
    """The properties that select a trigger mode and source reader (short reports so tests see positions move
    quickly)."""
    return (f"sparkmirror.trigger.mode = {mode}\nsparkmirror.report.interval.ms = 200\n"
            f"sparkmirror.source.reader = {reader}\n")


@pytest.fixture
def mm2_properties(clusters, tmp_path, trigger_mode, source_reader):
    """Write an A->B properties file for the test clusters replicating `topics`; returns its path."""
    def write(topics: str, extra: str = "") -> Path:
        path: Path = tmp_path / "mm2.properties"
        path.write_text(f"clusters = A, B\nA.bootstrap.servers = {clusters.source}\n"
                        f"B.bootstrap.servers = {clusters.target}\nA->B.enabled = true\n"
                        f"A->B.topics = {topics}\n{SINGLE_BROKER}{ONLY_OWN_TOPICS}"
                        f"{trigger_settings(trigger_mode, source_reader)}{extra}")
        return path
    return write


@pytest.fixture
def run_caught_up(spark):
    """Run the enabled flows of a properties file until their backlog is copied; returns the Supervisor."""
    def run(path: Path, state_dir: Path) -> Supervisor:
        supervisor = Supervisor(load_config(path), state_dir, until_caught_up=True)
        try:
            supervisor.start()
            supervisor.wait()
        finally:
            supervisor.stop()
        return supervisor
    return run


@pytest.fixture
def replicate(mm2_properties, run_caught_up, tmp_path):
    """Run A->B with the given topics regex until the backlog is copied; returns the Supervisor."""
    def run(topics: str, extra: str = "") -> Supervisor:
        return run_caught_up(mm2_properties(topics, extra), tmp_path / "state")
    return run


def wait_until(predicate, timeout_s: float, what: str, poll_s: float = 0.2):
    """Poll until `predicate()` is truthy and return its value; fail naming `what` after the timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(poll_s)


@pytest.fixture
def running(spark, tmp_path):
    """Run a properties file's flows in the background until the test ends; yields the Supervisor."""
    started: list[tuple[Supervisor, threading.Thread, list[BaseException]]] = []

    @contextlib.contextmanager
    def run(path: Path, targets: tuple[str, ...] | None = None, watch: bool = False,
            state_dir: Path | None = None):
        supervisor = Supervisor(load_config(path), state_dir or tmp_path / f"state-{len(started)}",
                                target_clusters=targets, config_path=path if watch else None)
        errors: list[BaseException] = []
        try:
            supervisor.start()
        except BaseException:  # its sole flow would not start, say: what it started meanwhile ends here
            supervisor.stop()
            raise

        def loop() -> None:
            try:
                supervisor.wait(poll_s=0.2)
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        started.append((supervisor, thread, errors))
        try:
            yield supervisor
        finally:
            supervisor.stop()
            thread.join(60)
        if errors:
            raise errors[0]

    yield run


def count_records(bootstrap: str, topic: str) -> int:
    """Records in a topic: the sum of (high - low) over its partitions."""
    admin = ClusterAdmin("count", {"bootstrap.servers": bootstrap})
    partitions = admin.topic_partitions().get(topic)
    if partitions is None:
        return 0
    return sum(high - low for low, high in admin.watermarks(topic, partitions).values())


def records(tag: str, n: int, partitions: int = 1) -> list[KafkaRecord]:
    """`n` records with distinct values `<tag>-<i>`, spread round-robin over `partitions`, stamped now."""
    now = int(time.time() * 1000)
    return [KafkaRecord(i % partitions, -1, f"k{i}".encode(), f"{tag}-{i}".encode(), (), TIMESTAMP_CREATE_TIME,
                        now) for i in range(n)]


class SteadyProducer:
    """Writes `per_round` records every 20 ms, each value distinct, until stopped; counts what it wrote."""

    def __init__(self, bootstrap: str, topic: str, partitions: int = 1, per_round: int = 5) -> None:
        self.bootstrap, self.topic, self.partitions, self.per_round = bootstrap, topic, partitions, per_round
        self.written = 0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.written += produce(self.bootstrap, self.topic,
                                        records(f"steady{self.written}", self.per_round, self.partitions))
            except PipelineError as exc:  # the topic was deleted under it (tests do that); `written` tells
                self.errors.append(str(exc))
            time.sleep(0.02)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join(30)
        return self.written


# -- consumer groups -----------------------------------------------------------------------------------------

def partition_values(bootstrap: str, topic: str, partition: int) -> list[tuple[int, bytes]]:
    """(offset, value) of every record of one partition, as a read_committed consumer sees them."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{time.time_ns()}",
                         "enable.auto.commit": "false", "isolation.level": "read_committed"})
    try:
        low, end = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
        if end <= low:
            return []  # nothing to fetch: the position would never reach the end, and the loop would wait it out
        consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
        out: list[tuple[int, bytes]] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            position = consumer.position([TopicPartition(topic, partition)])[0].offset
            if position >= end:
                break
            for msg in consumer.consume(500, timeout=0.5):
                if not msg.error():
                    out.append((msg.offset(), msg.value()))
        return out
    finally:
        consumer.close()


def committed(bootstrap: str, group: str, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": "false"})
    try:
        return {(tp.topic, tp.partition): tp.offset
                for tp in consumer.committed([TopicPartition(t, p) for t, p in partitions], timeout=30)}
    finally:
        consumer.close()


def forget_flow(bootstrap: str, flow: str) -> None:
    """Make `flow` ("A->B") one that never ran on the session's clusters: its positions group on the target (the
    positions earlier tests' flows of that name committed, the heartbeats topic's among them) is deleted."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    group = "__sparkmirror-positions-" + flow.replace("->", "-")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        admin.delete_consumer_groups([group], request_timeout=30)[group].result(30)
    except KafkaException as exc:
        if exc.args[0].name() != "GROUP_ID_NOT_FOUND":
            raise


def delete_records(bootstrap: str, topic: str, partition: int, before: int) -> None:
    """DeleteRecords: the partition's log start moves to `before` (as retention, or an operator, would)."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept until its future is done
    for future in admin.delete_records([TopicPartition(topic, partition, before)]).values():
        future.result(30)
