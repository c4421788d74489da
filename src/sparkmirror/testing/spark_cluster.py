"""LocalSparkCluster: a Spark standalone cluster on loopback, one master and N workers as separate processes.

Each daemon is started with the pyspark wheel's own `bin/spark-class` (which resolves Spark's JVM options and
execs `java`, so the pid is the JVM's), in an environment of our own: the wheel as SPARK_HOME, an empty conf
folder, no inherited SPARK_* variables, everything bound to 127.0.0.1 on free ports, every folder under one temp
dir. Ready means the master's JSON page (`/json/`) lists every worker as ALIVE.

Each daemon runs in a process group of its own, led by its watchdog (see watchdog.py), so it ends when the owning
Python process ends, however it ends. A worker starts its executors as plain children (Java's ProcessBuilder), so
they stay in the worker's group: the watchdog, kill_worker() and stop() end them with it (an executor would also
exit by itself once its worker's connection drops). The Python workers an executor forks (`pyspark.daemon`) move
to a group of their own, but exit as soon as their executor's pipe closes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sparkmirror import jars
from sparkmirror.errors import EmbeddedSetupError
from sparkmirror.testing import watchdog
from sparkmirror.testing.kafka_cluster import free_ports

__all__ = ["HOST", "LocalSparkCluster", "WorkerSpec", "alive_worker_ports", "daemon_env", "master_command",
           "worker_command"]

logger = logging.getLogger(__name__)

HOST = "127.0.0.1"
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 20.0
POLL_S = 0.2
DAEMON_HEAP = "256m"  # the master's and each worker's own heap; a worker's executors get WorkerSpec.memory
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
_DAEMON_FLAGS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-Djava.awt.headless=true"]
_MASTER_OPTS = ["-Dspark.master.rest.enabled=false"]  # no REST submission server on port 6066
_MEMORY = re.compile(r"[1-9][0-9]*[mMgG]")


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """What one worker offers its executors: `--cores` and `--memory` (e.g. "1g", "512m")."""

    cores: int = 1
    memory: str = "1g"

    def __post_init__(self) -> None:
        if self.cores < 1:
            raise ValueError(f"a worker needs at least one core, not {self.cores}")
        if not _MEMORY.fullmatch(self.memory):
            raise ValueError(f"worker memory must look like 512m or 1g, not {self.memory!r}")


def master_command(spark_home: Path, port: int, ui_port: int) -> list[str]:
    """The master's command line, on loopback."""
    return ["bash", str(spark_home / "bin" / "spark-class"), MASTER_CLASS,
            "--host", HOST, "--port", str(port), "--webui-port", str(ui_port)]


def worker_command(spark_home: Path, master_url: str, port: int, ui_port: int, spec: WorkerSpec,
                   work_dir: Path) -> list[str]:
    """A worker's command line: its own ports, cores, memory and work dir (where its executors run)."""
    return ["bash", str(spark_home / "bin" / "spark-class"), WORKER_CLASS,
            "--host", HOST, "--port", str(port), "--webui-port", str(ui_port),
            "--cores", str(spec.cores), "--memory", spec.memory, "--work-dir", str(work_dir), master_url]


def daemon_env(base: Mapping[str, str], spark_home: Path, conf_dir: Path, heap: str,
               extra: Mapping[str, str]) -> dict[str, str]:
    """`base` without its SPARK_* variables (a user's SPARK_MASTER_HOST or SPARK_CONF_DIR must not leak in),
    plus what a loopback daemon of the wheel needs and `extra` (e.g. SPARK_MASTER_OPTS)."""
    env = {k: v for k, v in base.items() if not k.startswith("SPARK_")}
    env.update({"SPARK_HOME": str(spark_home), "SPARK_CONF_DIR": str(conf_dir), "SPARK_LOCAL_IP": HOST,
                "SPARK_DAEMON_MEMORY": heap, "SPARK_DAEMON_JAVA_OPTS": " ".join(_DAEMON_FLAGS), **extra})
    return env


