"""Offset translation interoperates with Apache Kafka's MM2 both ways: sparkmirror reads the checkpoints and
offset syncs a real MirrorMaker 2 writes, and MM2's `RemoteClusterUtils.translateOffsets` reads the
checkpoints sparkmirror writes (see mm2_interop.py for the Java side)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

from sparkmirror.client import read_checkpoints, read_offset_syncs
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.testing.records import produce

from .conftest import count_records, records, wait_until
from .mm2_interop import java_translate, running_mm2

PARTITIONS = 3
RECORDS_PER_PARTITION = 30
CHECKPOINT_TIMEOUT_S = 120.0
REPLICATION_TIMEOUT_S = 120.0
CONSUME_TIMEOUT_S = 60.0
CLI_TIMEOUT_S = 180.0


def commit_consumed(bootstrap: str, group: str, topic: str, counts: Mapping[int, int]) -> dict[int, int]:
    """As `group`, consume the first `counts[p]` records of each partition p and commit the position after
    them (offset 0 where the count is 0); returns the committed offset per partition."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": "false"})
    try:
        todo = {p for p, n in counts.items() if n > 0}
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in todo])
        consumed = dict.fromkeys(counts, 0)
        positions = dict.fromkeys(counts, 0)
        deadline = time.monotonic() + CONSUME_TIMEOUT_S
        while todo:
            if time.monotonic() > deadline:
                raise AssertionError(f"group {group} could not consume {dict(counts)} from {topic}: got {consumed}")
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                raise KafkaException(msg.error())
            if msg.partition() not in todo:
                continue
            consumed[msg.partition()] += 1
            positions[msg.partition()] = msg.offset() + 1
            if consumed[msg.partition()] == counts[msg.partition()]:
                todo.discard(msg.partition())
        consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in positions.items()], asynchronous=False)
        return positions
    finally:
        consumer.close()


def value_at(bootstrap: str, topic: str, partition: int, offset: int) -> bytes | None:
    """The value of the first record a consumer starting at `offset` reads; None if there is none."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"interop-read-{time.time_ns()}",
                         "enable.auto.commit": "false"})
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
        if offset >= high:
            return None
        consumer.assign([TopicPartition(topic, partition, offset)])
        deadline = time.monotonic() + CONSUME_TIMEOUT_S
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None:
                if msg.error():
                    raise KafkaException(msg.error())
                return msg.value()
        raise AssertionError(f"no record read from {topic}-{partition} at offset {offset}")
    finally:
        consumer.close()


def cli_translation(config: Path, group: str) -> dict:
    """`sparkmirror offsets translate --json` for `group` from A to B, as a separate process."""
    result = subprocess.run([sys.executable, "-m", "sparkmirror", "offsets", "translate", "--config", str(config),
                             "--group", group, "--from", "A", "--to", "B", "--json"],
                            capture_output=True, text=True, timeout=CLI_TIMEOUT_S)
    assert result.returncode == 0, f"offsets translate exited {result.returncode}:\n{result.stderr}"
    return json.loads(result.stdout)


def wait_copied(bootstrap: str, remote: str, expected: int) -> None:
    wait_until(lambda: count_records(bootstrap, remote) == expected, REPLICATION_TIMEOUT_S,
               f"{expected} records in {remote}")


def test_mm2_checkpoints_are_read_by_sparkmirror(clusters, create_topic, tmp_path, unique):
    """MM2 translates nothing before its OffsetSyncStore has read the syncs topic to the end, and keeps only
    the latest sync per partition from that first read if it could not read its earlier checkpoints. So the
    group starts at offset 0, MM2 checkpoints it after one record per partition (the store is live), and
    only then come the rest of the records and the group's mid-topic commit."""
    topic, group = f"interop-mm2-{unique}", f"interop-mm2-{unique}"
    remote = f"A.{topic}"
    consumed_counts = {0: 25, 1: 13, 2: 4}
    create_topic("A", topic, PARTITIONS)
    commit_consumed(clusters.source, group, topic, dict.fromkeys(range(PARTITIONS), 0))
    with running_mm2(clusters.source, clusters.target, [topic], [group]) as mm2:
        config = tmp_path / "mm2.properties"
        config.write_text(mm2.properties)
        produce(clusters.source, topic, records("first", PARTITIONS, PARTITIONS))
        every_partition = {(remote, p) for p in range(PARTITIONS)}
        wait_until(lambda: java_translate(clusters.target, "A", group).keys() == every_partition,
                   CHECKPOINT_TIMEOUT_S, f"MM2 checkpoints of {group} at offset 0", poll_s=1)

        produce(clusters.source, topic, records("rest", (RECORDS_PER_PARTITION - 1) * PARTITIONS, PARTITIONS))
        wait_copied(clusters.target, remote, RECORDS_PER_PARTITION * PARTITIONS)
        committed = commit_consumed(clusters.source, group, topic, consumed_counts)
        assert committed == consumed_counts

        def all_advanced() -> bool:
            offsets = java_translate(clusters.target, "A", group)
            return offsets.keys() == every_partition and all(o > 0 for o in offsets.values())

        wait_until(all_advanced, CHECKPOINT_TIMEOUT_S, f"MM2 checkpoints of {group}'s commit {committed}", poll_s=1)
    java = java_translate(clusters.target, "A", group)  # MM2 is stopped: the checkpoints topic holds still

    checkpoints = read_checkpoints(config, "A", "B", group)
    assert set(checkpoints) == {(group, remote, p) for p in range(PARTITIONS)}
    for (_, remote_topic, partition), checkpoint in checkpoints.items():
        assert (checkpoint.group, checkpoint.topic, checkpoint.partition) == (group, remote_topic, partition)
        assert checkpoint.upstream_offset == committed[partition], f"partition {partition}"
        assert checkpoint.downstream_offset == java[(remote_topic, partition)], f"partition {partition}"
        assert 0 < checkpoint.downstream_offset <= committed[partition], "identical offsets, translated down"

    syncs = [s for s in read_offset_syncs(config, "A", "B") if s.topic == topic]
    assert syncs, "MM2's offset syncs for the topic were not read"
    ranges = ClusterAdmin("B", {"bootstrap.servers": clusters.target}).watermarks(remote, PARTITIONS)
    for sync in syncs:
        assert sync.partition in ranges, f"{sync} names no partition of {topic}"
        low, high = ranges[sync.partition]
        assert low <= sync.downstream_offset < high, f"{sync} points outside {remote}-{sync.partition}"
        assert 0 <= sync.upstream_offset < RECORDS_PER_PARTITION, f"{sync} points outside {topic}"
    # Each partition's first record always gets a sync (MM2's PartitionState: first sync of a lifetime).
    assert {(s.partition, s.upstream_offset, s.downstream_offset) for s in syncs} >= {
        (p, 0, 0) for p in range(PARTITIONS)}


