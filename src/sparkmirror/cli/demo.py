"""`sparkmirror demo`: two local clusters, a sample topic on A, replication A -> B, a verdict."""

from __future__ import annotations

import random
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sparkmirror.cli.progress_display import ProgressDisplay, bar_line
from sparkmirror.config.mm2 import load_config
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord, NewTopicSpec
from sparkmirror.runtime.supervisor import Supervisor
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER, LocalKafkaCluster, start_clusters
from sparkmirror.testing.records import produce

TOPIC = "orders"
PROGRESS_EVERY_S = 2.0
BATCH_RECORDS = 50_000  # several micro-batches, so progress shows while it runs
RATE_AFTER_S = 1.0

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
    """Plain progress lines, where no progress display can be drawn (a pipe, CI, JSON logs)."""
    while not done.wait(PROGRESS_EVERY_S):
        for flow in supervisor.status().flows:
            snap = flow.progress
            out(f"  {snap.flow}: {snap.records:>10,} / {total:,} records copied "
                f"({snap.batches} batches, {snap.records_per_s:,.0f} records/s)")


@dataclass
class _Screen:
    """What the progress display shows: the step under way, then a bar of records copied out of produced."""

    total: int
    step: str = "starting"
    since: float = field(default_factory=time.monotonic)
    until: float | None = None  # when the step ended: its time stops there
    supervisor: Supervisor | None = None

    def begin(self, step: str) -> None:
        self.step, self.since, self.until = step, time.monotonic(), None

    def end(self) -> None:
        self.until = time.monotonic()

    def lines(self) -> list[str]:
        took = f"({(self.until or time.monotonic()) - self.since:.0f} s)"
        if self.supervisor is None:
            return [f"{self.step} {took}"]
        snap = self.supervisor.status().flows[0].progress
        rate = snap.records_per_s if snap.elapsed_s >= RATE_AFTER_S else 0.0  # one batch says little
        return [f"{bar_line(snap.records, self.total, rate)}  {took}"]


@dataclass(frozen=True)
class _Outcome:
    source: dict[int, tuple[int, int]]
    target: dict[int, tuple[int, int]]
    copied: int
    copied_bytes: int
    elapsed: float
    wall: float


def run_demo(records: int, partitions: int, value_size: int, out: Echo = print) -> bool:
    """Run the whole demo; True when every partition of B matches A.

    On a terminal a progress display replaces the progress lines and keeps INFO logs in a file of the
    demo's temporary folder; the per-partition table is printed once the display has ended.
    """
    screen = _Screen(records)
    with tempfile.TemporaryDirectory(prefix="sparkmirror-demo-") as work:
        log_file = Path(work) / "sparkmirror-demo.log"
        with ProgressDisplay(screen.lines, interval_s=PROGRESS_EVERY_S / 4, log_file=log_file) as display:
            if display.active:
                display.print_above("(the log file is removed when the demo ends)")
            say = display.print_above if display.active else out
            outcome = _on_clusters(Path(work), records, partitions, value_size, screen,
                                   say, None if display.active else out)
    return _print_table(outcome, out)


def _on_clusters(work: Path, records: int, partitions: int, value_size: int, screen: _Screen, say: Echo,
                 progress_lines: Echo | None) -> _Outcome:
    screen.begin("starting two local Kafka clusters (A, B)")
    say("starting two local Kafka clusters (A, B)...")
    t0 = time.monotonic()
    a, b = start_clusters(["A", "B"])
    say(f"  A at {a.bootstrap_servers}, B at {b.bootstrap_servers} ({time.monotonic() - t0:.1f} s)")
    try:
        return _replicate(a, b, work, records, partitions, value_size, screen, say, progress_lines)
    finally:
        say("stopping local clusters")
        a.stop()
        b.stop()


def _replicate(a: LocalKafkaCluster, b: LocalKafkaCluster, work: Path, records: int, partitions: int,
               value_size: int, screen: _Screen, say: Echo, progress_lines: Echo | None) -> _Outcome:
    source_admin = ClusterAdmin("A", {"bootstrap.servers": a.bootstrap_servers})
    for error in source_admin.create_topics([NewTopicSpec(TOPIC, partitions, 1)]).values():
        if error:
            raise error
    screen.begin(f"producing {records:,} records to A/{TOPIC}")
    say(f"producing {records:,} records ({value_size} B values, keys, 2 headers) to A/{TOPIC} "
        f"with {partitions} partitions...")
    produce(a.bootstrap_servers, TOPIC, sample_records(records, partitions, value_size))
    config_file = work / "mm2.properties"
    config_file.write_text(_properties(a, b))
    supervisor = Supervisor(load_config(config_file), work / "state", until_caught_up=True)
    say("replicating A -> B with Spark (first batch includes Spark start-up)...")
    screen.begin("replicating A -> B")
    screen.supervisor = supervisor
    done = threading.Event()
    t0 = time.monotonic()
    if progress_lines is not None:
        threading.Thread(target=_report_progress, args=(supervisor, records, done, progress_lines),
                         daemon=True).start()
    try:
        supervisor.start()
        supervisor.wait()
    finally:
        done.set()
        screen.end()
        supervisor.shutdown()
    wall = time.monotonic() - t0
    snap = supervisor.status().flows[0].progress
    source = source_admin.watermarks(TOPIC, partitions)
    target = ClusterAdmin("B", {"bootstrap.servers": b.bootstrap_servers}).watermarks(f"A.{TOPIC}", partitions)
    return _Outcome(source, target, snap.records, snap.bytes, snap.elapsed_s, wall)


def _print_table(outcome: _Outcome, out: Echo) -> bool:
    source, target, copied, elapsed = outcome.source, outcome.target, outcome.copied, outcome.elapsed
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
    out(f"throughput: {rate:,.0f} records/s, {outcome.copied_bytes / elapsed / 1e6 if elapsed else 0:,.1f} MB/s "
        f"over {elapsed:.1f} s of micro-batches ({copied:,} records); {outcome.wall:.1f} s including Spark start-up")
    out("result: every partition matches" if ok else "result: partitions DIFFER")
    return ok
