"""How precisely each replicator lets a consumer group fail over: sparkmirror against real MirrorMaker 2.

Each replicator gets its own pair of local clusters A and B (four brokers in all, started together), the
same source data in topic `bench` on A, and the same settings: `emit.checkpoints.interval.seconds = 1`,
`tasks.max = --cores` and otherwise defaults (MM2's `offset.lag.max` is its default, 100). Both run at
the same time. The group is created at offset 0 before the replicators start (MM2 lists groups only every
`refresh.groups.interval.seconds`, default 600). Once B holds the copy, the group is moved forward through
--samples positions per partition, from 0 to the end. After each commit (a consumer that processed exactly
that many records), the checkpoint the replicator writes for it on B is read with
`sparkmirror.client.read_checkpoints` (it reads MM2's checkpoints too) and compared with the truth, found
by matching the values on A and B:

- re-reads: records on B before the copy of the first unprocessed record that the consumer would process
  again after failing over to the checkpoint's downstream offset;
- misses: records from that copy on that the consumer would skip;
- exact: neither (anywhere between the copy of the last processed record and that of the first
  unprocessed one, where only transaction markers or copies of aborted records lie);
- no checkpoint: the partition has no checkpoint of the group at all (the consumer would start at its
  auto.offset.reset).

MM2 writes a new checkpoint only when the translated offset moves, so a commit whose translation did not
move gets none: after --wait-s the latest checkpoint is taken as what a failover would use, and the sample
is counted as "stale". The time from commit to checkpoint visible is taken from a consumer following the
checkpoints topic, for each position that moved and got a checkpoint of its own ("timed").

With --transactional, one producer per partition writes transactions of 1..5 records and aborts about one
in five (after the records are on the log). Both replicators read the source with the Java default
`isolation.level = read_uncommitted`, so the aborted records are copied to B as ordinary records.

    python -m benchmarks.failover                   # 4 partitions x 20,000 records, 20 positions each
    python -m benchmarks.failover --transactional   # the same records, in transactions with gaps
    python -m benchmarks.failover --smoke           # tiny sizes, 1 to 3 minutes
"""

from __future__ import annotations

import argparse
import bisect
import logging
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from benchmarks.failover_data import PREFIX, QUIET, TOPIC, load, run_all
from benchmarks.failover_report import (
    REPLICATORS,
    Position,
    Result,
    report,
    sample_counts,
    summary,
)
from benchmarks.replicators import start_sparkmirror, stop_process_group, tail
from sparkmirror import client
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.offsets.codec import decode_checkpoint
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER, LocalKafkaCluster, start_clusters
from sparkmirror.testing.mirror_maker import CONNECT_SINGLE_BROKER, LocalMirrorMaker
from sparkmirror.testing.records import read_all

REMOTE = f"A.{TOPIC}"
CHECKPOINTS = "A.checkpoints.internal"  # on B, for both replicators
GROUP = "bench-failover-app"
MM2_HEAP = ("256m", "1g")
SMOKE = {"partitions": 2, "records": 500, "samples": 5}
POLL_S = 0.02
CHECKPOINT_INTERVAL_S = 1
T = TypeVar("T")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def properties(source: str, target: str, cores: int, extra: str = "") -> str:
    """The one configuration both replicators get: A->B for `bench`, checkpoints every second."""
    return (f"clusters = A, B\nA.bootstrap.servers = {source}\nB.bootstrap.servers = {target}\n"
            f"A->B.enabled = true\nA->B.topics = {TOPIC}\nB->A.enabled = false\n"
            f"emit.checkpoints.interval.seconds = {CHECKPOINT_INTERVAL_S}\ntasks.max = {cores}\n{SINGLE_BROKER}{extra}")


