"""`sparkmirror run` with `spark.master = spark://...`: the record path's tasks run on a standalone cluster's two
workers (client mode: the driver is the sparkmirror process) and report to the driver over its channel server.

Exact copies, exact offset syncs and checkpoints show that every report reached the driver in order: a lost or
reordered report would leave positions, syncs or counts wrong.
"""

from __future__ import annotations

import signal
import time

from sparkmirror import client
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord, NewTopicSpec
from sparkmirror.testing.records import commit_offsets, produce, read_all

from .test_run_cli import copied, wait_for, write_config

RECORDS = 4000
PARTITIONS = 4
COMMITTED = {0: 100, 1: 0, 2: 999, 3: 1000}
COPY_TIMEOUT_S = 300.0  # two executors to register on 2 loaded cores, then the copy
STOP_TIMEOUT_S = 90.0


def cluster_settings(executor_cores: int = 1) -> str:
    """The driver's address for the executors (loopback: the test cluster's), one executor (`executor_cores`,
    512 MiB) per worker of two, and batches wait until both have registered."""
    return (f"spark.driver.host = 127.0.0.1\nspark.driver.bindAddress = 127.0.0.1\nspark.executor.memory = 512m\n"
            f"spark.executor.cores = {executor_cores}\nspark.cores.max = {2 * executor_cores}\n"
            f"spark.scheduler.minRegisteredResourcesRatio = 1.0\n"
            f"spark.scheduler.maxRegisteredResourcesWaitingTime = 120s\n")


CLUSTER_SETTINGS = cluster_settings()


def test_run_on_a_standalone_cluster_replicates_exactly_from_both_workers(clusters, spark_cluster, start_cli,
                                                                           tmp_path, unique):
    topic, group = f"on-cluster-{unique}", f"g-{unique}"
    assert ClusterAdmin("A", {"bootstrap.servers": clusters.source}).create_topics(
        [NewTopicSpec(topic, PARTITIONS, 1)])[topic] is None
    now = int(time.time() * 1000)
    sent = [KafkaRecord(i % PARTITIONS, -1, f"k{i}".encode(), f"{unique}-{i}".encode(), (("n", str(i).encode()),),
                        0, now - RECORDS + i) for i in range(RECORDS)]
    assert produce(clusters.source, topic, sent) == RECORDS
    commit_offsets(clusters.source, group, {(topic, p): offset for p, offset in COMMITTED.items()})
    path = tmp_path / "mm2.properties"
    write_config(path, clusters.source, clusters.target, topic,
                 f"A->B.groups = {group}\nemit.checkpoints.interval.seconds = 1\n"
                 f"spark.master = {spark_cluster.master_url}\n{CLUSTER_SETTINGS}")
    remote = f"A.{topic}"
    run = start_cli("run", str(path), "--state-dir", str(tmp_path / "state"))

    target = ClusterAdmin("B", {"bootstrap.servers": clusters.target})
    wait_for(lambda: copied(target, remote, PARTITIONS) == RECORDS, COPY_TIMEOUT_S,
             f"{RECORDS} records of {topic} on B from the cluster's executors", run)

    def checkpointed() -> bool:
        got = {(k[1], k[2]): c.upstream_offset for k, c in client.read_checkpoints(path, "A", "B", group).items()}
        return got == {(remote, p): offset for p, offset in COMMITTED.items()}
    wait_for(checkpointed, COPY_TIMEOUT_S, f"checkpoints of {group}", run)

    run.send_signal(signal.SIGTERM)
    assert run.wait(STOP_TIMEOUT_S) == 0, run.log_path.read_text()[-3000:]

    copies = read_all(clusters.target, remote, PARTITIONS)
    for p in range(PARTITIONS):
        expected = [(r.key, r.value, r.headers, r.timestamp) for r in sent if r.partition == p]
        assert [(r.key, r.value, r.headers, r.timestamp) for r in copies[p]] == expected, f"{remote}-{p} differs"
    syncs = [s for s in client.read_offset_syncs(path, "A", "B") if s.topic == topic]
    assert {s.partition for s in syncs} == set(range(PARTITIONS))
    assert all(s.upstream_offset == s.downstream_offset for s in syncs)
    # Each worker started an executor for sparkmirror (its folder: <work dir>/<app id>/<executor id>/).
    apps = [sorted(d.glob("app-*/*/stderr")) for d in spark_cluster.worker_dirs]
    assert all(apps), f"an executor on each worker: {apps}"
