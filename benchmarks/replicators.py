"""Start, watch and stop each replicator under test, and the broker-limit producer."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.measure import TreeSampler, Usage
from sparkmirror import jars
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.groups import ConsumerGroups
from sparkmirror.pipeline.options import producer_settings
from sparkmirror.testing import watchdog
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER
from sparkmirror.testing.mirror_maker import CONNECT_SINGLE_BROKER, LocalMirrorMaker

POLL_S = 0.25


class CopyIncomplete(RuntimeError):
    """A replicator did not copy every record; it gets an error, not a figure."""


@dataclass
class Run:
    """One measured run: how long to a full copy, and what the process tree used."""

    wall_s: float
    first_record_s: float | None
    usage: Usage


def _mm2_properties(source: str, target: str, topics: str, tasks: int, extra: str = "",
                    alias: str = "mm2src") -> str:
    return (f"clusters = {alias}, tgt\n{alias}.bootstrap.servers = {source}\ntgt.bootstrap.servers = {target}\n"
            f"{alias}->tgt.enabled = true\n{alias}->tgt.topics = {topics}\ntgt->{alias}.enabled = false\n"
            f"tasks.max = {tasks}\n{SINGLE_BROKER}{CONNECT_SINGLE_BROKER}{extra}")


_watchdogs: dict[subprocess.Popen[bytes], watchdog.Watchdog] = {}
"""The watchdog of each process start_sparkmirror started, until stop_process_group has seen it end."""


def start_sparkmirror(config: Path, run_dir: Path, log: Path, args: Sequence[str] = ()) -> subprocess.Popen[bytes]:
    """`sparkmirror run` on a properties file, state under `run_dir`; `args` are further options of `run` (e.g.
    `--metrics-port`). It runs in a process group of its own led by a watchdog (testing/watchdog.py), so the
    group ends with this process even when it is killed (SIGTERM, SIGKILL); stop it with stop_process_group."""
    with open(log, "wb") as out:
        proc, dog = watchdog.spawn([sys.executable, "-m", "sparkmirror", "run", "--config", str(config),
                                    "--state-dir", str(run_dir / "state"), *args], stdout=out,
                                   stderr=subprocess.STDOUT)
    _watchdogs[proc] = dog
    return proc


def stop_process_group(proc: subprocess.Popen[bytes] | None, timeout_s: float = 60.0) -> None:
    """SIGTERM the process group (a clean stop), SIGKILL it if it is still there after `timeout_s`; then
    release its watchdog (also after the process ended otherwise, e.g. a SIGKILL of the kill trial)."""
    if proc is None:
        return
    dog = _watchdogs.get(proc)
    group = dog.pgid if dog is not None else proc.pid  # the watchdog leads the group, and ignores the SIGTERM
    if proc.poll() is None:
        os.killpg(group, signal.SIGTERM)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(group, signal.SIGKILL)
            proc.wait()
    if dog is not None:
        del _watchdogs[proc]
        dog.release()


def tail(path: Path | None, lines: int = 30) -> str:
    if path is None or not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


class MirrorMakerRunner:
    """Real MM2, dedicated mode, default settings but for single-broker replication factors. A distinct
    `source_alias` gives distinct remote topics and a Connect cluster of its own (group and internal topics);
    `settings` are properties lines added to every start."""

    def __init__(self, source: str, target: str, cores: int, workdir: Path, source_alias: str = "mm2src",
                 settings: str = "", name: str = "mm2") -> None:
        self.source, self.target, self.cores, self.workdir = source, target, cores, workdir
        self.source_alias, self.settings, self.name = source_alias, settings, name
        self._mm: LocalMirrorMaker | None = None

    def start(self, topics: str, extra: str = "") -> subprocess.Popen[bytes]:
        properties = _mm2_properties(self.source, self.target, topics, self.cores, self.settings + extra,
                                     self.source_alias)
        self._mm = LocalMirrorMaker(properties, keep_logs=True).start()
        assert self._mm.process is not None
        return self._mm.process

    def stop(self) -> None:
        if self._mm is not None:
            self._mm.stop()

    def log_tail(self) -> str:
        return self._mm.log_tail() if self._mm else ""

    @property
    def log_dir(self) -> Path | None:
        """The folder of the latest start: its properties and logs (kept after stop())."""
        return self._mm.dir if self._mm else None


class SparkmirrorRunner:
    """`sparkmirror run` as a separate process: micro-batches with Spark on `local[cores]`, or Real-Time Mode
    with Spark's default sizing (a task slot per source partition, on the same cores). A distinct
    `source_alias` gives a distinct remote topic, so one backlog can be copied more than once; `run_args` are
    passed to every `sparkmirror run`."""

    def __init__(self, source: str, target: str, cores: int, workdir: Path, trigger: str = "micro-batch",
                 source_alias: str = "smsrc", run_args: Sequence[str] = (), master: str | None = None,
                 settings: str = "") -> None:
        self.source, self.target, self.cores, self.workdir = source, target, cores, workdir
        self.master = master  # a cluster's spark.master; None: local[cores] (micro-batch) or Spark's sizing
        self.settings = settings  # properties lines added to every start
        self.trigger = trigger
        self.source_alias = source_alias
        self.run_args = tuple(run_args)
        self.name = "sparkmirror" if trigger == "micro-batch" else f"sparkmirror-{trigger}"
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: Path | None = None

    def start(self, topics: str, extra: str = "") -> subprocess.Popen[bytes]:
        run_dir = self.workdir / f"sparkmirror-{time.monotonic_ns()}"
        run_dir.mkdir(parents=True)
        config = run_dir / "mm2.properties"
        alias = self.source_alias
        config.write_text(f"clusters = {alias}, tgt\n{alias}.bootstrap.servers = {self.source}\n"
                          f"tgt.bootstrap.servers = {self.target}\n{alias}->tgt.enabled = true\n"
                          f"{alias}->tgt.topics = {topics}\n{SINGLE_BROKER}"
                          f"tasks.max = {self.cores}\nsparkmirror.trigger.mode = {self.trigger}\n"
                          + (f"spark.master = {self.master}\n" if self.master else
                             f"spark.master = local[{self.cores}]\n" if self.trigger == "micro-batch" else "")
                          + self.settings + extra)
        self._log = run_dir / "sparkmirror.log"
        self._proc = start_sparkmirror(config, run_dir, self._log, self.run_args)
        return self._proc

    def stop(self) -> None:
        stop_process_group(self._proc)

    def resume(self) -> subprocess.Popen[bytes]:
        """Start `sparkmirror run` again on the latest start's configuration and state folder (as after a
        crash); its output goes to a new log beside the first."""
        assert self._log is not None, "resume() needs an earlier start()"
        run_dir = self._log.parent
        self._log = run_dir / f"sparkmirror-{time.monotonic_ns()}.log"
        self._proc = start_sparkmirror(run_dir / "mm2.properties", run_dir, self._log, self.run_args)
        return self._proc

    @property
    def log_path(self) -> Path | None:
        return self._log

    def log_tail(self) -> str:
        return tail(self._log)


def count_records(admin: ClusterAdmin, topics: dict[str, int]) -> int:
    """Records now in these topics (all start at offset 0 and are never compacted here); two requests
    whatever the number of topics, so polling does not load the brokers being measured."""
    present = admin.topic_partitions()
    marks = admin.watermarks_of({t: n for t, n in topics.items() if t in present})
    return sum(high - low for parts in marks.values() for low, high in parts.values())


SPARK_KAFKA_SOURCE = "sparkmirror.source.reader = spark-kafka\n"


def spark_kafka_runner(source: str, target: str, cores: int, workdir: Path, trigger: str = "micro-batch"
                       ) -> SparkmirrorRunner:
    """sparkmirror reading with Spark's Kafka source (`sparkmirror.source.reader = spark-kafka`: a task per source
    partition) instead of its own, into its own remote topics (`sksrc.<topic>`)."""
    runner = SparkmirrorRunner(source, target, cores, workdir, trigger, source_alias="sksrc",
                               settings=SPARK_KAFKA_SOURCE)
    runner.name = "sparkmirror-spark-kafka" if trigger == "micro-batch" else f"sparkmirror-{trigger}-spark-kafka"
    return runner


def exactly_once_runner(source: str, target: str, cores: int, workdir: Path) -> SparkmirrorRunner:
    """sparkmirror with `exactly.once.support = required`, into its own remote topics (`eossrc.<topic>`)."""
    runner = SparkmirrorRunner(source, target, cores, workdir, source_alias="eossrc",
                               settings="eossrc->tgt.exactly.once.support = required\n")
    runner.name = "sparkmirror-exactly-once"
    return runner


MM2_EXACTLY_ONCE_ALIAS = "mm2eossrc"


def mm2_exactly_once_settings(alias: str) -> str:
    """MM2 4.x exactly once in dedicated mode (see benchmarks/README.md for the source references): the workers
    that write to the target run source tasks with transactional producers and commit source offsets in the
    same transactions; the source consumer skips aborted records (MirrorSourceConnector.exactlyOnceSupport
    answers SUPPORTED only with read_committed); the internal REST server, which the docs ask for, is what a
    follower uses to forward zombie fencing to the leader. `exactly.once.support = required` is left out:
    MM2 applies a flow's settings to all three of its connectors, and MirrorCheckpointConnector and
    MirrorHeartbeatConnector fail its preflight check."""
    return ("dedicated.mode.enable.internal.rest = true\nlisteners = http://localhost:0\n"
            f"tgt.exactly.once.source.support = enabled\n{alias}.consumer.isolation.level = read_committed\n")


def mm2_exactly_once_runner(source: str, target: str, cores: int, workdir: Path) -> MirrorMakerRunner:
    """MM2 with exactly-once source support, into its own remote topics (`mm2eossrc.<topic>`)."""
    return MirrorMakerRunner(source, target, cores, workdir, source_alias=MM2_EXACTLY_ONCE_ALIAS,
                             settings=mm2_exactly_once_settings(MM2_EXACTLY_ONCE_ALIAS), name="mm2-exactly-once")


EXACTLY_ONCE_POSITIONS = "__sparkmirror-positions-eossrc-tgt"  # FlowConfig.positions_group of eossrc->tgt


def committed_positions(target: str, group: str, partitions: Collection[tuple[str, int]]) -> int:
    """An exactly-once flow's copied records in `partitions` ((remote topic, partition) pairs): the sum of the source
    offsets its transactions committed to its positions group there (the backlog starts at offset 0 and has no
    gaps; the remote topics' offsets count transaction markers too). Its other topics, such as `heartbeats`, are
    not asked for."""
    offsets = ConsumerGroups("target", {"bootstrap.servers": target}).committed([group], partitions).get(group, {})
    return sum(offset for offset, _ in offsets.values())


def measure_copy(runner: MirrorMakerRunner | SparkmirrorRunner, topics_regex: str, remote: dict[str, int],
                 expected: int, target_admin: ClusterAdmin, timeout_s: float,
                 counter: Callable[[], int] | None = None) -> Run:
    """Start the replicator, wait until the remote topics hold exactly `expected` records (as `counter` counts
    them; by default their offsets), stop it."""
    count = counter or (lambda: count_records(target_admin, remote))
    # The copy before this one left gigabytes of dirty pages on the brokers' disks; flushed during this copy they
    # made whichever row ran second about 10% slower (2026-11-27: the same row, 0.81x first and 1.05x second).
    os.sync()
    started = time.monotonic()
    proc = runner.start(topics_regex)
    sampler = TreeSampler(proc.pid)
    sampler.start()
    first = None
    try:
        while True:
            copied = count()
            now = time.monotonic() - started
            if copied and first is None:
                first = now
            if copied >= expected:
                break
            if proc.poll() is not None:
                raise CopyIncomplete(f"{runner.name} exited ({proc.returncode}) after copying {copied} of "
                                     f"{expected} records:\n{runner.log_tail()}")
            if now > timeout_s:
                raise CopyIncomplete(f"{runner.name} copied {copied} of {expected} records in {timeout_s:.0f} s")
            time.sleep(POLL_S)
        wall = time.monotonic() - started
        usage = sampler.stop()
    finally:
        if sampler.is_alive():
            sampler.stop()
        runner.stop()
    final = count()
    if final != expected:
        raise CopyIncomplete(f"{runner.name}: target holds {final} records, source {expected}")
    return Run(wall_s=round(wall, 2), first_record_s=round(first, 2) if first else None, usage=usage)


_PERF_LINE = re.compile(r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\)")


def measure_limit(target: str, topic: str, records: int, record_size: int, target_admin: ClusterAdmin,
                  partitions: int, producers: int = 1) -> tuple[Run, float]:
    """The ceiling of a copy into the target: Kafka's ProducerPerformance with the settings sparkmirror's writer
    gives its producers in micro-batches (batching, idempotence, acks=all: pipeline/options.producer_settings),
    `producers` of them at once (the writer has one per task, tasks.max), each sending its share of `records` into
    a fresh target topic. Returns the run (all of them, start to last end) and its records/s."""
    settings = producer_settings({})
    props = [f"bootstrap.servers={target}", *(f"{k}={v}" for k, v in sorted(settings.items()))]
    cp = os.pathsep.join(str(p) for p in jars.classpath("kafka"))
    shares = [records // producers + (1 if i < records % producers else 0) for i in range(producers)]
    started = time.monotonic()
    spawned = [watchdog.spawn([jars.java_executable(), "-Xmx512m", "-cp", cp,
                               "org.apache.kafka.tools.ProducerPerformance", "--topic", topic, "--num-records",
                               str(share), "--record-size", str(record_size), "--throughput", "-1",
                               "--producer-props", *props], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
               for share in shares]
    outputs: list[list[str]] = []
    usages: list[Usage] = []
    try:
        samplers = [TreeSampler(proc.pid) for proc, _dog in spawned]
        for sampler in samplers:
            sampler.start()
        for (proc, _dog), sampler in zip(spawned, samplers, strict=True):
            assert proc.stdout is not None
            outputs.append([raw.decode(errors="replace") for raw in proc.stdout])
            usages.append(sampler.stop())
            proc.wait()
        wall = time.monotonic() - started
        usage = Usage(round(sum(u.cpu_s for u in usages), 2), round(sum(u.peak_rss_mb for u in usages), 1))
    finally:
        for proc, dog in spawned:
            if proc.poll() is None:  # an error or an interrupt while it ran: end its group
                os.killpg(dog.pgid, signal.SIGKILL)
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
            dog.release()
    for (proc, _dog), lines in zip(spawned, outputs, strict=True):
        # Progress lines share the summary's format; the summary alone also lists percentiles.
        if proc.returncode != 0 or not any("50th" in line and _PERF_LINE.search(line) for line in lines):
            raise CopyIncomplete(f"ProducerPerformance failed ({proc.returncode}):\n{''.join(lines[-10:])}")
    copied = count_records(target_admin, {topic: partitions})
    if copied != records:
        raise CopyIncomplete(f"limit: target topic holds {copied} records, expected {records}")
    return Run(wall_s=round(wall, 2), first_record_s=None, usage=usage), round(records / wall, 1)