def alive_worker_ports(status: Mapping[str, object]) -> frozenset[int]:
    """Ports of the workers the master's `/json/` page lists as ALIVE; none unless the master itself is ALIVE.

    The page also lists workers that were lost (DEAD), and a restarted worker again under a new id.
    """
    workers = status.get("workers")
    if status.get("status") != "ALIVE" or not isinstance(workers, list):
        return frozenset()
    return frozenset(w["port"] for w in workers
                     if isinstance(w, dict) and w.get("state") == "ALIVE" and isinstance(w.get("port"), int))


@dataclass
class _Daemon:
    """One watched JVM: the master or a worker, with its executors in the same process group."""

    name: str
    process: subprocess.Popen[bytes]
    dog: watchdog.Watchdog
    ended: bool = False

    def kill(self) -> None:
        """SIGKILL the whole group (the JVM, its executors, the watchdog) and reap it."""
        if self.ended:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.dog.pgid, signal.SIGKILL)
        self.process.wait()
        self.dog.release()
        self.ended = True

    def end(self, deadline: float) -> None:
        """Wait for a SIGTERMed JVM until `deadline`, then kill what is left of its group."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        self.kill()


class LocalSparkCluster:
    """A Spark standalone master and workers on loopback; use as a context manager or call start()/stop().

    Invariant: while started, every daemon runs in a process group of its own led by its watchdog, and
    `master_url` names the running master. Workers are numbered from 0 in the order of `workers`.
    """

    def __init__(self, name: str = "spark", workers: int | Sequence[WorkerSpec] = 2, daemon_heap: str = DAEMON_HEAP,
                 keep_logs: bool = False) -> None:
        """`workers`: how many workers of 1 core and 1 GiB, or one WorkerSpec each."""
        self.name = name
        self.workers = tuple(WorkerSpec() for _ in range(workers)) if isinstance(workers, int) else tuple(workers)
        if not self.workers:
            raise ValueError("a Spark cluster needs at least one worker")
        self.daemon_heap = daemon_heap
        self.keep_logs = keep_logs
        self.dir: Path | None = None
        self.master_port = 0
        self.master_ui_port = 0
        self.worker_ports: list[int] = []  # each worker's RPC port, as the master's page lists it
        self.worker_ui_ports: list[int] = []
        self._master: _Daemon | None = None
        self._workers: list[_Daemon] = []

    @property
    def master_url(self) -> str:
        """What a driver sets as spark.master (client mode)."""
        return f"spark://{HOST}:{self.master_port}"

    @property
    def master_ui_url(self) -> str:
        return f"http://{HOST}:{self.master_ui_port}"

    @property
    def worker_dirs(self) -> list[Path]:
        """Each worker's work dir; an executor runs in `<work dir>/<app id>/<executor id>/`."""
        assert self.dir is not None
        return [self.dir / f"worker-{i}" / "work" for i in range(len(self.workers))]

    @property
    def pids(self) -> dict[str, int]:
        """The running daemons' JVM pids by name ("master", "worker-0", ...), for tests that watch them."""
        daemons = [self._master, *self._workers] if self._master is not None else self._workers
        return {d.name: d.process.pid for d in daemons if not d.ended and d.process.poll() is None}

    def start(self) -> LocalSparkCluster:
        """Start the master, then the workers once it answers; return when every worker is ALIVE."""
        started = time.monotonic()
        spark_home = jars.pyspark_jars_dir().parent
        jars.java_executable()  # fail here, with the fix, rather than in spark-class
        self.dir = Path(tempfile.mkdtemp(prefix=f"sparkmirror-{self.name}-"))
        (self.dir / "conf").mkdir()
        (self.dir / "logs").mkdir()
        ports = free_ports(2 + 2 * len(self.workers))
        self.master_port, self.master_ui_port = ports[:2]
        self.worker_ports, self.worker_ui_ports = ports[2::2], ports[3::2]
        try:
            self._master = self._spawn("master", master_command(spark_home, self.master_port, self.master_ui_port),
                                       spark_home, {"SPARK_MASTER_OPTS": " ".join(_MASTER_OPTS)})
            self._wait(lambda status: status is not None, "the master to answer")
            for i, spec in enumerate(self.workers):
                self._workers.append(self._start_worker(i, spec, spark_home))
            self._wait(lambda status: status is not None and self._all_alive(status),
                       f"{len(self.workers)} workers to be ALIVE")
        except BaseException:
            self.stop()
            raise
        logger.info("local Spark cluster %s ready at %s workers=%d took_ms=%d", self.name, self.master_url,
                    len(self.workers), (time.monotonic() - started) * 1000)
        return self

    def _start_worker(self, i: int, spec: WorkerSpec, spark_home: Path) -> _Daemon:
        assert self.dir is not None
        work, local = self.dir / f"worker-{i}" / "work", self.dir / f"worker-{i}" / "local"
        work.mkdir(parents=True)
        local.mkdir()
        cmd = worker_command(spark_home, self.master_url, self.worker_ports[i], self.worker_ui_ports[i], spec, work)
        env = {"SPARK_WORKER_DIR": str(work), "SPARK_LOCAL_DIRS": str(local)}
        return self._spawn(f"worker-{i}", cmd, spark_home, env)

    def _spawn(self, name: str, cmd: list[str], spark_home: Path, extra_env: Mapping[str, str]) -> _Daemon:
        assert self.dir is not None
        env = daemon_env(os.environ, spark_home, self.dir / "conf", self.daemon_heap, extra_env)
        with open(self.dir / "logs" / f"{name}.out", "ab") as out:
            process, dog = watchdog.spawn(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        return _Daemon(name, process, dog)

    def _all_alive(self, status: Mapping[str, object]) -> bool:
        return alive_worker_ports(status) >= set(self.worker_ports)

    def _wait(self, ready: Callable[[Mapping[str, object] | None], bool], what: str,
              timeout_s: float = START_TIMEOUT_S) -> None:
        """Poll the master's status until `ready`; raise with the log tails if a daemon exits or time runs out."""
        deadline = time.monotonic() + timeout_s
        while not ready(self.master_status()):
            exited = [d.name for d in (self._master, *self._workers) if d is not None and d.process.poll() is not None]
            if exited:
                raise EmbeddedSetupError(f"local Spark cluster '{self.name}': {', '.join(exited)} exited while "
                                         f"waiting for {what}:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise EmbeddedSetupError(f"local Spark cluster '{self.name}': no {what} after {timeout_s:.0f} s:\n"
                                         f"{self.log_tail()}")
            time.sleep(POLL_S)

    def master_status(self) -> dict[str, object] | None:
        """The master's `/json/` page, or None while it does not answer."""
        try:
            with urllib.request.urlopen(f"{self.master_ui_url}/json/", timeout=2.0) as answer:  # noqa: S310 (http)
                status = json.loads(answer.read())
        except (OSError, ValueError):  # refused, reset, timed out (URLError is an OSError), or half a page
            return None
        return status if isinstance(status, dict) else None

    def alive_workers(self) -> list[int]:
        """The numbers of the workers the master now lists as ALIVE."""
        status = self.master_status()
        ports = alive_worker_ports(status) if status is not None else frozenset()
        return [i for i, port in enumerate(self.worker_ports) if port in ports]

    def kill_worker(self, i: int) -> None:
        """SIGKILL worker `i` and its executors (a lost machine); the master notices the lost connection."""
        self._workers[i].kill()

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of each daemon's output and of the latest executor's stderr on each worker."""
        if self.dir is None:
            return ""
        files = sorted((self.dir / "logs").glob("*.out"))
        for work in self.worker_dirs:
            files += sorted(work.glob("*/*/stderr"), key=lambda f: f.stat().st_mtime)[-1:]
        chunks = []
        for f in files:
            tail = f.read_text(errors="replace").splitlines()[-lines:]
            chunks.append("\n".join([f"--- {f.relative_to(self.dir)}", *tail]))
        return "\n".join(chunks)

    def stop(self) -> None:
        """SIGTERM the workers (they end their executors), then the master; SIGKILL whatever is left of each
        group after STOP_TIMEOUT_S; remove the folder unless keep_logs."""
        for daemons in (self._workers, [self._master] if self._master is not None else []):
            deadline = time.monotonic() + STOP_TIMEOUT_S
            for d in daemons:
                if not d.ended and d.process.poll() is None:
                    d.process.terminate()
            for d in daemons:
                d.end(deadline)
        self._workers, self._master = [], None
        if self.dir is not None and not self.keep_logs:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> LocalSparkCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
