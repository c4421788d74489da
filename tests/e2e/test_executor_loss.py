"""An executor lost mid-copy (its worker SIGKILLed, a machine gone): Spark retries its tasks on the other worker,
`sparkmirror run` finishes the backlog, and nothing is lost. Delivery is at least once, so records the lost
tasks had written may be written again: the test counts them on the target, and the product's own count
(`records_written_again`, from the offsets it had already passed) can only be at most that, since what the lost
executor wrote but never reported is invisible to the driver.

In Real-Time Mode each source partition is a task that never ends: the workers there have two cores each, so the
surviving one has a slot for every partition once the other is gone.
"""

from __future__ import annotations

import re
import signal
import threading
import time
from collections import Counter

from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.produce import AcknowledgedProducer, Message
from sparkmirror.model import KafkaRecord, NewTopicSpec
from sparkmirror.testing.records import read_all
from sparkmirror.testing.spark_cluster import LocalSparkCluster, WorkerSpec

from .test_run_cli import backlog, copied, wait_for, write_config
from .test_spark_cluster_run import CLUSTER_SETTINGS, cluster_settings

RECORDS = 300_000  # one batch of two long tasks (one per executor): the kill lands inside one of them
PARTITIONS = 4
COPY_TIMEOUT_S = 400.0
STOP_TIMEOUT_S = 90.0
# Real-Time Mode: two partitions, a task each, on two executors of 2 cores (one per worker)
RT_PARTITIONS = 2
RT_CHUNK, RT_CHUNK_EVERY_S = 500, 0.1  # about 5,000 records/s
RT_BEFORE_KILL, RT_AFTER_KILL = 20_000, 20_000
RT_CLUSTER_SETTINGS = cluster_settings(executor_cores=2) + \
    "sparkmirror.trigger.mode = real-time\nsparkmirror.report.interval.ms = 200\n"
_WRITTEN_AGAIN = re.compile(r"(\d+) records were written to B a second time")


def on_target(bootstrap: str, topic: str) -> int:
    return copied(ClusterAdmin("B", {"bootstrap.servers": bootstrap}), topic, PARTITIONS)


def test_a_worker_killed_mid_copy_loses_nothing(clusters, start_cli, tmp_path, unique):
    topic = f"loss-{unique}"
    sent = backlog(clusters.source, topic, PARTITIONS, RECORDS, unique)
    remote = f"A.{topic}"
    with LocalSparkCluster(f"loss-{unique}") as cluster:
        path = tmp_path / "mm2.properties"
        write_config(path, clusters.source, clusters.target, topic,
                     f"spark.master = {cluster.master_url}\n{CLUSTER_SETTINGS}")
        run = start_cli("run", str(path), "--state-dir", str(tmp_path / "state"))
        wait_for(lambda: on_target(clusters.target, remote) >= RECORDS // 6, COPY_TIMEOUT_S,
                 "a sixth of the backlog on B", run)
        assert on_target(clusters.target, remote) < RECORDS, "the copy ended before the kill: no loss to test"
        cluster.kill_worker(1)
        wait_for(lambda: cluster.alive_workers() == [0], 30, "the master to see worker 1 gone", run)

        def all_there() -> bool:
            if on_target(clusters.target, remote) < RECORDS:  # cheap first: what is there, duplicates included
                return False
            values = {r.value for records in read_all(clusters.target, remote, PARTITIONS).values() for r in records}
            return len(values) == RECORDS
        wait_for(all_there, COPY_TIMEOUT_S, f"all {RECORDS} records on B after the loss", run)
        run.send_signal(signal.SIGTERM)
        assert run.wait(STOP_TIMEOUT_S) == 0, run.log_path.read_text()[-3000:]

    duplicates, counted = nothing_lost(clusters.target, remote, sent, PARTITIONS, run.log_path.read_text())
    # The lost task had written part of its records: the retry writes them again, and the driver counts those
    # it had been told of (a few acknowledged after its last report are invisible to it).
    assert 0 < counted <= duplicates