def test_java_remote_cluster_utils_reads_sparkmirror_checkpoints(clusters, create_topic, mm2_properties, running,
                                                                  unique):
    """The group commits at the end of what is copied, where the latest offset sync makes translation
    exact; records produced afterwards give the translated offset a record to point at."""
    topic, group = f"interop-sm-{unique}", f"interop-sm-{unique}"
    remote = f"A.{topic}"
    counts = {0: 12, 1: 5, 2: 20}
    create_topic("A", topic, PARTITIONS)
    produce(clusters.source, topic, [replace(r, partition=p) for p, n in counts.items()
                                     for r in records(f"first-p{p}", n)])
    config = mm2_properties(topic, f"A->B.groups = {group}\nemit.checkpoints.interval.seconds = 1\n"
                                   "refresh.groups.interval.seconds = 1\noffset.lag.max = 0\n")
    with running(config):
        wait_copied(clusters.target, remote, sum(counts.values()))
        committed = commit_consumed(clusters.source, group, topic, counts)
        assert committed == counts

        def checkpointed() -> bool:
            found = read_checkpoints(config, "A", "B", group)
            return {(cp.topic, cp.partition): cp.upstream_offset for cp in found.values()} == {
                (remote, p): o for p, o in committed.items()}

        wait_until(checkpointed, CHECKPOINT_TIMEOUT_S, f"sparkmirror checkpoints of {group} at {committed}")
        produce(clusters.source, topic, records("after", 10 * PARTITIONS, PARTITIONS))
        wait_copied(clusters.target, remote, sum(counts.values()) + 10 * PARTITIONS)

    java = java_translate(clusters.target, "A", group)
    report = cli_translation(config, group)
    cli = {(p["remote_topic"], p["partition"]): p["downstream_offset"] for p in report["partitions"]}
    assert java == cli, "RemoteClusterUtils.translateOffsets and `offsets translate` disagree"
    assert java.keys() == {(remote, p) for p in range(PARTITIONS)}
    for partition, upstream in committed.items():
        downstream = java[(remote, partition)]
        expected = value_at(clusters.source, topic, partition, upstream)
        assert expected is not None
        assert value_at(clusters.target, remote, partition, downstream) == expected, (
            f"partition {partition}: downstream {downstream} is not the record after the consumed ones "
            f"(upstream {upstream})")
