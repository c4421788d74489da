"""Takeover trial: how fast a standby takes over a replicator killed with kill -9, and how many records each
kill copies twice; MM2 on a Connect cluster in distributed mode beside sparkmirror's group of processes.

Two local clusters. Each replicator in turn (never two at once) copies a topic of its own that a rate producer
(benchmarks/rate_producer.py --ids: --rate records/s of --record-size bytes, record i in partition i % P with
its id in the `bench-seq` header and its CreateTime) writes to during the whole of its turn:

- mm2-distributed: --mm2-workers Connect workers of one group on the target running MM2's three connectors for
  the flow (tasks.max --mm2-tasks), with `scheduled.rebalance.max.delay.ms` at Connect's default (300000) or
  each value of --mm2-rebalance-delay-ms (one row each); the worker to kill is the one Connect's
  `/connectors/MirrorSourceConnector/status` names for the most source tasks;
- sparkmirror: --sparkmirror-processes `sparkmirror run` processes on one properties file, each with its own
  state dir and metrics port; the one to kill is the first whose `/api/status` reports the flow `running`.
  Until "one writer per flow" lands, every process copies: duplicates are expected.

For each of --kills kills: once the copy runs (every partition of the remote topic holds a record created after
the start, or after the last takeover), let it run for the kill's settle delay (--settle-s plus a seeded jitter up
to --jitter-s, the same for every replicator; by default 60 to 120 s, so that each kill lands at a random point of
MM2's 60 s offset commit cycle after at least one commit, as a kill of a long-running copy would), find the member
running the copy, kill -9 its process group, note the remote topic's end offsets once it is gone, then watch the
remote topic: takeover_s is the time from the kill until every partition holds a record created after the killed
process was gone (only a successor can have copied it); resumed_s until the first record written after the kill
(re-sends included); moved_s until the replicator's own status says another member runs the copy. Then the killed
member is started again (so there are always N) and waits as a standby. After the last kill the copy runs for
--settle-s more, then the producer stops, the copy finishes, the replicator stops cleanly and the whole remote
topic is read back: records lost (must be 0) and duplicates, each charged to the kill after which it was written
(kill_analysis).

    python -m benchmarks.takeover_trial                                   # both, 10 kills each
    python -m benchmarks.takeover_trial --only mm2 --kills 3 --mm2-rebalance-delay-ms 10000
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from confluent_kafka import KafkaException

from benchmarks.kill_analysis import analyse, summary
from benchmarks.kill_events import KILL
from benchmarks.kill_processes import leftovers
from benchmarks.run import RESULTS, log, machine
from benchmarks.takeover_figures import COLUMNS, markdown, takeover_figures
from benchmarks.takeover_subjects import Mm2Distributed, Runner, SparkmirrorGroup
from benchmarks.takeover_watch import Probe, RemoteWatch
from sparkmirror.errors import SparkmirrorError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import NewTopicSpec
from sparkmirror.testing import watchdog
from sparkmirror.testing.connect_distributed import DEFAULT_REBALANCE_DELAY_MS
from sparkmirror.testing.kafka_cluster import start_clusters

REPLICATORS = ("mm2", "sparkmirror")
POLL_S = 0.1
STATUS_EVERY_S = 1.0  # how often the replicator's own status is asked during a takeover
RUNNER_TIMEOUT_S = 60.0  # to find the member running the copy once it copies
QUIET_S = 30.0  # the final copy: this long without a new record on the target while ids are missing: give up
Subject = Mm2Distributed | SparkmirrorGroup


class TrialFailed(RuntimeError):
    """A trial that ended in an error, with the kills it had made by then."""

    def __init__(self, message: str, events: list[dict[str, object]]) -> None:
        super().__init__(message)
        self.events = events


class RateProducer:
    """benchmarks/rate_producer.py --ids as a watched process: started, then stopped with SIGTERM, which makes
    it wait for every acknowledgement and print how many records it sent."""

    def __init__(self, bootstrap: str, topic: str, args: argparse.Namespace) -> None:
        rate_mb = args.rate * args.record_size / 1e6
        self.proc, self._dog = watchdog.spawn(
            [sys.executable, "-m", "benchmarks.rate_producer", "--bootstrap", bootstrap, "--topic", topic,
             "--partitions", str(args.partitions), "--rate-mb", str(rate_mb), "--seconds", "1e9",
             "--record-size", str(args.record_size), "--seed", str(args.seed), "--ids"],
            stdout=subprocess.PIPE, stderr=None)

        self.stopped = False

    def check(self) -> None:
        if not self.stopped and self.proc.poll() is not None:
            raise RuntimeError(f"the rate producer exited ({self.proc.returncode})")

    def stop(self) -> int:
        """Stop producing; returns the records sent (ids 0 .. n - 1, every one acknowledged)."""
        self.check()
        self.stopped = True
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=120)
        self._dog.release()
        if self.proc.returncode != 0:
            raise RuntimeError(f"the rate producer failed ({self.proc.returncode})")
        return int(out.strip())

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._dog.release()


class Turn:
    """One replicator's turn: its subject, the producer, the watch of its remote topic and the checks that every
    process that should run still does."""

    def __init__(self, subject: Subject, producer: RateProducer, args: argparse.Namespace) -> None:
        self.subject, self.producer, self.args = subject, producer, args
        self.watch: RemoteWatch | None = None
        self.down: set[int] = set()  # members killed and not yet started again

    def check(self) -> None:
        self.producer.check()
        for k, alive in enumerate(self.subject.alive()):
            if not alive and k not in self.down:
                raise RuntimeError(f"{self.subject.member_name(k)} exited:\n{self.subject.log_tail(k)}")

    def wait(self, done: Callable[[], bool], timeout_s: float, what: str) -> float:
        """Poll the watch until `done()`; returns the seconds it took, raises after `timeout_s`."""
        started = time.monotonic()
        assert self.watch is not None
        while not done():
            self.watch.poll(POLL_S)
            self.check()
            if time.monotonic() - started > timeout_s:
                raise RuntimeError(f"{self.subject.name}: {what} not within {timeout_s:.0f} s")
        return time.monotonic() - started

    def pause(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        self.wait(lambda: time.monotonic() >= deadline, seconds + 60, "a pause")

    def copying_since(self, wall: float) -> float:
        """Wait until every partition holds a record created after `wall` (time.time()); returns seconds."""
        assert self.watch is not None
        log_ = self.watch.log
        return self.wait(lambda: log_.all_newer_than(int(wall * 1000)), self.args.timeout_s,
                         "records created after the last start on every partition")


def _remote_topic_ready(target: str, topic: str, partitions: int, turn: Turn, timeout_s: float) -> None:
    admin = ClusterAdmin("target", {"bootstrap.servers": target})
    started = time.monotonic()
    while admin.topic_partitions().get(topic, 0) < partitions:
        turn.check()
        if time.monotonic() - started > timeout_s:
            raise RuntimeError(f"{turn.subject.name}: remote topic {topic} not created within {timeout_s:.0f} s")
        time.sleep(0.5)


def _find_runner(turn: Turn) -> Runner:
    """The member running the copy, as the replicator's own status says (asked until one is named)."""
    found: list[Runner] = []

    def look() -> bool:
        runner = turn.subject.runner()
        found.extend([runner] if runner is not None else [])
        return bool(found)

    turn.wait(look, RUNNER_TIMEOUT_S, "a member reported as running the copy")
    return found[0]


