"""Kill trial: how many records sparkmirror and real MirrorMaker 2 lose or copy twice when killed mid-copy.

One source and one target cluster. A backlog of --records records (`dataset.load`: 1 KiB values, each
record's id in its `bench-seq` header) is written to topic `kill` up front, before any replicator starts.
Then each replicator in turn (sparkmirror first, then MM2; never both at once) copies it to its own remote
topic on the target (`smsrc.kill`, `mm2src.kill`):

1. start it; wait until new records appear on the target (it is copying, not starting up);
2. wait a random delay (seeded: both replicators get the same delays), then kill -9 its whole process
   group, check that every process of its tree is gone and note the target's end offsets;
3. restart it (same configuration; sparkmirror the same state folder, MM2 its state in Kafka) and repeat,
   --kills times in all; if the target stopped growing before a kill is due, the copy is complete and no
   more kills are made;
4. let it finish the copy, stop it cleanly (SIGTERM), then read the whole remote topic back.

Figures per replicator: records lost (ids missing), duplicates (extra copies) in all and per kill (each
duplicate charged to the kill whose restart wrote it), and per-partition order (see kill_analysis). The target
is read as a consumer of committed records reads it (librdkafka's default `isolation.level`), so the
exactly-once run (`exactly.once.support = required`, remote topic `eossrc.kill`) is judged as its users see it.

    python -m benchmarks.kill_trial                            # 300,000 records, 20 kills
    python -m benchmarks.kill_trial --records 30000 --kills 3  # small check, a few minutes
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
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from benchmarks import dataset
from benchmarks.kill_analysis import TargetIds, analyse, reported, summary
from benchmarks.measure import tree_snapshot
from benchmarks.replicators import MirrorMakerRunner, SparkmirrorRunner, count_records
from benchmarks.run import RESULTS, log, machine
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import NewTopicSpec
from sparkmirror.testing.kafka_cluster import start_clusters

TOPIC = "kill"
REPLICATORS = ("sparkmirror", "sparkmirror-exactly-once", "mm2")
EXACTLY_ONCE_ALIAS = "eossrc"  # its own remote topic, `eossrc.kill`, read by a consumer of committed records
POLL_S = 0.1
GROWING_WINDOW_S = 0.5  # the target grew this recently: the copy is still running
GIVE_UP_QUIET_S = 30.0  # after the last restart copied something, this long without a new record: done
GONE_TIMEOUT_S = 30.0


@dataclass
class Subject:
    """One replicator under trial, with every process it started and the logs of each."""

    name: str
    runner: MirrorMakerRunner | SparkmirrorRunner
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)  # each process's group (MM2's is led by its watchdog)
    logs: list[Path] = field(default_factory=list)  # sparkmirror: one log per process; MM2: one folder

    def start(self) -> subprocess.Popen[bytes]:
        runner = self.runner
        if isinstance(runner, SparkmirrorRunner):
            proc = runner.resume() if self.procs else runner.start(TOPIC)
            self.logs.append(runner.log_path)  # type: ignore[arg-type]
        else:
            proc = runner.start(TOPIC)
            self.logs.append(runner.log_dir)  # type: ignore[arg-type]
        self.procs.append(proc)
        self.groups.append(os.getpgid(proc.pid))
        return proc

    def crash(self) -> None:
        """kill -9 the latest process's group and wait until all of its processes are gone."""
        crash(self.procs[-1], self.groups[-1])
        self.runner.stop()  # the process is gone: this only releases MM2's watchdog

    def kill_all(self) -> list[int]:
        """Whatever still runs, on any exit path; returns the processes that survived even SIGKILL.

        Only groups of a process not yet reaped: a group id is not reused while a member lives, but an
        ended group's id may be reused by someone else's."""
        left = []
        for proc, pgid in zip(self.procs, self.groups, strict=True):
            if proc.poll() is None:
                try:
                    crash(proc, pgid)
                except RuntimeError:
                    left += survivors(pgid, set())
        return left


def _group_and_state(pid: int) -> tuple[int, str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2:].split()
    return int(fields[2]), fields[0]


