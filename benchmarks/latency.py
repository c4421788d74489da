"""Latency mode: records produced at a fixed rate while the replicator runs; target receive time minus
source CreateTime, per record.

The figures are those of the records produced after a warm-up at the same rate (`warmup_s`): a just-started
JVM runs its record path interpreted for its first seconds (measured: sparkmirror's Real-Time Mode acknowledged
below the rate for about 2 s, and MM2 and the bare producer showed their own start-up peaks), which is not the
latency of a replicator that is running. The warm-up records are measured too, as `startup_*`, so the start-up
cost stays visible.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from collections.abc import Sequence

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from benchmarks.measure import TreeSampler, idle_cpu_s_per_minute
from benchmarks.replicators import CopyIncomplete, MirrorMakerRunner, SparkmirrorRunner, count_records
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord
from sparkmirror.testing import watchdog
from sparkmirror.testing.records import produce

WARMUP_TIMEOUT_S = 180.0
DRAIN_TIMEOUT_S = 120.0
TAIL_SECONDS = 8


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list: the value at rank ceil(q% of n)."""
    index = min(len(sorted_values) - 1, max(0, math.ceil(q / 100 * len(sorted_values)) - 1))
    return sorted_values[index]


def _wait_warm(runner: MirrorMakerRunner | SparkmirrorRunner, proc: subprocess.Popen[bytes],
               target_admin: ClusterAdmin, remote: dict[str, int], warmup: int) -> None:
    deadline = time.monotonic() + WARMUP_TIMEOUT_S
    while count_records(target_admin, remote) < warmup:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise CopyIncomplete(f"{runner.name} did not replicate the warm-up records:\n{runner.log_tail()}")
        time.sleep(0.25)


def measure_latency(runner: MirrorMakerRunner | SparkmirrorRunner, source: str, target: str, topic: str,
                    partitions: int, rate_mb: float, seconds: float, record_size: int,
                    warmup_s: float, idle_s: float = 0.0) -> dict[str, float]:
    """Run the replicator on `topic`, wait for its first copies, then measure per-record end-to-end latency
    (`warmup_s` at the rate first, reported apart) and, with `idle_s`, its CPU once nothing more is produced."""
    target_admin = ClusterAdmin("target", {"bootstrap.servers": target})
    remote_topic = f"{runner.source_alias}.{topic}"
    remote = {remote_topic: partitions}
    os.sync()  # what earlier copies left for the disks to write is written before, not during, the measurement
    produce(source, topic, _warmup(partitions))
    proc = runner.start(topic)
    sampler = TreeSampler(proc.pid)
    sampler.start()
    try:
        _wait_warm(runner, proc, target_admin, remote, partitions)
        samples = _measure(target, remote_topic, source, topic, partitions, rate_mb, warmup_s + seconds,
                           record_size)
        usage = sampler.stop()
        idle = {"idle_cpu_s_per_minute": idle_cpu_s_per_minute(proc.pid, idle_s)} if idle_s > 0 else {}
    finally:
        if sampler.is_alive():
            sampler.stop()
        runner.stop()
    _check_all(runner.name, samples, source, topic, partitions)
    return {**_percentiles(samples, warmup_s), "cpu_s": usage.cpu_s, "peak_rss_mb": usage.peak_rss_mb, **idle}


def measure_direct_latency(source: str, topic: str, partitions: int, rate_mb: float, seconds: float,
                           record_size: int, warmup_s: float) -> dict[str, float]:
    """The floor under every replicator's figure: the same paced producer and measuring consumer, with the
    consumer on the source topic itself (one produce and one fetch, where a replicator adds a fetch and a
    produce), on the same loaded cores."""
    produce(source, topic, _warmup(partitions))
    samples = _measure(source, topic, source, topic, partitions, rate_mb, warmup_s + seconds, record_size)
    _check_all("direct", samples, source, topic, partitions)
    return _percentiles(samples, warmup_s)


def _warmup(partitions: int) -> list[KafkaRecord]:
    return [KafkaRecord(p, -1, b"warmup", b"warmup", (), 1, int(time.time() * 1000)) for p in range(partitions)]