def _kill(turn: Turn, copying_since: float, delay_s: float, timeout_s: float,
          marks: list[dict[int, int]]) -> tuple[dict[str, object], float]:
    """One kill: `delay_s` after the copy (re)started (`copying_since`, monotonic), find the member running it,
    kill -9 it, watch the takeover, start the member again. Returns the kill's event and when the copy ran again."""
    subject, watch = turn.subject, turn.watch
    assert watch is not None
    turn.pause(max(0.0, copying_since + delay_s - time.monotonic()))
    runner = _find_runner(turn)
    event: dict[str, object] = {
        "settle_s": delay_s, "copying_for_s": round(time.monotonic() - copying_since, 2),
        "victim": subject.member_name(runner.member), "evidence": dict(runner.evidence),
        "at": datetime.now().isoformat(timespec="milliseconds")}
    killed_at = time.time()
    turn.down.add(runner.member)
    subject.kill(runner.member)
    gone_at = time.time()
    ends = watch.ends()
    marks.append(ends)
    probe = Probe(watch.log.partitions, killed_at, int(gone_at * 1000), ends)
    watch.log.probe = probe
    moved_at: float | None = None
    asked = 0.0
    try:
        while not probe.complete and time.time() - killed_at < timeout_s:
            watch.poll(POLL_S)
            turn.check()
            if moved_at is None and time.monotonic() - asked >= STATUS_EVERY_S:
                asked = time.monotonic()
                if subject.moved(runner.member):
                    moved_at = time.time()
    finally:
        watch.log.probe = None
    copying_again = time.monotonic()
    event.update(gone_s=round(gone_at - killed_at, 2), target_after=sum(ends.values()), resumed_s=probe.resumed_s(),
                 takeover_s=probe.takeover_s(), moved_s=round(moved_at - killed_at, 2) if moved_at else None,
                 timed_out=not probe.complete)
    subject.restart(runner.member)
    turn.down.discard(runner.member)
    event["restart_s"] = round(time.monotonic() - copying_again, 2)
    if not probe.complete:  # it came back, if at all, with the restarted member
        turn.copying_since(time.time())
        copying_again = time.monotonic()
    return event, copying_again