def survivors(pgid: int, tree: set[int]) -> list[int]:
    """Live (not zombie) processes of the group, or of the tree seen before the kill."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit() and (gs := _group_and_state(int(name))) and gs[1] != "Z" and (
                gs[0] == pgid or int(name) in tree):
            out.append(int(name))
    return out


def wait_gone(pgid: int, tree: set[int], kill: bool, timeout_s: float = GONE_TIMEOUT_S) -> list[int]:
    """Wait until no process of the group (or of `tree`) is left, SIGKILLing them if `kill`; returns those
    still there after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while (left := survivors(pgid, tree)) and time.monotonic() < deadline:
        for pid in left if kill else ():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)
    return left


def crash(proc: subprocess.Popen[bytes], pgid: int) -> None:
    """kill -9 the process group, and any process of its tree that left the group; wait until all are gone."""
    tree = set(tree_snapshot(proc.pid)) if proc.poll() is None else set()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):  # wait_gone names what is left
        proc.wait(timeout=GONE_TIMEOUT_S)
    if left := wait_gone(pgid, tree, kill=True):
        raise RuntimeError(f"processes {left} of group {pgid} survived SIGKILL")


def leftovers(markers: list[str]) -> list[int]:
    """Live processes (not this one) whose command line names one of our folders: the last safety net."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if any(m in cmdline for m in markers) and (gs := _group_and_state(int(name))) and gs[1] != "Z":
            out.append(int(name))
    return out


def _check_alive(subject: Subject, proc: subprocess.Popen[bytes], what: str) -> None:
    if proc.poll() is not None:
        raise RuntimeError(f"{subject.name} exited ({proc.returncode}) {what}:\n{subject.runner.log_tail()}")


def kill_cycle(subject: Subject, proc: subprocess.Popen[bytes], count: Callable[[], int], baseline: int, delay_s: float,
               timeout_s: float) -> dict[str, object]:
    """Wait for new records, then `delay_s`; kill unless the copy is complete. Returns the cycle's figures."""
    started = time.monotonic()
    while (now_count := count()) <= baseline:
        _check_alive(subject, proc, "before copying")
        if time.monotonic() - started > timeout_s:
            raise RuntimeError(f"{subject.name}: no new record on the target within {timeout_s:.0f} s")
        time.sleep(POLL_S)
    first = time.monotonic()
    grew_at, last = first, now_count
    while (now := time.monotonic()) < first + delay_s:
        time.sleep(min(POLL_S, first + delay_s - now))
        _check_alive(subject, proc, "while copying")
        if (c := count()) != last:
            grew_at, last = time.monotonic(), c
    cycle: dict[str, object] = {"first_new_record_s": round(first - started, 2), "delay_s": round(delay_s, 3),
                                "target_before_kill": last}
    if time.monotonic() - grew_at > GROWING_WINDOW_S:
        cycle["killed"] = False  # the copy is complete: a kill now would not land mid-copy
        return cycle
    cycle["killed_at"] = datetime.now().isoformat()  # local time, as sparkmirror's log
    subject.crash()
    cycle["killed"] = True
    return cycle


def finish(subject: Subject, proc: subprocess.Popen[bytes], reader: TargetIds, base: int,
           timeout_s: float) -> float:
    """Wait until every source id is on the target (or nothing new comes); returns the seconds it took."""
    started = time.monotonic()
    read = 0
    while reader.distinct < reader.records:
        read += reader.poll(0.5)
        _check_alive(subject, proc, "finishing the copy")
        quiet = time.monotonic() - reader.last_record_at
        if time.monotonic() - started > timeout_s or (read > base and quiet > GIVE_UP_QUIET_S):
            log(f"{subject.name}: {reader.records - reader.distinct} records still missing; giving up")
            break
    return time.monotonic() - started


