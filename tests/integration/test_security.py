"""Client security written the MM2 way, against a broker that demands SASL/SCRAM-SHA-512.

Both clients must authenticate from the same three keys: Spark's Java Kafka source reads A's records, and the
librdkafka admin (settings translated by sparkmirror.config.librdkafka) checks A and lists its topics.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from confluent_kafka import TIMESTAMP_CREATE_TIME, Producer

from sparkmirror.cli.main import cli
from sparkmirror.errors import ClusterAuthenticationError, SparkmirrorError
from sparkmirror.kafka.admin import PROBE_TIMEOUT_S, ClusterAdmin
from sparkmirror.model import NewTopicSpec
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER
from sparkmirror.testing.records import read_all

RECORDS = 2_000
PARTITIONS = 2
PRODUCE_TIMEOUT_S = 60.0


def mm2_file(path: Path, sasl_cluster, target: str, topic: str, password: str) -> Path:
    """The properties an MM2 user writes for a SCRAM-protected source cluster, nothing more."""
    path.write_text(
        "clusters = A, B\n"
        f"A.bootstrap.servers = {sasl_cluster.bootstrap}\n"
        "A.security.protocol = SASL_PLAINTEXT\n"
        "A.sasl.mechanism = SCRAM-SHA-512\n"
        "A.sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{sasl_cluster.username}" password="{password}";\n'
        f"B.bootstrap.servers = {target}\n"
        "A->B.enabled = true\n"
        f"A->B.topics = {topic}\n"
        f"{SINGLE_BROKER}")
    return path


def produce_authenticated(sasl_cluster, topic: str) -> dict[int, list[tuple]]:
    """RECORDS records spread over the partitions; returns each partition's (key, value, headers, ts) in order."""
    producer = Producer({**sasl_cluster.librdkafka_settings(), "acks": "all", "enable.idempotence": "true",
                         "linger.ms": "5"})
    errors: list[str] = []
    now_ms = int(time.time() * 1000)
    sent: dict[int, list[tuple]] = {p: [] for p in range(PARTITIONS)}
    for i in range(RECORDS):
        partition, key, value = i % PARTITIONS, f"k-{i % 37}".encode(), f"v-{i}".encode()
        headers, ts = (("n", str(i).encode()),), now_ms - RECORDS + i
        producer.produce(topic, value=value, key=key, partition=partition, timestamp=ts, headers=list(headers),
                         on_delivery=lambda err, _msg: errors.append(str(err)) if err else None)
        sent[partition].append((key, value, headers, ts))
        producer.poll(0)
    assert producer.flush(PRODUCE_TIMEOUT_S) == 0 and not errors, f"producing to the SASL cluster: {errors[:3]}"
    return sent


@pytest.fixture
def sasl_topic(sasl_cluster, unique) -> str:
    topic = f"secured-{unique}"
    results = ClusterAdmin("A", sasl_cluster.librdkafka_settings()).create_topics(
        [NewTopicSpec(topic, PARTITIONS, 1)])
    assert all(error is None for error in results.values()), results
    return topic


def test_scram_source_replicates_every_record_in_order(sasl_cluster, sasl_topic, clusters, run_caught_up, tmp_path):
    sent = produce_authenticated(sasl_cluster, sasl_topic)
    path = mm2_file(tmp_path / "mm2.properties", sasl_cluster, clusters.target, sasl_topic, sasl_cluster.password)

    supervisor = run_caught_up(path, tmp_path / "state")

    remote = f"A.{sasl_topic}"
    assert ClusterAdmin("B", {"bootstrap.servers": clusters.target}).topic_partitions()[remote] == PARTITIONS
    copied = read_all(clusters.target, remote, PARTITIONS)
    for p in range(PARTITIONS):
        got = [(r.key, r.value, r.headers, r.timestamp) for r in copied[p]]
        assert got == sent[p], f"partition {p} of {remote} differs from what was produced on A"
        assert all(r.timestamp_type == TIMESTAMP_CREATE_TIME for r in copied[p])
    # Only the topic's: A's `heartbeats` (written by the B->A pair, as MM2's clusterPairs do) replicate too.
    replicated = supervisor.flows["A->B"].progress.snapshot().per_partition
    assert sum(n for (topic, _), n in replicated.items() if topic == sasl_topic) == RECORDS


def test_wrong_password_fails_fast_naming_the_cluster(sasl_cluster, sasl_topic, clusters, run_caught_up, tmp_path):
    path = mm2_file(tmp_path / "mm2.properties", sasl_cluster, clusters.target, sasl_topic, "not-the-password")

    started = time.monotonic()
    with pytest.raises(SparkmirrorError) as info:
        run_caught_up(path, tmp_path / "state")
    elapsed = time.monotonic() - started

    message = str(info.value)
    assert elapsed < PROBE_TIMEOUT_S, f"waited out the probe timeout ({elapsed:.1f} s): {message}"
    assert "'A'" in message, message
    assert "authentication failed" in message.lower(), message
    assert "'A.sasl.jaas.config'" in message, message
    assert isinstance(info.value, ClusterAuthenticationError)


def test_validate_accepts_the_mm2_sasl_settings(sasl_cluster, clusters, tmp_path, unique):
    path = mm2_file(tmp_path / "mm2.properties", sasl_cluster, clusters.target, f"secured-{unique}",
                    sasl_cluster.password)

    result = CliRunner().invoke(cli, ["validate", str(path)])

    assert result.exit_code == 0, result.output
    assert "valid" in result.output


def test_plan_with_a_wrong_password_exits_5_without_showing_it(sasl_cluster, clusters, tmp_path, unique):
    path = mm2_file(tmp_path / "mm2.properties", sasl_cluster, clusters.target, f"secured-{unique}",
                    "wrong-pa55word")

    result = CliRunner().invoke(cli, ["plan", str(path)])

    assert result.exit_code == 5, result.output
    assert "cluster 'A'" in result.stderr and "authentication failed" in result.stderr
    assert "wrong-pa55word" not in result.output
