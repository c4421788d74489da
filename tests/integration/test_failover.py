"""The failover drill: a consumer on A, A's broker killed, `sparkmirror failover --apply` to B, the consumer
continues on B; A recovers, `sparkmirror failback --apply`, the consumer continues on A. Every record is
processed exactly once across the three clusters' sessions."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from confluent_kafka import Consumer, TopicPartition

from sparkmirror import client
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import NewTopicSpec
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER, start_clusters
from sparkmirror.testing.records import produce

from .conftest import count_records, records, wait_until


@pytest.fixture
def drill_clusters():
    """Two clusters of this test's own: one of them is killed."""
    a, b = start_clusters(["drill-A", "drill-B"])
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()


def process(bootstrap: str, group: str, topic: str, limit: int | None, timeout_s: float = 60) -> list[bytes]:
    """A consumer application: reads up to `limit` records (all there are, if None) from its committed
    offsets, then commits exactly what it processed."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": "false",
                         "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    consumer.subscribe([topic])
    processed, positions = [], {}
    deadline, quiet_since = time.monotonic() + timeout_s, time.monotonic()
    try:
        while time.monotonic() < deadline and (limit is None or len(processed) < limit):
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                if limit is None and processed and time.monotonic() - quiet_since > 5:
                    break
                continue
            quiet_since = time.monotonic()
            processed.append(msg.value())
            positions[(msg.topic(), msg.partition())] = msg.offset() + 1
        if positions:
            consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in positions.items()],
                            asynchronous=False)
    finally:
        consumer.close()
    return processed


def sparkmirror(*args: str) -> dict:
    result = subprocess.run([sys.executable, "-m", "sparkmirror", *args, "--json"], capture_output=True, text=True,
                            timeout=180)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_failover_and_failback_drill_processes_every_record_exactly_once(drill_clusters, running, tmp_path):
    a, b = drill_clusters
    topic, group = "orders", "billing"
    ClusterAdmin("A", {"bootstrap.servers": a.bootstrap_servers}).create_topics([NewTopicSpec(topic, 2, 1, {})])
    produce(a.bootstrap_servers, topic, records("first", 100, 2))
    path = tmp_path / "mm2.properties"
    path.write_text(f"clusters = A, B\nA.bootstrap.servers = {a.bootstrap_servers}\n"
                    f"B.bootstrap.servers = {b.bootstrap_servers}\nA->B.enabled = true\nA->B.topics = {topic}\n"
                    f"emit.checkpoints.interval.seconds = 1\n{SINGLE_BROKER}")

    with running(path):
        wait_until(lambda: count_records(b.bootstrap_servers, f"A.{topic}") == 100, 90, "replication")
        on_a = process(a.bootstrap_servers, group, topic, 60)
        assert len(on_a) == 60
        wait_until(lambda: sum(cp.upstream_offset for cp in client.read_checkpoints(path, "A", "B", group).values())
                   == 60, 60, "the checkpoints of the group's last commit")
    a.kill()

    plan = sparkmirror("failover", "--config", str(path), "--group", group, "--from", "A", "--to", "B")
    assert plan["method"] == "checkpoints" and not plan["applied"]
    assert sorted((p["remote_topic"], p["partition"]) for p in plan["partitions"]) == [(f"A.{topic}", 0),
                                                                                      (f"A.{topic}", 1)]
    assert sum(p["lag"] for p in plan["partitions"]) == 40  # what the consumer has left to read on B
    applied = sparkmirror("failover", "--config", str(path), "--group", group, "--from", "A", "--to", "B",
                          "--apply")
    assert applied["applied"]
    on_b = process(b.bootstrap_servers, group, f"A.{topic}", 25)
    assert len(on_b) == 25

    a.restart()
    produce(a.bootstrap_servers, topic, records("after-recovery", 30, 2))
    back = sparkmirror("failback", "--config", str(path), "--group", group, "--from", "B", "--to", "A", "--apply")
    assert back["applied"] and back["method"] == "live"
    assert {p["status"] for p in back["partitions"]} == {"exact"}
    assert {p["remote_topic"] for p in back["partitions"]} == {topic}
    on_a_again = process(a.bootstrap_servers, group, topic, None)

    everything = [r.value for r in records("first", 100, 2)] + [r.value for r in records("after-recovery", 30, 2)]
    seen = on_a + on_b + on_a_again
    assert sorted(seen) == sorted(everything), (
        f"{len(seen)} processed for {len(everything)} records; "
        f"duplicates: {len(seen) - len(set(seen))}, missed: {len(set(everything) - set(seen))}")


def test_failover_refuses_while_the_group_is_active_on_the_destination(clusters, create_topic, mm2_properties,
                                                                         replicate, unique):
    topic, group = f"fo-{unique}", f"g-{unique}"
    create_topic("A", topic, 1)
    produce(clusters.source, topic, records(unique, 10))
    replicate(topic)
    process(clusters.source, group, topic, 4)
    member = Consumer({"bootstrap.servers": clusters.target, "group.id": group, "enable.auto.commit": "false"})
    member.subscribe([f"A.{topic}"])
    try:
        wait_until(lambda: member.poll(0.2) is None and member.assignment(), 30, "the member's assignment")
        path = mm2_properties(topic)
        result = subprocess.run([sys.executable, "-m", "sparkmirror", "failover", "--config", str(path), "--group",
                                 group, "--from", "A", "--to", "B", "--apply"], capture_output=True, text=True,
                                timeout=120)
        assert result.returncode != 0
        assert f"group '{group}' has 1 active member(s) on cluster 'B'" in result.stderr
        dry = client.failover(path, group, "A", "B")
        assert [(p.remote_topic, p.downstream_offset, p.status) for p in dry.partitions] == [(f"A.{topic}", 4,
                                                                                             "exact")]
    finally:
        member.close()
