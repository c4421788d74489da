"""Capped micro-batches over many partitions stay within a small driver heap.

A capped batch (exactly once's, or `sparkmirror.max.offsets.per.trigger`) ends every partition inside a fetch;
Spark keeps the rest of the partition's last poll for the next batch, decoded, and each kept record's header pins
its whole fetch response. With Java's 1 MiB per-partition fetches and polls of up to 2,000 records, that is a few
MB per partition: 400 partitions ran this test's 768 MiB driver out of heap in its first batches (and the
1,000-partition exactly-once benchmark a 1 GiB driver). The source now shares a fetch budget across the partitions
of a capped query (`pipeline/options.capped_partition_fetch_bytes`): measured here, about 450 MB of byte arrays
stay live, and the run copies on.
"""

from __future__ import annotations

import os
import signal
import time

from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord, NewTopicSpec
from sparkmirror.testing.records import produce

from .test_run_cli import copied, wait_for, write_config

PARTITIONS = 400
PER_PARTITION = 1_100  # 1 KiB values: more than one 1 MiB fetch per partition
CAP = PARTITIONS * 100  # records per batch: 100 of each partition, far less than a fetch returns
BATCHES = 3
COPY_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 90.0


def test_capped_batches_over_400_partitions_run_in_a_768_mib_driver(clusters, start_cli, tmp_path, unique):
    topic = f"capped-{unique}"
    source = ClusterAdmin("A", {"bootstrap.servers": clusters.source})
    assert source.create_topics([NewTopicSpec(topic, PARTITIONS, 1)])[topic] is None
    value = os.urandom(1024)
    now = int(time.time() * 1000)
    total = PARTITIONS * PER_PARTITION
    assert produce(clusters.source, topic, (
        KafkaRecord(i % PARTITIONS, -1, str(i).encode(), value, (("seq", str(i).encode()),), 0, now)
        for i in range(total))) == total
    config = write_config(tmp_path / "mm2.properties", clusters.source, clusters.target, topic,
                          f"sparkmirror.max.offsets.per.trigger = {CAP}\nspark.driver.memory = 768m\n"
                          "spark.master = local[2]\nA.consumer.max.poll.records = 2000\n")
    run = start_cli("run", "--config", config, "--state-dir", str(tmp_path / "state"))
    target = ClusterAdmin("B", {"bootstrap.servers": clusters.target})
    remote = f"A.{topic}"

    # Without the budget the driver's JVM died in the first batch and the run exited: wait_for reports its log.
    wait_for(lambda: copied(target, remote, PARTITIONS) >= BATCHES * CAP, COPY_TIMEOUT_S,
             f"{BATCHES} capped batches copied", run)
    os.killpg(run.pid, signal.SIGTERM)
    assert run.wait(STOP_TIMEOUT_S) == 0, run.log_path.read_text()[-3000:]
    assert "OutOfMemoryError" not in run.log_path.read_text()