class MirrorMaker:
    """Real MM2, dedicated mode, driving only cluster B (so nothing it does touches A but its offset syncs)."""

    name = "mm2"

    def __init__(self, source: str, target: str, cores: int, _workdir: Path) -> None:
        self._mm = LocalMirrorMaker(properties(source, target, cores, CONNECT_SINGLE_BROKER), clusters=("B",),
                                    name=f"{PREFIX.removeprefix('sparkmirror-')}-mm2", heap=MM2_HEAP)

    def start(self) -> None:
        self._mm.start()

    @property
    def config(self) -> Path:
        assert self._mm.dir is not None
        return self._mm.dir / "mm2.properties"

    def exited(self) -> int | None:
        return self._mm.process.poll() if self._mm.process else None

    def log_tail(self) -> str:
        return self._mm.log_tail()

    def stop(self) -> None:
        self._mm.stop()


class Sparkmirror:
    """`sparkmirror run` as its own process, Spark on `local[cores]`."""

    name = "sparkmirror"

    def __init__(self, source: str, target: str, cores: int, workdir: Path) -> None:
        self._dir = workdir / "sparkmirror"
        self._dir.mkdir(parents=True)
        self.config = self._dir / "mm2.properties"
        self.config.write_text(properties(source, target, cores, f"spark.master = local[{cores}]\n"))
        self._log = self._dir / "sparkmirror.log"
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self._proc = start_sparkmirror(self.config, self._dir, self._log)

    def exited(self) -> int | None:
        return self._proc.poll() if self._proc else None

    def log_tail(self) -> str:
        return tail(self._log)

    def stop(self) -> None:
        stop_process_group(self._proc)


Replicator = MirrorMaker | Sparkmirror


# --- measurement ---------------------------------------------------------------------------------------

def commit(bootstrap: str, offsets: dict[int, int]) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "enable.auto.commit": "false",
                         "logger": QUIET})
    try:
        consumer.commit(offsets=[TopicPartition(TOPIC, p, o) for p, o in offsets.items()], asynchronous=False)
    finally:
        consumer.close()


def wait_until(what: str, check: Callable[[], bool], timeout_s: float, rep: Replicator, poll_s: float = 0.5) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if rep.exited() is not None:
            raise RuntimeError(f"{rep.name} exited ({rep.exited()}) while waiting for {what}:\n{rep.log_tail()}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{rep.name}: no {what} within {timeout_s:.0f} s:\n{rep.log_tail()}")
        time.sleep(poll_s)


class CheckpointTail:
    """A consumer that follows `A.checkpoints.internal` on B and notes when each of GROUP's checkpoints for
    the remote topic arrives: commit-to-visible times to about POLL_S, where one read_checkpoints() takes
    about half a second."""

    def __init__(self, target: str) -> None:
        self._consumer = Consumer({"bootstrap.servers": target, "group.id": f"{PREFIX}-tail-{time.time_ns()}",
                                   "enable.auto.commit": "false", "isolation.level": "read_committed",
                                   "fetch.wait.max.ms": 10, "logger": QUIET})
        self._consumer.assign([TopicPartition(CHECKPOINTS, 0, OFFSET_BEGINNING)])
        self._latest: dict[int, tuple[int, float]] = {}  # partition -> (upstream offset, seen at)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for msg in self._consumer.consume(1000, timeout=0.02):
                if msg.error():
                    continue
                cp = decode_checkpoint(msg.key(), msg.value())
                if cp.group == GROUP and cp.topic == REMOTE:
                    with self._lock:
                        self._latest[cp.partition] = (cp.upstream_offset, time.monotonic())

    def reached(self, offsets: dict[int, int]) -> bool:
        with self._lock:
            return all(self._latest.get(p, (None,))[0] == o for p, o in offsets.items())

    def seen_at(self, partition: int, upstream: int) -> float | None:
        """When the checkpoint of `partition` at `upstream` arrived, if it is the latest one."""
        with self._lock:
            offset, seen = self._latest.get(partition, (None, 0.0))
            return seen if offset == upstream else None

    def __enter__(self) -> CheckpointTail:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
        self._consumer.close()


def _counts(admin: ClusterAdmin, topic: str, partitions: int) -> dict[int, int] | None:
    if topic not in admin.topic_partitions():
        return None
    return {p: high - low for p, (low, high) in admin.watermarks(topic, partitions).items()}


