"""Kill trial: how many records sparkmirror and real MirrorMaker 2 lose or copy twice when killed mid-copy, when
the target broker restarts and when a Spark executor dies.

One source and one target cluster, and (unless --spark-workers 0) a Spark standalone cluster of --spark-workers
workers that sparkmirror runs its executors on. A backlog of --records records (`dataset.load`: 1 KiB values,
each record's id in its `bench-seq` header) is written to topic `kill` up front, before any replicator starts.
Then each replicator in turn (sparkmirror at least once, sparkmirror exactly once, then MM2; never two at once)
copies it to its own remote topic on the target (`smsrc.kill`, `eossrc.kill`, `mm2src.kill`):

1. start it; for each event of the schedule (kill_events: --kills process kills, one target broker restart
   after about a third of them, one executor kill after about two thirds), wait until new records appear on
   the target (it is copying, not starting up), then the event's random delay (seeded: every replicator gets
   the same delays), then make the event and note the target's end offsets:
   - kill: kill -9 its whole process group, check that every process of its tree is gone (and, on the Spark
     cluster, wait until the executors of its application are gone too: they write for a moment longer), then
     restart it (same configuration; sparkmirror the same state folder, MM2 its state in Kafka);
   - broker-restart: stop the target broker (SIGTERM) and start it again on its data; the replicator keeps
     running, and if it exits, that is the trial's error;
   - executor-kill: SIGKILL one executor JVM of sparkmirror's application (not its worker) and wait for the
     master to start a new one; skipped for MM2 (no executors) and with --spark-workers 0 (local mode);
   if the target stopped growing before an event is due, the copy is complete and no more events are made;
2. let it finish the copy, stop it cleanly (SIGTERM), then read the whole remote topic back.

Figures per replicator: records lost (ids missing), duplicates (extra copies) in all, per process kill and per
event (each duplicate charged to the event after which it was written), and per-partition order (see
kill_analysis). The target is read as a consumer of committed records reads it (librdkafka's default
`isolation.level`), so the exactly-once run (`exactly.once.support = required`) is judged as its users see it.

    python -m benchmarks.kill_trial                            # 300,000 records, 20 kills, 2 Spark workers
    python -m benchmarks.kill_trial --records 30000 --kills 3  # small check, a few minutes
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from benchmarks import dataset
from benchmarks.kill_analysis import TargetIds, analyse, reported, summary
from benchmarks.kill_events import BROKER_RESTART, EXECUTOR_KILL, KILL, Event, schedule
from benchmarks.kill_processes import (
    ExecutorProcess,
    alive,
    app_executors,
    executors,
    kill_executor,
    leftovers,
    wait_gone,
    worker_pids,
)
from benchmarks.kill_report import COLUMNS, markdown
from benchmarks.kill_subjects import TOPIC, Subject, Target, executor_cores, make_subject
from benchmarks.run import RESULTS, log, machine
from sparkmirror.errors import SparkmirrorError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import NewTopicSpec
from sparkmirror.testing.kafka_cluster import LocalKafkaCluster, start_clusters
from sparkmirror.testing.spark_cluster import LocalSparkCluster, WorkerSpec

REPLICATORS = ("sparkmirror", "sparkmirror-exactly-once", "mm2")
POLL_S = 0.1
GROWING_WINDOW_S = 0.5  # the target grew this recently: the copy is still running
GIVE_UP_QUIET_S = 30.0  # after the last restart copied something, this long without a new record: done
GONE_TIMEOUT_S = 30.0
REPLACED_TIMEOUT_S = 120.0  # a killed executor's replacement: the master relaunches it within seconds


class TrialFailed(RuntimeError):
    """A trial that ended in an error, with the events it had made by then."""

    def __init__(self, message: str, events: list[dict[str, object]]) -> None:
        super().__init__(message)
        self.events = events


def _check_alive(subject: Subject, proc: subprocess.Popen[bytes], what: str) -> None:
    if proc.poll() is not None:
        raise RuntimeError(f"{subject.name} exited ({proc.returncode}) {what}:\n{subject.runner.log_tail()}")


def await_copying(subject: Subject, proc: subprocess.Popen[bytes], count: Callable[[], int], baseline: int,
                  delay_s: float, timeout_s: float, event: dict[str, object], since: str,
                  copied_all: Callable[[], bool] = lambda: False) -> bool:
    """Wait for new records past `baseline`, then `delay_s`; note the figures in `event`. Returns whether the
    target is still growing (an event now lands mid-copy) rather than complete. A restart after the last record
    was copied and reported copies nothing new: after GIVE_UP_QUIET_S without one, `copied_all` (every source id
    on the target) says the copy is complete."""
    started = asked = time.monotonic()
    while (now_count := count()) <= baseline:
        _check_alive(subject, proc, f"before copying again, {since}")
        if time.monotonic() - asked > GIVE_UP_QUIET_S:
            if copied_all():
                return False
            asked = time.monotonic()
        if time.monotonic() - started > timeout_s:
            raise RuntimeError(f"{subject.name}: no new record on the target within {timeout_s:.0f} s, {since}")
        time.sleep(POLL_S)
    first = time.monotonic()
    grew_at, last = first, now_count
    while (now := time.monotonic()) < first + delay_s:
        time.sleep(min(POLL_S, first + delay_s - now))
        _check_alive(subject, proc, f"while copying, {since}")
        if (c := count()) != last:
            grew_at, last = time.monotonic(), c
    event.update(first_new_record_s=round(first - started, 2), target_before=last)
    return time.monotonic() - grew_at <= GROWING_WINDOW_S


def _await_orphans(subject: Subject, orphans: list[ExecutorProcess], event: dict[str, object]) -> None:
    """After a driver's kill -9, wait until its executors are gone too: they write for a moment longer (until
    they notice the driver is gone and the worker ends them), and the end offsets must come after their last
    record. Any still there after GONE_TIMEOUT_S is SIGKILLed, and named in the event."""
    started = time.monotonic()
    while (left := [e for e in orphans if alive(e.pid)]) and time.monotonic() - started < GONE_TIMEOUT_S:
        time.sleep(0.05)
    event["executors_outlived_driver_s"] = round(time.monotonic() - started, 2)
    if left:
        event["executors_killed_by_trial"] = [e.pid for e in left]
        log(f"{subject.name}: executors {[e.pid for e in left]} outlived their driver by {GONE_TIMEOUT_S:.0f} s; "
            "SIGKILL")
        for e in left:
            kill_executor(e)


def _kill_an_executor(spark: LocalSparkCluster, subject: Subject, proc: subprocess.Popen[bytes],
                      event: dict[str, object]) -> Callable[[], None]:
    """SIGKILL the executor of the last worker that runs one for the replicator's application; returns a wait
    for its replacement (to call once the end offsets are noted) that records how long the master took."""
    app, running = app_executors(spark)
    workers = worker_pids(spark)
    if not running:
        raise RuntimeError(f"{subject.name}: no executor JVM of application {app} to kill on workers {sorted(workers)}")
    victim = running[-1]
    kill_executor(victim)
    killed_at = time.monotonic()
    event["executor"] = {"worker": victim.worker, "pid": victim.pid, "executor_id": victim.executor_id,
                         "app_id": victim.app_id}

    def replaced() -> None:
        known = {e.pid for e in running}
        while time.monotonic() - killed_at < REPLACED_TIMEOUT_S:
            _check_alive(subject, proc, f"after the kill of executor {victim.executor_id}")
            if any(e.app_id == app and e.pid not in known for e in executors(workers)):
                event["replaced_after_s"] = round(time.monotonic() - killed_at, 2)
                return
            time.sleep(POLL_S)
        event["replaced_after_s"] = None
        log(f"{subject.name}: no new executor within {REPLACED_TIMEOUT_S:.0f} s of the kill")
    return replaced


def make_event(kind: str, subject: Subject, proc: subprocess.Popen[bytes], target: Target,
               spark: LocalSparkCluster | None, event: dict[str, object]
               ) -> tuple[subprocess.Popen[bytes], dict[int, int]]:
    """Make the event and note the target's end offsets right after it (a killed process tree and its executors
    gone, a restarted broker answering, a killed executor gone); returns the replicator's process (a new one
    after a kill) and those end offsets."""
    event["at"] = datetime.now().isoformat()  # local time, as sparkmirror's log
    replaced: Callable[[], None] | None = None
    if kind == KILL:
        orphans = app_executors(spark)[1] if spark is not None and not subject.no_executors else None
        subject.crash()
        if orphans is not None:
            _await_orphans(subject, orphans, event)
    elif kind == BROKER_RESTART:
        event["restart_s"] = round(target.restart_broker(), 2)
    elif kind == EXECUTOR_KILL:
        assert spark is not None, "an executor kill needs the Spark cluster"
        replaced = _kill_an_executor(spark, subject, proc, event)
    else:
        raise ValueError(f"unknown event kind {kind!r}")
    ends = target.ends()
    event["target_after"] = sum(ends.values())
    if replaced is not None:
        replaced()
    return (subject.start() if kind == KILL else proc), ends


def finish(subject: Subject, proc: subprocess.Popen[bytes], reader: TargetIds, base: int, timeout_s: float,
           since: str) -> float:
    """Wait until every source id is on the target (or nothing new comes); returns the seconds it took."""
    started = time.monotonic()
    read = 0
    while reader.distinct < reader.records:
        read += reader.poll(0.5)
        _check_alive(subject, proc, f"finishing the copy, {since}")
        quiet = time.monotonic() - reader.last_record_at
        if time.monotonic() - started > timeout_s or (read > base and quiet > GIVE_UP_QUIET_S):
            log(f"{subject.name}: {reader.records - reader.distinct} records still missing; giving up")
            break
    return time.monotonic() - started


def every_id_copied(cluster: LocalKafkaCluster, target: Target, remote: str, args: argparse.Namespace) -> bool:
    """Whether every source id is on the target now (read from its beginning to its end offsets)."""
    ids = TargetIds(cluster.bootstrap_servers, remote, args.partitions, args.records)
    try:
        ids.read_to(target.ends())
        return ids.distinct >= ids.records
    finally:
        ids.close()


def trial(subject: Subject, args: argparse.Namespace, target_cluster: LocalKafkaCluster, events_planned:
          tuple[Event, ...], spark: LocalSparkCluster | None) -> dict[str, object]:
    """Start, make each event, finish, stop cleanly, read back; returns the figures and one entry per event."""
    remote = f"{subject.runner.source_alias}.{TOPIC}"
    target = Target(target_cluster, remote, args.partitions)
    events: list[dict[str, object]] = []
    marks: list[dict[int, int]] = []  # each made event's end offsets, in order
    reader: TargetIds | None = None
    started = time.monotonic()
    since = "after its start"
    try:
        proc = subject.start()
        complete = False
        for k, planned in enumerate(events_planned):
            event: dict[str, object] = {"kind": planned.kind, "delay_s": planned.delay_s, "made": False}
            events.append(event)
            if planned.kind == EXECUTOR_KILL and subject.no_executors:
                event["skipped"] = subject.no_executors
                continue
            if complete:
                event["not_made"] = "copy complete"
                continue
            event["follows"] = next((e["kind"] for e in reversed(events[:-1]) if e["made"]), "start")
            # past one offset per partition: an abort marker of a fenced transaction is not a new record
            baseline = (sum(marks[-1].values()) if marks else 0) + args.partitions
            if not await_copying(subject, proc, target.count, baseline, planned.delay_s, args.timeout_s, event, since,
                                 lambda: every_id_copied(target_cluster, target, remote, args)):
                complete, event["not_made"] = True, "copy complete"
                log(f"{subject.name}: copy complete before event {k + 1} ({planned.kind}); no more events")
                continue
            proc, ends = make_event(planned.kind, subject, proc, target, spark, event)
            marks.append(ends)
            event["made"] = True
            since = f"after event {k + 1} ({planned.kind})"
            log(f"{subject.name}: event {k + 1} ({planned.kind}) after {planned.delay_s} s of copying; target holds "
                f"{event['target_after']:,} records")
        reader = TargetIds(target_cluster.bootstrap_servers, remote, args.partitions, args.records)
        finish_s = finish(subject, proc, reader, sum(marks[-1].values()) if marks else 0, args.timeout_s, since)
        stop_began = time.monotonic()
        subject.runner.stop()
        stop_s = time.monotonic() - stop_began
        if left := wait_gone(subject.groups[-1], set(), kill=False):
            raise RuntimeError(f"{subject.name}: processes {left} still run {GONE_TIMEOUT_S:.0f} s after a clean stop")
        reader.read_to(target.ends())
        verdict = analyse(reader.ids, reader.offsets, args.records, marks)
    except (RuntimeError, SparkmirrorError) as exc:  # a broker that does not come back, too
        raise TrialFailed(str(exc), events) from exc
    finally:
        if left := subject.kill_all():
            log(f"{subject.name}: processes {left} survived SIGKILL")
        if reader is not None:
            reader.close()
    made = [e for e in events if e["made"]]
    figures = summary(verdict, args.records, [str(e["kind"]) for e in made])
    for k, event in enumerate(made):
        event.update(duplicates=verdict.duplicates_by_segment[k + 1], resumed_behind=verdict.resumed_behind[k])
    _add_reports(subject, events)
    by_kind = figures["duplicates_by_event_kind"]
    assert isinstance(by_kind, dict)
    restarts = [float(e["first_new_record_s"]) for e in events  # type: ignore[arg-type]
                if e.get("follows") == KILL and "first_new_record_s" in e]
    return {**figures, "broker_restart_duplicates": by_kind.get(BROKER_RESTART),
            "executor_kill_duplicates": by_kind.get(EXECUTOR_KILL),
            "restart_to_copy_s_median": round(statistics.median(restarts), 1) if restarts else None,
            "total_s": round(time.monotonic() - started, 1), "final_copy_s": round(finish_s, 1),
            "clean_stop_s": round(stop_s, 1), "events": events}


def _add_reports(subject: Subject, events: list[dict[str, object]]) -> None:
    """For sparkmirror: the records each killed process had reported (saved as positions) against those it
    wrote, and how old its last report was when the kill came."""
    if subject.name == "mm2":
        return
    before = 0
    kills = [e for e in events if e["kind"] == KILL and e["made"]]
    for event, path in zip(kills, subject.logs, strict=False):  # process i ended with kill i
        written = int(event["target_after"]) - before  # type: ignore[call-overload]
        before += written
        rep = reported(path)
        event.update(written=written, reported=rep.records, report_lines=rep.lines, unreported=written - rep.records)
        if rep.last_at is not None:
            age = datetime.fromisoformat(str(event["at"])) - rep.last_at
            event["last_report_age_s"] = round(age.total_seconds(), 2)


# --- command line, clusters and result --------------------------------------------------------------------

def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--records", type=int, default=300_000, help="backlog records, written before any replicator")
    p.add_argument("--kills", type=int, default=20, help="kill -9 and restart this many times per replicator")
    p.add_argument("--partitions", type=int, default=12)
    p.add_argument("--record-size", type=int, default=1024, help="value bytes per record")
    p.add_argument("--trigger", choices=("micro-batch", "real-time"), default="micro-batch",
                   help="sparkmirror's trigger mode")
    p.add_argument("--only", help="comma-separated replicators to trial, of " + ", ".join(REPLICATORS))
    p.add_argument("--cores", type=int, default=2,
                   help="tasks.max of both; sparkmirror's local[N] or, on the Spark cluster, its executor cores")
    p.add_argument("--spark-workers", type=int, default=2,
                   help="workers of the Spark standalone cluster sparkmirror runs on (an executor each); 0: local "
                        "mode in sparkmirror's own JVM, and no executor kill")
    p.add_argument("--min-delay-s", type=float, default=0.0, help="shortest wait from new records to an event")
    p.add_argument("--max-delay-s", type=float, default=2.0, help="longest wait from new records to an event")
    p.add_argument("--timeout-s", type=float, default=600.0, help="per event, and for the final copy")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--keep-logs", action="store_true", help="keep the replicators' and Spark cluster's folders")
    p.add_argument("--out", type=Path, default=RESULTS, help="folder for the JSON result")
    args = p.parse_args(argv)
    if not 0 <= args.min_delay_s <= args.max_delay_s:
        p.error("need 0 <= --min-delay-s <= --max-delay-s")
    if args.kills < 0 or args.spark_workers < 0:
        p.error("--kills and --spark-workers cannot be negative")
    args.replicators = [n.strip() for n in args.only.split(",")] if args.only else list(REPLICATORS)
    if unknown := [n for n in args.replicators if n not in REPLICATORS]:
        p.error(f"unknown replicator(s) {', '.join(unknown)}; choose from {', '.join(REPLICATORS)}")
    return args


def _load(source: str, args: argparse.Namespace) -> float:
    admin = ClusterAdmin("source", {"bootstrap.servers": source})
    error = admin.create_topics([NewTopicSpec(TOPIC, args.partitions, 1)]).get(TOPIC)
    if error is not None:
        raise error
    return dataset.load(source, [TOPIC], args.partitions, args.records, args.record_size, args.seed)


def _cleanup(steps: list[Callable[[], object]], markers: list[str]) -> None:
    """Run every step whatever the one before did, then SIGKILL any process still naming one of our folders."""
    for step in steps:
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - a failed step must not keep the next from running
            log(f"cleanup: {type(exc).__name__}: {exc}")
    for pid in leftovers(markers):
        log(f"cleanup: process {pid} still ran; SIGKILL")
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("sparkmirror.librdkafka").setLevel(logging.CRITICAL)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a SIGTERM runs the finally blocks too
    params = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    planned = schedule(args.kills, args.min_delay_s, args.max_delay_s, args.seed)
    result: dict = {"started": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine(),
                    "parameters": params, "replicators": {},
                    "schedule": [{"kind": e.kind, "delay_s": e.delay_s} for e in planned]}
    failed = False
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="sparkmirror-bench-kill-"))
    subjects: list[Subject] = []
    spark: LocalSparkCluster | None = None
    log("starting source and target clusters")
    clusters = start_clusters(["bench-kill-source", "bench-kill-target"], heap="1g")
    source, target = (c.bootstrap_servers for c in clusters)
    try:
        if args.spark_workers and any(n != "mm2" for n in args.replicators):
            cores = executor_cores(args)
            log(f"starting a Spark standalone cluster of {args.spark_workers} workers ({cores} cores each)")
            spark = LocalSparkCluster("bench-kill-spark", [WorkerSpec(cores=cores)] * args.spark_workers,
                                      keep_logs=args.keep_logs)
            spark.start()
        log(f"loading {args.records:,} records of {args.record_size} B into '{TOPIC}' ({args.partitions} partitions)")
        result["load_s"] = round(_load(source, args), 1)
        for name in args.replicators:
            if name == "mm2" and spark is not None:
                spark.stop()  # idle daemons would still take memory and a little CPU from MM2's run
            subject = make_subject(name, source, target, args, work, spark)
            subjects.append(subject)
            log(f"{subject.name}: copying with {len(planned)} events ({args.kills} kills)")
            try:
                result["replicators"][subject.name] = row = trial(subject, args, clusters[1], planned, spark)
            except TrialFailed as exc:  # an error instead of a figure; the next replicator still runs
                log(f"{subject.name}: FAILED: {exc}")
                result["replicators"][subject.name] = {"error": str(exc), "events": exc.events}
                failed = True
                continue
            log(f"{subject.name}: " + ", ".join(f"{k}={row[k]}" for k in COLUMNS))
    finally:
        steps: list[Callable[[], object]] = [*(s.kill_all for s in subjects)]
        steps += [spark.stop] if spark is not None else []
        folders = [work, *(c.dir for c in clusters), spark.dir if spark else None,
                   *(d for s in subjects if s.name == "mm2" for d in s.logs)]
        _cleanup([*steps, *(c.stop for c in clusters)], [str(d) for d in folders if d])
        if not args.keep_logs:
            shutil.rmtree(work, ignore_errors=True)
            for subject in subjects:
                for path in subject.logs if subject.name == "mm2" else ():
                    shutil.rmtree(path, ignore_errors=True)
    reps = {n: r for n, r in result["replicators"].items() if "error" not in r}
    sm = next((r for n, r in reps.items() if n.startswith("sparkmirror")), None)
    if sm and reps.get("mm2", {}).get("duplicates_per_kill"):
        ratio = sm["duplicates_per_kill"] / reps["mm2"]["duplicates_per_kill"]
        result["duplicates_per_kill_ratio_vs_mm2"] = round(ratio, 4)
    result["total_s"] = round(time.monotonic() - started, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"kill-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(markdown(result))
    kept = f"; logs in {work}" + (f" and {spark.dir}" if spark and spark.dir else "") if args.keep_logs else ""
    log(f"result written to {path} (total {result['total_s']} s){kept}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