def trial(subject: Subject, args: argparse.Namespace, target: str, delays: list[float]) -> dict[str, object]:
    """Start, kill and restart after each delay, finish, stop cleanly, read back; returns the figures."""
    admin = ClusterAdmin("target", {"bootstrap.servers": target})
    remote = f"{subject.runner.source_alias}.{TOPIC}"

    def count() -> int:
        return count_records(admin, {remote: args.partitions})

    cycles: list[dict[str, object]] = []
    marks: list[dict[int, int]] = []
    reader: TargetIds | None = None
    started = time.monotonic()
    try:
        proc = subject.start()
        for k, delay_s in enumerate(delays):
            baseline = sum(marks[-1].values()) if marks else 0
            cycle = kill_cycle(subject, proc, count, baseline, delay_s, args.timeout_s)
            cycles.append(cycle)
            if not cycle["killed"]:
                log(f"{subject.name}: copy complete before kill {k + 1}; no more kills")
                break
            marks.append({p: high for p, (_, high) in admin.watermarks(remote, args.partitions).items()})
            cycle["target_after_kill"] = sum(marks[-1].values())
            log(f"{subject.name}: kill {k + 1} after {cycle['delay_s']} s of copying; target holds "
                f"{cycle['target_after_kill']:,} records")
            proc = subject.start()
        reader = TargetIds(target, remote, args.partitions, args.records)
        finish_s = finish(subject, proc, reader, sum(marks[-1].values()) if marks else 0, args.timeout_s)
        stop_began = time.monotonic()
        subject.runner.stop()
        stop_s = time.monotonic() - stop_began
        if left := wait_gone(subject.groups[-1], set(), kill=False):
            raise RuntimeError(f"{subject.name}: processes {left} still run {GONE_TIMEOUT_S:.0f} s after a clean stop")
        reader.read_to({p: high for p, (_, high) in admin.watermarks(remote, args.partitions).items()})
        verdict = analyse(reader.ids, reader.offsets, args.records, marks)
    finally:
        if left := subject.kill_all():
            log(f"{subject.name}: processes {left} survived SIGKILL")
        if reader is not None:
            reader.close()
    _add_reports(subject, cycles, marks)
    return {**summary(verdict, args.records), "total_s": round(time.monotonic() - started, 1),
            "final_copy_s": round(finish_s, 1), "clean_stop_s": round(stop_s, 1), "cycles": cycles}


def _add_reports(subject: Subject, cycles: list[dict[str, object]], marks: list[dict[int, int]]) -> None:
    """For sparkmirror: the records each killed process had reported (saved as positions) against those it
    wrote, and how old its last report was when the kill came."""
    if subject.name == "mm2":
        return
    before = 0
    for cycle, mark, path in zip(cycles, marks, subject.logs, strict=False):
        written = sum(mark.values()) - before
        before = sum(mark.values())
        rep = reported(path)
        cycle.update(written=written, reported=rep.records, report_lines=rep.lines,
                     unreported=written - rep.records)
        if rep.last_at is not None and "killed_at" in cycle:
            age = datetime.fromisoformat(str(cycle["killed_at"])) - rep.last_at
            cycle["last_report_age_s"] = round(age.total_seconds(), 2)


# --- command line and report ----------------------------------------------------------------------------

def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--records", type=int, default=300_000, help="backlog records, written before any replicator")
    p.add_argument("--kills", type=int, default=20, help="kill -9 and restart this many times per replicator")
    p.add_argument("--partitions", type=int, default=12)
    p.add_argument("--record-size", type=int, default=1024, help="value bytes per record")
    p.add_argument("--trigger", choices=("micro-batch", "real-time"), default="micro-batch",
                   help="sparkmirror's trigger mode")
    p.add_argument("--only", choices=REPLICATORS, help="trial one replicator only")
    p.add_argument("--cores", type=int, default=2, help="sparkmirror local[N] and tasks.max of both")
    p.add_argument("--min-delay-s", type=float, default=0.0, help="shortest wait from new records to the kill")
    p.add_argument("--max-delay-s", type=float, default=2.0, help="longest wait from new records to the kill")
    p.add_argument("--timeout-s", type=float, default=600.0, help="per restart, and for the final copy")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--keep-logs", action="store_true", help="keep the replicators' folders and logs")
    p.add_argument("--out", type=Path, default=RESULTS, help="folder for the JSON result")
    args = p.parse_args(argv)
    if not 0 <= args.min_delay_s <= args.max_delay_s:
        p.error("need 0 <= --min-delay-s <= --max-delay-s")
    args.replicators = [args.only] if args.only else list(REPLICATORS)
    return args


COLUMNS = ("kills", "lost", "target_records", "duplicates", "duplicates_per_kill", "duplicates_per_kill_min",
           "duplicates_per_kill_median", "duplicates_per_kill_max", "rewinds", "partitions_in_order",
           "restart_to_copy_s_median", "total_s")