def test_a_worker_killed_in_real_time_mode_loses_nothing(clusters, start_cli, tmp_path, unique):
    topic = f"rt-loss-{unique}"
    assert ClusterAdmin("A", {"bootstrap.servers": clusters.source}).create_topics(
        [NewTopicSpec(topic, RT_PARTITIONS, 1)])[topic] is None
    remote = f"A.{topic}"
    sent: list[KafkaRecord] = []
    stop_producing = threading.Event()
    # One producer for the whole stream: a new one per chunk (testing.records.produce) took about 0.5 s, a sixth
    # of the pace RT_CHUNK_EVERY_S sets.
    writer = AcknowledgedProducer({"bootstrap.servers": clusters.source, "linger.ms": "5"})

    def send_chunk() -> None:
        now = int(time.time() * 1000)
        chunk = [KafkaRecord(i % RT_PARTITIONS, -1, f"k{i}".encode(), f"{unique}-{i}".encode(), (), 0, now)
                 for i in range(len(sent), len(sent) + RT_CHUNK)]
        messages = (Message(r.partition, r.key, r.value, r.headers, r.timestamp) for r in chunk)
        assert writer.write(topic, messages, 60) == RT_CHUNK
        sent.extend(chunk)

    def stream() -> None:  # a live source: RT_CHUNK records every RT_CHUNK_EVERY_S until told to stop
        while not stop_producing.is_set():
            send_chunk()
            time.sleep(RT_CHUNK_EVERY_S)

    producer = threading.Thread(target=stream, name="live-source", daemon=True)
    workers = [WorkerSpec(cores=2, memory="1g"), WorkerSpec(cores=2, memory="1g")]
    with LocalSparkCluster(f"rt-loss-{unique}", workers=workers) as cluster:
        path = tmp_path / "mm2.properties"
        write_config(path, clusters.source, clusters.target, topic,
                     f"spark.master = {cluster.master_url}\n{RT_CLUSTER_SETTINGS}")
        send_chunk()  # the first chunk before the run; the stream starts once the tasks copy it
        try:
            run = start_cli("run", str(path), "--state-dir", str(tmp_path / "state"))
            target = ClusterAdmin("B", {"bootstrap.servers": clusters.target})
            wait_for(lambda: copied(target, remote, RT_PARTITIONS) >= RT_CHUNK, COPY_TIMEOUT_S,
                     "the first chunk on B: the never-ending tasks run", run)
            producer.start()
            wait_for(lambda: copied(target, remote, RT_PARTITIONS) >= RT_BEFORE_KILL, COPY_TIMEOUT_S,
                     f"{RT_BEFORE_KILL} live records on B", run)
            cluster.kill_worker(1)  # its executor runs one of the two never-ending tasks (one per executor)
            wait_for(lambda: cluster.alive_workers() == [0], 30, "the master to see worker 1 gone", run)
            after_kill = len(sent)
            wait_for(lambda: len(sent) >= after_kill + RT_AFTER_KILL, COPY_TIMEOUT_S, "records sent after the loss")
        finally:
            stop_producing.set()
            if producer.is_alive():
                producer.join()
        total = len(sent)

        def all_there() -> bool:
            if copied(target, remote, RT_PARTITIONS) < total:
                return False
            copies = read_all(clusters.target, remote, RT_PARTITIONS)
            return len({r.value for records in copies.values() for r in records}) == total
        wait_for(all_there, COPY_TIMEOUT_S, f"all {total} records on B after the loss", run)
        run.send_signal(signal.SIGTERM)
        assert run.wait(STOP_TIMEOUT_S) == 0, run.log_path.read_text()[-3000:]

    duplicates, counted = nothing_lost(clusters.target, remote, sent, RT_PARTITIONS, run.log_path.read_text())
    assert counted <= duplicates  # the driver counts only what it was told of
    assert duplicates > 0, "the lost task's records were not written again: did the kill hit a task?"


def nothing_lost(target: str, remote: str, sent: list[KafkaRecord], partitions: int, log: str) -> tuple[int, int]:
    """Every sent record on the target in its partition and first-seen order; returns the duplicates found
    there and those sparkmirror counted."""
    copies = read_all(target, remote, partitions)
    for p in range(partitions):
        got = [r.value for r in copies[p]]
        first_seen = list(dict.fromkeys(got))  # a record written again comes after its first copy
        assert first_seen == [r.value for r in sent if r.partition == p], f"{remote}-{p} lost or reordered records"
    duplicates = sum(copies_of - 1 for copies_of in Counter(r.value for c in copies.values() for r in c).values())
    counted = sum(int(n) for n in _WRITTEN_AGAIN.findall(log))
    print(f"of {len(sent)} records, written again: {duplicates} on the target, {counted} counted by sparkmirror")
    return duplicates, counted