def _finish(turn: Turn, sent: int) -> float:
    """Wait until every id sent is on the target, or nothing new came for QUIET_S; returns the seconds."""
    watch = turn.watch
    assert watch is not None
    started = time.monotonic()
    while watch.log.missing(sent):
        watch.poll(0.5)
        turn.check()
        if time.monotonic() - started > turn.args.timeout_s or time.monotonic() - watch.last_record_at > QUIET_S:
            log(f"{turn.subject.name}: {watch.log.missing(sent)} records still missing; giving up")
            break
    return time.monotonic() - started


def trial(subject: Subject, topic: str, source: str, target: str, args: argparse.Namespace,
          delays: list[float], takeover_timeout_s: float) -> dict[str, object]:
    """Produce, start, make each kill, finish, stop cleanly, read back; returns the figures and the kills."""
    error = ClusterAdmin("source", {"bootstrap.servers": source}).create_topics(
        [NewTopicSpec(topic, args.partitions, 1)]).get(topic)
    if error is not None:
        raise error
    events: list[dict[str, object]] = []
    marks: list[dict[int, int]] = []
    started = time.monotonic()
    turn = Turn(subject, RateProducer(source, topic, args), args)
    try:
        began = time.time()
        subject.start()
        _remote_topic_ready(target, subject.remote_topic, args.partitions, turn, args.timeout_s)
        turn.watch = watch = RemoteWatch(target, subject.remote_topic, args.partitions)
        turn.copying_since(began)
        first_copy_s = time.time() - began
        copying = time.monotonic()
        log(f"{subject.name}: copying {first_copy_s:.1f} s after its start")
        for k, delay in enumerate(delays):
            event, copying = _kill(turn, copying, delay, takeover_timeout_s, marks)
            events.append(event)
            log(f"{subject.name}: kill {k + 1}: {event['victim']}; takeover "
                + ("timed out" if event["timed_out"] else f"{event['takeover_s']} s")
                + f", moved {event['moved_s']} s, restarted in {event['restart_s']} s")
        turn.pause(args.settle_s)  # the last kill's successor and restarted member copy as long as the others'
        sent = turn.producer.stop()
        final_s = _finish(turn, sent)
        subject.stop()
        watch.read_to(watch.ends())
        verdict = analyse(watch.log.ids, watch.log.offsets, sent, marks)
    except (RuntimeError, SparkmirrorError, KafkaException, subprocess.TimeoutExpired) as exc:
        raise TrialFailed(f"{exc}\n{subject.log_tail()}", events) from exc
    finally:
        turn.producer.kill()
        if left := subject.close():
            log(f"{subject.name}: processes {left} survived SIGKILL")
        if turn.watch is not None:
            turn.watch.close()
    figures = summary(verdict, sent, [KILL] * len(marks))
    for event, duplicates in zip(events, verdict.duplicates_by_segment[1:], strict=True):
        event["duplicates"] = duplicates
    return {**figures, "records_sent": sent, "duplicates_before_any_kill": figures["duplicates_before_any_event"],
            **takeover_figures(events), "first_copy_s": round(first_copy_s, 1), "final_copy_s": round(final_s, 1),
            "total_s": round(time.monotonic() - started, 1), "events": events}


# --- command line, clusters and result --------------------------------------------------------------------