def markdown(result: dict) -> str:
    reps = result["replicators"]
    lines = ["| replicator | " + " | ".join(COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for name, row in reps.items():
        lines.append(f"| {name} | " + " | ".join("" if row.get(c) is None else f"{row[c]:,}" for c in COLUMNS)
                     + " |")
    kills = max((len(r["duplicates_each_kill"]) for r in reps.values()), default=0)
    if kills:  # per kill: the duplicates its restart wrote, and how far behind the target it resumed
        lines += ["", "| kill | delay s | " + " | ".join(f"{n} duplicates | {n} resumed behind" for n in reps) + " |",
                  "|---" * (2 * len(reps) + 2) + "|"]
        for k in range(kills):
            cells = [f"{r[key][k]:,}" if k < len(r[key]) else "" for r in reps.values()
                     for key in ("duplicates_each_kill", "resumed_behind_each_kill")]
            lines.append(f"| {k + 1} | {result['delays_s'][k]:.2f} | " + " | ".join(cells) + " |")
    if "duplicates_per_kill_ratio_vs_mm2" in result:
        lines += ["", f"- duplicates_per_kill_ratio_vs_mm2: {result['duplicates_per_kill_ratio_vs_mm2']}"]
    return "\n".join(lines)


def _load(source: str, args: argparse.Namespace) -> float:
    admin = ClusterAdmin("source", {"bootstrap.servers": source})
    error = admin.create_topics([NewTopicSpec(TOPIC, args.partitions, 1)]).get(TOPIC)
    if error is not None:
        raise error
    return dataset.load(source, [TOPIC], args.partitions, args.records, args.record_size, args.seed)


def _subject(name: str, source: str, target: str, args: argparse.Namespace, work: Path) -> Subject:
    if name == "mm2":
        return Subject("mm2", MirrorMakerRunner(source, target, args.cores, work))
    if name == "sparkmirror-exactly-once":
        runner = SparkmirrorRunner(source, target, args.cores, work, args.trigger, source_alias=EXACTLY_ONCE_ALIAS,
                                   settings=f"{EXACTLY_ONCE_ALIAS}->tgt.exactly.once.support = required\n")
        runner.name = name
        return Subject(name, runner)
    runner = SparkmirrorRunner(source, target, args.cores, work, args.trigger)
    return Subject(runner.name, runner)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("sparkmirror.librdkafka").setLevel(logging.CRITICAL)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a SIGTERM runs the finally blocks too
    params = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    rng = random.Random(args.seed)  # noqa: S311 - the kill moments, the same for every replicator
    delays = [round(rng.uniform(args.min_delay_s, args.max_delay_s), 3) for _ in range(args.kills)]
    result: dict = {"started": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine(),
                    "parameters": params, "replicators": {}, "delays_s": delays}
    failed = False
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="sparkmirror-bench-kill-"))
    subjects: list[Subject] = []
    log("starting source and target clusters")
    clusters = start_clusters(["bench-kill-source", "bench-kill-target"], heap="1g")
    source, target = (c.bootstrap_servers for c in clusters)
    try:
        log(f"loading {args.records:,} records of {args.record_size} B into '{TOPIC}' ({args.partitions} partitions)")
        result["load_s"] = round(_load(source, args), 1)
        for name in args.replicators:
            subject = _subject(name, source, target, args, work)
            subjects.append(subject)
            log(f"{subject.name}: copying with {args.kills} kills")
            try:
                result["replicators"][subject.name] = row = trial(subject, args, target, delays)
            except RuntimeError as exc:  # an error instead of a figure; the next replicator still runs
                log(f"{subject.name}: FAILED: {exc}")
                result["replicators"][subject.name] = {"error": str(exc)}
                failed = True
                continue
            restarts = [c["first_new_record_s"] for c in row["cycles"][1:]]
            row["restart_to_copy_s_median"] = round(statistics.median(restarts), 1) if restarts else None
            log(f"{subject.name}: " + ", ".join(f"{k}={row[k]}" for k in COLUMNS))
    finally:  # every step runs, whatever the one before did
        for step in [*(s.kill_all for s in subjects), *(c.stop for c in clusters)]:
            try:
                step()
            except Exception as exc:  # noqa: BLE001 - a failed step must not keep the next from running
                log(f"cleanup: {type(exc).__name__}: {exc}")
        markers = [str(work), *(str(c.dir) for c in clusters if c.dir),
                   *(str(d) for s in subjects if s.name == "mm2" for d in s.logs if d)]
        for pid in leftovers(markers):
            log(f"cleanup: process {pid} still ran; SIGKILL")
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
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
    print(markdown({**result, "replicators": reps}))
    log(f"result written to {path} (total {result['total_s']} s)" + (f"; logs in {work}" if args.keep_logs else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