def wait_caught_up(rep: Replicator, target: str, partitions: int, committed: int, timeout_s: float) -> None:
    """Until B's copy holds at least the committed records of every partition and stopped growing for 3 s,
    and the checkpoints topic exists."""
    admin = ClusterAdmin("B", {"bootstrap.servers": target})
    last: list[object] = [None, time.monotonic()]

    def done() -> bool:
        counts = _counts(admin, REMOTE, partitions)
        if counts != last[0]:
            last[:] = [counts, time.monotonic()]
            return False
        return (counts is not None and min(counts.values()) >= committed and time.monotonic() - last[1] >= 3
                and CHECKPOINTS in admin.topic_partitions())

    wait_until(f"full copy of {TOPIC} on B", done, timeout_s, rep)


def measure(rep: Replicator, source: str, target: str, args: argparse.Namespace) -> Result:
    result = Result(rep.name)
    upstream = read_all(source, TOPIC, args.partitions)
    remote = read_all(target, REMOTE, args.partitions)
    ends = ClusterAdmin("B", {"bootstrap.servers": target}).watermarks(REMOTE, args.partitions)
    truth: dict[int, tuple[list[int], list[int], list[int], list[int]]] = {}
    for p in range(args.partitions):
        where = {r.value: r.offset for r in remote[p]}
        copies = [where.get(r.value) for r in upstream[p]]
        if None in copies or copies != sorted(copies) or len(where) != len(remote[p]):
            raise RuntimeError(f"{rep.name}: {REMOTE}-{p} on B is not an in-order, duplicate-free copy of "
                               f"{TOPIC}-{p} ({len(remote[p])} records on B, {len(upstream[p])} on A)")
        result.aborted_on_target += sum(1 for r in remote[p] if r.value and r.value.startswith(b"aborted-"))
        # A consumer that processed `count` records resumes exactly anywhere in [after the copy of the last
        # processed record, at the copy of the first unprocessed one]: only markers or aborted copies between.
        truth[p] = ([r.offset for r in upstream[p]], [r.offset for r in remote[p]],
                    [0, *(c + 1 for c in copies)], [*copies, ends[p][1]])  # type: ignore[assignment]
    result.source_records = sum(len(v) for v in upstream.values())
    result.remote_records = sum(len(v) for v in remote.values())
    previous = dict.fromkeys(range(args.partitions), 0)  # committed before the replicator started
    jitter = random.Random(args.seed)  # noqa: S311 - benchmark timing
    with CheckpointTail(target) as tail:
        for n, count in enumerate(sample_counts(args.records, args.samples)):
            offsets = {p: (truth[p][0][count - 1] + 1 if count else 0) for p in range(args.partitions)}
            before, previous = previous, offsets
            # A commit right after the previous checkpoint was seen would always land at the same phase of
            # the checkpoint interval; a random pause spreads the commits over it.
            time.sleep(jitter.uniform(0, CHECKPOINT_INTERVAL_S))
            commit(source, offsets)
            committed_at = time.monotonic()
            stale = False
            while not tail.reached(offsets):
                if rep.exited() is not None:
                    raise RuntimeError(f"{rep.name} exited ({rep.exited()}):\n{rep.log_tail()}")
                if time.monotonic() - committed_at > args.wait_s:
                    stale = True
                    break
                time.sleep(POLL_S)
            for p, o in offsets.items():  # per partition that moved and got a checkpoint of its own
                seen = tail.seen_at(p, o)
                if o != before[p] and seen is not None:
                    result.visible_s.append(seen - committed_at)
            got = {cp.partition: cp for cp in client.read_checkpoints(rep.config, "A", "B", GROUP).values()
                   if cp.topic == REMOTE}
            if not stale and any(got[p].upstream_offset != o for p, o in offsets.items()):
                raise RuntimeError(f"{rep.name}: read_checkpoints gives {got}, the topic's tail gave {offsets}")
            for p, upstream_offset in offsets.items():
                if p not in got:  # the replicator could not translate any commit of this partition yet
                    result.positions.append(Position(p, count, upstream_offset, None, 0, 0, False))
                    continue
                _, b_offsets, lows, highs = truth[p]
                down = got[p].downstream_offset
                rereads = bisect.bisect_left(b_offsets, lows[count]) - bisect.bisect_left(b_offsets, down)
                misses = bisect.bisect_left(b_offsets, down) - bisect.bisect_left(b_offsets, highs[count])
                fresh = not stale or got[p].upstream_offset == upstream_offset
                result.positions.append(Position(p, count, upstream_offset, down, max(0, rereads), max(0, misses),
                                                 not fresh))
            if n % 5 == 0 or stale:
                log(f"{rep.name}: {count} processed per partition -> checkpoints "
                    f"{ {p: (got[p].upstream_offset, got[p].downstream_offset) for p in sorted(got)} }"
                    f"{' (stale)' if stale else ''}")
    result.offset_syncs = sum(1 for s in client.read_offset_syncs(rep.config, "A", "B") if s.topic == TOPIC)
    return result


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument("--records", type=int, default=20_000, help="committed records per partition")
    p.add_argument("--samples", type=int, default=20, help="positions per partition, 0 and the end included")
    p.add_argument("--record-size", type=int, default=100, help="value bytes")
    p.add_argument("--transactional", action="store_true",
                   help="write in transactions of 1..5 records per partition, about one in five aborted")
    p.add_argument("--cores", type=int, default=2, help="sparkmirror local[N] and tasks.max of both")
    p.add_argument("--wait-s", type=float, default=6.0,
                   help="how long to wait for a checkpoint of a commit before taking the latest one")
    p.add_argument("--timeout-s", type=float, default=300.0, help="start-up and copy timeout")
    p.add_argument("--replicators", default=",".join(REPLICATORS))
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--smoke", action="store_true", help=f"tiny sizes: {SMOKE}")
    args = p.parse_args(argv)
    if args.smoke:
        for key, value in SMOKE.items():
            if getattr(args, key) == p.get_default(key):
                setattr(args, key, value)
    args.replicators = [r for r in args.replicators.split(",") if r]
    if set(args.replicators) - set(REPLICATORS):
        p.error(f"replicators are {', '.join(REPLICATORS)}")
    return args