def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kills", type=int, default=10, help="kill -9 this many times per replicator")
    p.add_argument("--only", choices=REPLICATORS, help="trial one replicator only")
    p.add_argument("--rate", type=float, default=500.0, help="records/s the producer writes during each turn")
    p.add_argument("--record-size", type=int, default=1024, help="value bytes per record")
    p.add_argument("--partitions", type=int, default=6)
    p.add_argument("--seed", type=int, default=42, help="payloads and the settle delays' jitter")
    p.add_argument("--settle-s", type=float, default=60.0,
                   help="from the copy running (again) to the next kill; MM2 commits source offsets every 60 s")
    p.add_argument("--jitter-s", type=float, default=60.0,
                   help="a seeded random 0..this added to each settle delay (one offset commit cycle of MM2)")
    p.add_argument("--mm2-workers", type=int, default=3, help="Connect workers of MM2's cluster")
    p.add_argument("--mm2-tasks", type=int, default=1, help="tasks.max of MM2's connectors")
    p.add_argument("--mm2-rebalance-delay-ms", default=str(DEFAULT_REBALANCE_DELAY_MS),
                   help="comma-separated scheduled.rebalance.max.delay.ms values, one MM2 row each "
                        f"(default Connect's own, {DEFAULT_REBALANCE_DELAY_MS})")
    p.add_argument("--sparkmirror-processes", type=int, default=3, help="`sparkmirror run` processes")
    p.add_argument("--cores", type=int, default=1, help="sparkmirror's local[N] and tasks.max")
    p.add_argument("--takeover-timeout-s", type=float, default=0.0,
                   help="give up a takeover after this long (0: MM2's rebalance delay + 180 s, sparkmirror 300 s)")
    p.add_argument("--timeout-s", type=float, default=300.0, help="to start, to copy again, to finish the copy")
    p.add_argument("--keep-logs", action="store_true", help="keep the workers' and processes' folders")
    p.add_argument("--out", type=Path, default=RESULTS, help="folder for the JSON result")
    args = p.parse_args(argv)
    try:
        args.rebalance_delays = [int(v) for v in args.mm2_rebalance_delay_ms.split(",")]
    except ValueError:
        p.error("--mm2-rebalance-delay-ms takes comma-separated integers")
    if args.kills < 0 or args.rate <= 0 or min(args.rebalance_delays) < 0 or args.settle_s < 0 or args.jitter_s < 0:
        p.error("--kills, --settle-s, --jitter-s and the rebalance delays cannot be negative; --rate must be > 0")
    if min(args.mm2_workers, args.sparkmirror_processes) < 2:
        p.error("a takeover needs at least 2 workers or processes")
    return args


def settle_delays(kills: int, settle_s: float, jitter_s: float, seed: int) -> list[float]:
    """Each kill's settle delay: settle_s plus a seeded uniform jitter in [0, jitter_s]."""
    rng = random.Random(seed)  # noqa: S311 - the kill moments, reproducible, not secrets
    return [round(settle_s + rng.uniform(0, jitter_s), 2) for _ in range(kills)]


def mm2_name(delay_ms: int) -> str:
    return "mm2-distributed" if delay_ms == DEFAULT_REBALANCE_DELAY_MS else f"mm2-distributed-delay-{delay_ms}ms"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("sparkmirror.librdkafka").setLevel(logging.CRITICAL)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a SIGTERM runs the finally blocks too
    params = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    delays = settle_delays(args.kills, args.settle_s, args.jitter_s, args.seed)
    result: dict = {"started": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine(),
                    "parameters": params, "settle_delays_s": delays, "replicators": {}}
    failed = False
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="sparkmirror-bench-takeover-"))
    folders: list[Path] = [work]
    log("starting source and target clusters")
    clusters = start_clusters(["bench-takeover-source", "bench-takeover-target"], heap="1g")
    source, target = (c.bootstrap_servers for c in clusters)
    folders += [c.dir for c in clusters if c.dir is not None]
    try:
        plan: list[tuple[str, Callable[[], Subject], float]] = []
        if args.only in (None, "mm2"):
            for delay_ms in args.rebalance_delays:
                name = mm2_name(delay_ms)
                plan.append((name, lambda n=name, d=delay_ms: Mm2Distributed(
                    source, target, f"takeover-{n}", args.mm2_workers, args.mm2_tasks, d, n, args.keep_logs),
                    args.takeover_timeout_s or delay_ms / 1000 + 180))
        if args.only in (None, "sparkmirror"):
            plan.append(("sparkmirror", lambda: SparkmirrorGroup(
                source, target, "takeover-sparkmirror", args.sparkmirror_processes, args.cores, work),
                args.takeover_timeout_s or 300.0))
        for name, make, takeover_timeout_s in plan:
            subject = make()
            log(f"{name}: {len(subject.members)} members, {args.kills} kills at {args.rate:g} records/s")
            try:
                row = trial(subject, f"takeover-{name}", source, target, args, delays, takeover_timeout_s)
            except TrialFailed as exc:  # an error instead of a figure; the next replicator still runs
                log(f"{name}: FAILED: {exc}")
                result["replicators"][name] = {"error": str(exc), "events": exc.events}
                failed = True
            else:
                result["replicators"][name] = row
                log(f"{name}: " + ", ".join(f"{k}={row.get(k)}" for k in COLUMNS))
            finally:
                folders += subject.folders()
    finally:
        for cluster in clusters:
            cluster.stop()
        for pid in leftovers([str(f) for f in folders]):
            log(f"cleanup: process {pid} still ran; SIGKILL")
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if not args.keep_logs:
            shutil.rmtree(work, ignore_errors=True)
    result["total_s"] = round(time.monotonic() - started, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"takeover-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(markdown(result))
    log(f"result written to {path} (total {result['total_s']} s)" + (f"; logs in {work}" if args.keep_logs else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
