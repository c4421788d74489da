"""How fast a running replicator picks up new topics, and how long its running topics pause meanwhile.

For each replicator (real MM2 and sparkmirror, same brokers, same `refresh.topics.interval.seconds`):
a steady producer writes to one topic that is already replicated; then, one at a time, new topics are
created and filled with records. Printed per replicator: the time from creating a topic to all of its
records on the target (pickup), and the largest gap between arrivals of the steady topic's records on
the target around each change, next to the largest gap in a quiet period of the same length.

    python -m benchmarks.topic_changes --new-topics 3 --refresh-s 5
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

from confluent_kafka import TIMESTAMP_CREATE_TIME, Consumer

from benchmarks.replicators import MirrorMakerRunner, SparkmirrorRunner
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord, NewTopicSpec
from sparkmirror.testing.kafka_cluster import start_clusters
from sparkmirror.testing.records import produce

NEW_TOPIC_RECORDS = 200


def _records(tag: str, n: int) -> list[KafkaRecord]:
    now = int(time.time() * 1000)
    return [KafkaRecord(0, -1, None, f"{tag}-{i}".encode(), (), TIMESTAMP_CREATE_TIME, now) for i in range(n)]


class _Steady:
    """A producer writing 5 records every 20 ms, and a consumer noting when they reach the target."""

    def __init__(self, source: str, target: str, topic: str, remote: str) -> None:
        self.arrivals: list[float] = []
        self._stop = threading.Event()
        self._consumer = Consumer({"bootstrap.servers": target, "group.id": f"steady-{time.time_ns()}",
                                   "auto.offset.reset": "earliest", "topic.metadata.refresh.interval.ms": "500"})
        self._consumer.subscribe([remote])
        self._threads = [threading.Thread(target=self._produce, args=(source, topic), daemon=True),
                         threading.Thread(target=self._consume, daemon=True)]
        for t in self._threads:
            t.start()

    def _produce(self, source: str, topic: str) -> None:
        i = 0
        while not self._stop.is_set():
            i += produce(source, topic, _records(f"s{i}", 5))
            time.sleep(0.02)

    def _consume(self) -> None:
        while not self._stop.is_set():
            for msg in self._consumer.consume(500, timeout=0.1):
                if not msg.error():
                    self.arrivals.append(time.monotonic())

    def largest_gap(self, start: float, end: float) -> float:
        times = [t for t in self.arrivals if start <= t <= end]
        return max((b - a for a, b in zip(times, times[1:], strict=False)), default=float("nan"))

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(10)
        self._consumer.close()


def _count(admin: ClusterAdmin, topic: str) -> int:
    if topic not in admin.topic_partitions():
        return 0
    return sum(high - low for low, high in admin.watermarks(topic, 1).values())


def measure(runner: MirrorMakerRunner | SparkmirrorRunner, source: str, target: str, new_topics: int,
            refresh_s: int, timeout_s: float) -> dict[str, object]:
    prefix = f"tc-{runner.name}-{time.monotonic_ns() % 10**6}"
    source_admin, target_admin = ClusterAdmin("source", {"bootstrap.servers": source}), \
        ClusterAdmin("target", {"bootstrap.servers": target})
    source_admin.create_topics([NewTopicSpec(f"{prefix}-steady", 1, 1)])
    remote = f"{runner.source_alias}.{prefix}-steady"
    runner.start(f"{prefix}-.*", f"refresh.topics.interval.seconds = {refresh_s}\n")
    steady = _Steady(source, target, f"{prefix}-steady", remote)
    pickups, gaps, quiet = [], [], []
    try:
        deadline = time.monotonic() + timeout_s
        while not steady.arrivals:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{runner.name}: the steady topic never arrived:\n{runner.log_tail()}")
            time.sleep(0.2)
        time.sleep(3)
        for i in range(new_topics):
            quiet_start = time.monotonic()
            time.sleep(refresh_s + 2)
            quiet.append(steady.largest_gap(quiet_start, time.monotonic()))
            topic = f"{prefix}-new{i}"
            created = time.monotonic()
            source_admin.create_topics([NewTopicSpec(topic, 1, 1)])
            produce(source, topic, _records(topic, NEW_TOPIC_RECORDS))
            while _count(target_admin, f"{runner.source_alias}.{topic}") < NEW_TOPIC_RECORDS:
                if time.monotonic() > created + timeout_s:
                    raise RuntimeError(f"{runner.name}: {topic} not replicated in {timeout_s:.0f} s")
                time.sleep(0.1)
            pickups.append(time.monotonic() - created)
            time.sleep(2)
            gaps.append(steady.largest_gap(created, time.monotonic()))
    finally:
        steady.stop()
        runner.stop()
    return {"pickup_s": [round(x, 2) for x in pickups], "steady_gap_s": [round(x, 2) for x in gaps],
            "quiet_gap_s": [round(x, 2) for x in quiet]}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--new-topics", type=int, default=3)
    p.add_argument("--refresh-s", type=int, default=5, help="refresh.topics.interval.seconds for both")
    p.add_argument("--cores", type=int, default=2)
    p.add_argument("--timeout-s", type=float, default=300)
    p.add_argument("--replicators", default="mm2,sparkmirror")
    args = p.parse_args(argv)
    clusters = start_clusters(["tc-source", "tc-target"])
    try:
        source, target = (c.bootstrap_servers for c in clusters)
        results = {}
        with tempfile.TemporaryDirectory(prefix="topic-changes-") as work:
            for name in args.replicators.split(","):
                cls = MirrorMakerRunner if name == "mm2" else SparkmirrorRunner
                runner = cls(source, target, args.cores, Path(work))
                print(f"[{time.strftime('%H:%M:%S')}] {name}: {args.new_topics} new topics, refresh "
                      f"{args.refresh_s} s", flush=True)
                results[name] = measure(runner, source, target, args.new_topics, args.refresh_s, args.timeout_s)
                print(f"  {name}: {results[name]}", flush=True)
        print("\n| replicator | median pickup s | median largest gap of a running topic s | quiet gap s |")
        print("|---|---|---|---|")
        for name, r in results.items():
            print(f"| {name} | {statistics.median(r['pickup_s']):.2f} | {statistics.median(r['steady_gap_s']):.2f} "
                  f"| {statistics.median(r['quiet_gap_s']):.2f} |")
        if {"mm2", "sparkmirror"} <= results.keys():
            sm, mm = (statistics.median(results[n]["pickup_s"]) for n in ("sparkmirror", "mm2"))
            ratio = sm / mm
            print(f"\npickup time ratio sparkmirror / mm2: {ratio:.2f}")
    finally:
        for c in clusters:
            c.stop()


if __name__ == "__main__":
    main()
