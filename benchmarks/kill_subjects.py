"""The replicators under trial and the topic they copy to: each replicator's processes and logs (`Subject`),
how it is configured (sparkmirror on the Spark standalone cluster or in local mode, MM2), and the remote topic on
the target with the broker under it (`Target`)."""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from benchmarks.kill_processes import crash, survivors
from benchmarks.replicators import MirrorMakerRunner, SparkmirrorRunner, count_records
from sparkmirror.errors import SparkmirrorError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.testing.kafka_cluster import LocalKafkaCluster
from sparkmirror.testing.spark_cluster import LocalSparkCluster

TOPIC = "kill"
EXACTLY_ONCE_ALIAS = "eossrc"  # its own remote topic, `eossrc.kill`, read by a consumer of committed records
READ_RETRY_S = 60.0
T = TypeVar("T")


@dataclass
class Subject:
    """One replicator under trial, with every process it started and the logs of each."""

    name: str
    runner: MirrorMakerRunner | SparkmirrorRunner
    no_executors: str | None = None  # why it has no executor JVMs to kill (MM2, local mode); None if it has
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)  # each process's group, led by its watchdog
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
        self.runner.stop()  # the process is gone: this only releases its watchdog

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


class Target:
    """The remote topic as the trial watches it (its records, its end offsets), and the broker under it.

    Its reads are retried for up to READ_RETRY_S: for a few seconds after a restart the broker answers metadata
    but refuses to list offsets (UNKNOWN_LEADER_EPOCH, which ClusterAdmin does not retry), and that is the
    harness's problem, not the replicator's."""

    def __init__(self, cluster: LocalKafkaCluster, topic: str, partitions: int) -> None:
        self.cluster, self.topic, self.partitions = cluster, topic, partitions
        self._admin = ClusterAdmin("target", {"bootstrap.servers": cluster.bootstrap_servers})

    def _read(self, read: Callable[[ClusterAdmin], T]) -> T:
        deadline = time.monotonic() + READ_RETRY_S
        while True:
            try:
                return read(self._admin)
            except SparkmirrorError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def count(self) -> int:
        return self._read(lambda admin: count_records(admin, {self.topic: self.partitions}))

    def ends(self) -> dict[int, int]:
        marks = self._read(lambda admin: admin.watermarks(self.topic, self.partitions))
        return {p: high for p, (_, high) in marks.items()}

    def restart_broker(self) -> float:
        """Stop the broker (SIGTERM) and start it on its data; returns the seconds until it answers again.

        A new admin client then: the old one may sit out librdkafka's reconnect backoff (up to 10 s), which would
        note the end offsets late, after records the restart made the replicator write."""
        started = time.monotonic()
        self.cluster.restart()
        took = time.monotonic() - started
        self._admin = ClusterAdmin("target", {"bootstrap.servers": self.cluster.bootstrap_servers})
        return took


def executor_cores(args: argparse.Namespace) -> int:
    """Cores of each worker and its one executor: --cores task slots in all, as local[--cores] has; in Real-Time
    Mode a slot per source partition (each is a task that never ends)."""
    slots = args.partitions if args.trigger == "real-time" else args.cores
    return max(1, math.ceil(slots / args.spark_workers))


def cluster_settings(cores: int, workers: int) -> str:
    """sparkmirror on the standalone cluster, client mode: the driver on loopback, one executor of `cores` cores
    and 512 MiB per worker, batches only once all of them have registered."""
    return (f"spark.driver.host = 127.0.0.1\nspark.driver.bindAddress = 127.0.0.1\nspark.executor.memory = 512m\n"
            f"spark.executor.cores = {cores}\nspark.cores.max = {workers * cores}\n"
            "spark.scheduler.minRegisteredResourcesRatio = 1.0\n"
            "spark.scheduler.maxRegisteredResourcesWaitingTime = 120s\n")


def make_subject(name: str, source: str, target: str, args: argparse.Namespace, work: Path,
                 spark: LocalSparkCluster | None) -> Subject:
    """The replicator `name` of kill_trial.REPLICATORS; sparkmirror on `spark`'s executors, or local without it."""
    if name == "mm2":
        return Subject("mm2", MirrorMakerRunner(source, target, args.cores, work), no_executors="MM2 has no executors")
    settings = cluster_settings(executor_cores(args), args.spark_workers) if spark else ""
    master = spark.master_url if spark else None
    no_executors = None if spark else "local mode (--spark-workers 0): no executor JVMs"
    if name == "sparkmirror-exactly-once":
        runner = SparkmirrorRunner(source, target, args.cores, work, args.trigger, source_alias=EXACTLY_ONCE_ALIAS,
                                   master=master,
                                   settings=f"{EXACTLY_ONCE_ALIAS}->tgt.exactly.once.support = required\n{settings}")
        runner.name = name
        return Subject(name, runner, no_executors)
    runner = SparkmirrorRunner(source, target, args.cores, work, args.trigger, master=master, settings=settings)
    return Subject(runner.name, runner, no_executors)
