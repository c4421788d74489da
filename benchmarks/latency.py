"""Latency mode: records produced at a fixed rate while the replicator runs; target receive time minus
source CreateTime, per record."""

from __future__ import annotations

import subprocess
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from benchmarks.measure import TreeSampler
from benchmarks.replicators import CopyIncomplete, MirrorMakerRunner, SparkmirrorRunner, count_records
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord
from sparkmirror.testing.records import produce

WARMUP_TIMEOUT_S = 180.0
DRAIN_TIMEOUT_S = 120.0


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    index = min(len(sorted_values) - 1, max(0, int(round(q / 100 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[index]


def _wait_warm(runner: MirrorMakerRunner | SparkmirrorRunner, proc: subprocess.Popen[bytes],
               target_admin: ClusterAdmin, remote: dict[str, int], warmup: int) -> None:
    deadline = time.monotonic() + WARMUP_TIMEOUT_S
    while count_records(target_admin, remote) < warmup:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise CopyIncomplete(f"{runner.name} did not replicate the warm-up records:\n{runner.log_tail()}")
        time.sleep(0.25)


def measure_latency(runner: MirrorMakerRunner | SparkmirrorRunner, source: str, target: str, topic: str,
                    partitions: int, rate_mb: float, seconds: float, record_size: int) -> dict[str, float]:
    """Run the replicator on `topic`, warm it up, then measure per-record end-to-end latency."""
    target_admin = ClusterAdmin("target", {"bootstrap.servers": target})
    remote_topic = f"{runner.source_alias}.{topic}"
    remote = {remote_topic: partitions}
    produce(source, topic, _warmup(partitions))
    proc = runner.start(topic)
    sampler = TreeSampler(proc.pid)
    sampler.start()
    try:
        _wait_warm(runner, proc, target_admin, remote, partitions)
        latencies = _measure(target, remote_topic, source, topic, partitions, rate_mb, seconds, record_size)
        usage = sampler.stop()
    finally:
        if sampler.is_alive():
            sampler.stop()
        runner.stop()
    _check_all(runner.name, latencies, source, topic, partitions)
    return {**_percentiles(latencies), "cpu_s": usage.cpu_s, "peak_rss_mb": usage.peak_rss_mb}


def measure_direct_latency(source: str, topic: str, partitions: int, rate_mb: float, seconds: float,
                           record_size: int) -> dict[str, float]:
    """The floor under every replicator's figure: the same paced producer and measuring consumer, with the
    consumer on the source topic itself (one produce and one fetch, where a replicator adds a fetch and a
    produce), on the same loaded cores."""
    produce(source, topic, _warmup(partitions))
    latencies = _measure(source, topic, source, topic, partitions, rate_mb, seconds, record_size)
    _check_all("direct", latencies, source, topic, partitions)
    return _percentiles(latencies)


def _warmup(partitions: int) -> list[KafkaRecord]:
    return [KafkaRecord(p, -1, b"warmup", b"warmup", (), 1, int(time.time() * 1000)) for p in range(partitions)]


def _measure(read_from: str, read_topic: str, source: str, topic: str, partitions: int, rate_mb: float,
             seconds: float, record_size: int) -> list[float]:
    """Pace records into `topic` on `source` while reading `read_topic` on `read_from` from its start."""
    consumer = Consumer({"bootstrap.servers": read_from, "group.id": f"latency-{time.time_ns()}",
                         "enable.auto.commit": "false", "fetch.wait.max.ms": "10"})
    try:
        consumer.assign([TopicPartition(read_topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        producer = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.rate_producer", "--bootstrap", source, "--topic", topic,
             "--partitions", str(partitions), "--rate-mb", str(rate_mb), "--seconds", str(seconds),
             "--record-size", str(record_size)], stdout=subprocess.PIPE, text=True)
        return _consume(consumer, producer)
    finally:
        consumer.close()


def _check_all(name: str, latencies: list[float], source: str, topic: str, partitions: int) -> None:
    sent = count_records(ClusterAdmin("source", {"bootstrap.servers": source}), {topic: partitions}) - partitions
    if len(latencies) != sent:
        raise CopyIncomplete(f"{name}: latency consumer saw {len(latencies)} of {sent} records")


def _percentiles(latencies: list[float]) -> dict[str, float]:
    latencies = sorted(latencies)
    return {"records": len(latencies), "p50_ms": round(percentile(latencies, 50), 1),
            "p99_ms": round(percentile(latencies, 99), 1), "max_ms": round(latencies[-1], 1)}


def _consume(consumer: Consumer, producer: subprocess.Popen[str]) -> list[float]:
    latencies: list[float] = []
    expected: int | None = None
    deadline: float | None = None
    while expected is None or len(latencies) < expected:
        for msg in consumer.consume(num_messages=1000, timeout=0.05):
            if msg.error():
                raise CopyIncomplete(f"latency consumer: {msg.error()}")
            if msg.key() == b"warmup":
                continue
            latencies.append(time.time() * 1000 - msg.timestamp()[1])
        if expected is None and producer.poll() is not None:
            if producer.returncode != 0:
                raise CopyIncomplete("the rate producer failed")
            expected = int(producer.stdout.read().strip())  # type: ignore[union-attr]
            deadline = time.monotonic() + DRAIN_TIMEOUT_S
        if deadline is not None and time.monotonic() > deadline:
            raise CopyIncomplete(f"latency: {len(latencies)} of {expected} records arrived")
    return latencies