def _measure_one(rep: Replicator, source: str, target: str, args: argparse.Namespace) -> Result:
    wait_caught_up(rep, target, args.partitions, args.records, args.timeout_s)
    log(f"{rep.name}: copy complete; sampling")
    result = measure(rep, source, target, args)
    log(f"{rep.name}: {summary(result)}")
    return result


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("sparkmirror.librdkafka").setLevel(logging.CRITICAL)
    started = time.monotonic()
    names = [f"{PREFIX.removeprefix('sparkmirror-')}-{r}-{side}" for r in args.replicators for side in "AB"]
    log(f"starting {len(names)} clusters")
    clusters: list[LocalKafkaCluster] = start_clusters(names)
    reps: list[Replicator] = []
    try:
        with tempfile.TemporaryDirectory(prefix=f"{PREFIX}-") as work:
            pairs = [(clusters[2 * i].bootstrap_servers, clusters[2 * i + 1].bootstrap_servers)
                     for i in range(len(args.replicators))]
            t0 = time.monotonic()
            infos = run_all([lambda source=source: load(source, args) for source, _ in pairs])
            log(f"loaded {args.partitions} x {args.records:,} records into each A in {time.monotonic() - t0:.1f} s "
                f"{infos[0] or ''}")
            for name, (source, target) in zip(args.replicators, pairs, strict=True):
                # The group exists before the replicator starts: MM2 lists groups only every
                # refresh.groups.interval.seconds (default 600 s). It starts at 0 and only moves forward.
                commit(source, dict.fromkeys(range(args.partitions), 0))
                cls = MirrorMaker if name == "mm2" else Sparkmirror
                reps.append(cls(source, target, args.cores, Path(work)))
            for rep in reps:
                rep.start()
            log("replicators started: " + ", ".join(r.name for r in reps))
            measured = run_all([lambda rep=rep, pair=pair: _measure_one(rep, *pair, args)
                                 for rep, pair in zip(reps, pairs, strict=True)])
            results = {r.name: r for r in measured}
            for rep in reps:
                rep.stop()
    finally:
        for rep in reps:
            rep.stop()
        for c in clusters:
            c.stop()
    report({n: results[n] for n in args.replicators}, args)
    log(f"total {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
