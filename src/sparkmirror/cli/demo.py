"""`sparkmirror demo`: two local clusters, a sample topic on A, replication A -> B, a verdict."""

from __future__ import annotations

import random
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from sparkmirror.config.mm2 import load_config
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord, NewTopicSpec
from sparkmirror.runtime.supervisor import Supervisor
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER, LocalKafkaCluster, start_clusters
from sparkmirror.testing.records import produce

TOPIC = "orders"
PROGRESS_EVERY_S = 2.0
BATCH_RECORDS = 50_000  # several micro-batches, so progress shows while it runs

Echo = Callable[[str], None]


def sample_records(count: int, partitions: int, value_size: int, seed: int = 7) -> Iterator[KafkaRecord]:
    """Keyed records with two headers and increasing CreateTime timestamps, spread over partitions."""
    rng = random.Random(seed)  # noqa: S311 - sample payloads, not secrets
    base_ts = int(time.time() * 1000) - count
    payload = rng.randbytes(value_size)
    for i in range(count):
        headers = (("origin", b"sparkmirror-demo"), ("seq", str(i).encode()))
        yield KafkaRecord(partition=i % partitions, offset=-1, key=f"customer-{i % 997}".encode(),
                          value=payload, headers=headers, timestamp_type=1, timestamp=base_ts + i)


def _properties(a: LocalKafkaCluster, b: LocalKafkaCluster) -> str:
    return (f"clusters = A, B\nA.bootstrap.servers = {a.bootstrap_servers}\n"
            f"B.bootstrap.servers = {b.bootstrap_servers}\nA->B.enabled = true\nA->B.topics = {TOPIC}\n"
            f"{SINGLE_BROKER}sparkmirror.max.offsets.per.trigger = {BATCH_RECORDS}\n")


def _report_progress(supervisor: Supervisor, total: int, done: threading.Event, out: Echo) -> None:
    while not done.wait(PROGRESS_EVERY_S):
        for flow in supervisor.status().flows:
            snap = flow.progress
            out(f"  {snap.flow}: {snap.records:>10,} / {total:,} records copied "
                f"({snap.batches} batches, {snap.records_per_s:,.0f} records/s)")


def run_demo(records: int, partitions: int, value_size: int, out: Echo = print) -> bool:
    """Run the whole demo; True when every partition of B matches A."""
    out("starting two local Kafka clusters (A, B)...")
    t0 = time.monotonic()
    a, b = start_clusters(["A", "B"])
    out(f"  A at {a.bootstrap_servers}, B at {b.bootstrap_servers} ({time.monotonic() - t0:.1f} s)")
    try:
        with tempfile.TemporaryDirectory(prefix="sparkmirror-demo-") as work:
            return _replicate_and_compare(a, b, Path(work), records, partitions, value_size, out)
    finally:
        out("stopping local clusters")
        a.stop()
        b.stop()


def _replicate_and_compare(a: LocalKafkaCluster, b: LocalKafkaCluster, work: Path, records: int,
                           partitions: int, value_size: int, out: Echo) -> bool:
    source_admin = ClusterAdmin("A", {"bootstrap.servers": a.bootstrap_servers})
    for error in source_admin.create_topics([NewTopicSpec(TOPIC, partitions, 1)]).values():
        if error:
            raise error
    out(f"producing {records:,} records ({value_size} B values, keys, 2 headers) to A/{TOPIC} "
        f"with {partitions} partitions...")
    produce(a.bootstrap_servers, TOPIC, sample_records(records, partitions, value_size))
    config_file = work / "mm2.properties"
    config_file.write_text(_properties(a, b))
    supervisor = Supervisor(load_config(config_file), work / "state", until_caught_up=True)
    out("replicating A -> B with Spark (first batch includes Spark start-up)...")
    done = threading.Event()
    reporter = threading.Thread(target=_report_progress, args=(supervisor, records, done, out), daemon=True)
    t0 = time.monotonic()
    reporter.start()
    try:
        supervisor.start()
        supervisor.wait()
    finally:
        done.set()
        supervisor.shutdown()
    wall = time.monotonic() - t0
    snap = supervisor.status().flows[0].progress
    source = source_admin.watermarks(TOPIC, partitions)
    target = ClusterAdmin("B", {"bootstrap.servers": b.bootstrap_servers}).watermarks(f"A.{TOPIC}", partitions)
    return _print_table(source, target, snap.records, snap.bytes, snap.elapsed_s, wall, out)


def _print_table(source: dict[int, tuple[int, int]], target: dict[int, tuple[int, int]], copied: int,
                 copied_bytes: int, elapsed: float, wall: float, out: Echo) -> bool:
    out("")
    out(f"{'partition':>9} | {'A/' + TOPIC:>12} | {'B/A.' + TOPIC:>12} | result")
    out(f"{'-' * 9}-+-{'-' * 12}-+-{'-' * 12}-+-------")
    ok = True
    for p in sorted(source):
        s, t = source[p][1] - source[p][0], target[p][1] - target[p][0]
        same = s == t
        ok &= same
        out(f"{p:>9} | {s:>12,} | {t:>12,} | {'ok' if same else 'DIFFERS'}")
    total_s = sum(h - lo for lo, h in source.values())
    total_t = sum(h - lo for lo, h in target.values())
    out(f"{'total':>9} | {total_s:>12,} | {total_t:>12,} | {'ok' if ok else 'DIFFERS'}")
    out("")
    rate = copied / elapsed if elapsed > 0 else 0.0
    out(f"throughput: {rate:,.0f} records/s, {copied_bytes / elapsed / 1e6 if elapsed else 0:,.1f} MB/s "
        f"over {elapsed:.1f} s of micro-batches ({copied:,} records); {wall:.1f} s including Spark start-up")
    out("result: every partition matches" if ok else "result: partitions DIFFER")
    return ok