Sample = tuple[int, float]  # (the record's CreateTime, its latency), ms


def _measure(read_from: str, read_topic: str, source: str, topic: str, partitions: int, rate_mb: float,
             seconds: float, record_size: int) -> list[Sample]:
    """Pace records into `topic` on `source` while reading `read_topic` on `read_from` from its start."""
    consumer = Consumer({"bootstrap.servers": read_from, "group.id": f"latency-{time.time_ns()}",
                         "enable.auto.commit": "false", "fetch.wait.max.ms": "10"})
    try:
        consumer.assign([TopicPartition(read_topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        producer, dog = watchdog.spawn(  # watched: it ends with this process, even by SIGKILL
            [sys.executable, "-m", "benchmarks.rate_producer", "--bootstrap", source, "--topic", topic,
             "--partitions", str(partitions), "--rate-mb", str(rate_mb), "--seconds", str(seconds),
             "--record-size", str(record_size)], stdout=subprocess.PIPE, stderr=None)
        try:
            return _consume(consumer, producer)
        finally:
            if producer.poll() is None:
                producer.kill()
                producer.wait()
            dog.release()
    finally:
        consumer.close()


def _check_all(name: str, samples: Sequence[Sample], source: str, topic: str, partitions: int) -> None:
    sent = count_records(ClusterAdmin("source", {"bootstrap.servers": source}), {topic: partitions}) - partitions
    if len(samples) != sent:
        raise CopyIncomplete(f"{name}: latency consumer saw {len(samples)} of {sent} records")


def _percentiles(samples: Sequence[Sample], warmup_s: float) -> dict[str, float]:
    """p50, p99 and max of the records produced after the first `warmup_s`; p99 and max of those before as
    `startup_*`."""
    first = min(created for created, _ in samples)
    cut = first + warmup_s * 1000
    measured = sorted(latency for created, latency in samples if created >= cut)
    startup = sorted(latency for created, latency in samples if created < cut)
    p99 = percentile(measured, 99)
    figures = {"records": len(measured), "p50_ms": round(percentile(measured, 50), 1),
               "p99_ms": round(p99, 1), "max_ms": round(measured[-1], 1),
               "tail_seconds": _tail_seconds([(c, lat) for c, lat in samples if c >= cut], cut, p99)}
    if startup:
        figures |= {"startup_records": len(startup), "startup_p99_ms": round(percentile(startup, 99), 1),
                    "startup_max_ms": round(startup[-1], 1)}
    return figures


def _tail_seconds(samples: Sequence[Sample], start: float, p99: float, top: int = TAIL_SECONDS) -> list[list]:
    """Where the tail is: the `top` seconds of produce time (counted from `start`) holding the most records slower
    than p99, each as [second, records over p99, slowest ms], in time order. A tail that comes in bursts a fixed
    interval apart (a Real-Time Mode epoch's end) shows here; one spread evenly shows as seconds of a record or two."""
    over: dict[int, list[float]] = {}
    for created, latency in samples:
        if latency > p99:
            over.setdefault(int((created - start) // 1000), []).append(latency)
    worst = sorted(over.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:top]
    return [[second, len(lats), round(max(lats), 1)] for second, lats in sorted(worst)]


def _consume(consumer: Consumer, producer: subprocess.Popen[bytes]) -> list[Sample]:
    samples: list[Sample] = []
    expected: int | None = None
    deadline: float | None = None
    while expected is None or len(samples) < expected:
        for msg in consumer.consume(num_messages=1000, timeout=0.05):
            if msg.error():
                raise CopyIncomplete(f"latency consumer: {msg.error()}")
            if msg.key() == b"warmup":
                continue
            created = msg.timestamp()[1]
            samples.append((created, time.time() * 1000 - created))
        if expected is None and producer.poll() is not None:
            if producer.returncode != 0:
                raise CopyIncomplete("the rate producer failed")
            expected = int(producer.stdout.read().strip())  # type: ignore[union-attr]
            deadline = time.monotonic() + DRAIN_TIMEOUT_S
        if deadline is not None and time.monotonic() > deadline:
            raise CopyIncomplete(f"latency: {len(samples)} of {expected} records arrived")
    return samples
