"""The kill trial's processes: killing a process group until none of it is left, finding leftovers by folder,
and the Spark executor JVMs a standalone worker started (to SIGKILL one of them).

Everything here reads /proc: Linux only, like the trial.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.measure import tree_snapshot
from sparkmirror.testing.spark_cluster import LocalSparkCluster

GONE_TIMEOUT_S = 30.0
EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"


def _group_and_state(pid: int) -> tuple[int, str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2:].split()
    return int(fields[2]), fields[0]


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    return (gs := _group_and_state(pid)) is not None and gs[1] != "Z"


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


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return raw.decode(errors="replace").split("\0")


def leftovers(markers: Sequence[str]) -> list[int]:
    """Live processes (not this one) whose command line names one of our folders: the last safety net."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        cmdline = "\0".join(_cmdline(int(name)))
        if any(m in cmdline for m in markers) and alive(int(name)):
            out.append(int(name))
    return out


@dataclass(frozen=True, slots=True)
class ExecutorProcess:
    """One executor JVM of a standalone worker: what the trial SIGKILLs and records."""

    pid: int
    worker: str  # the worker's name in LocalSparkCluster.pids, e.g. "worker-1"
    app_id: str
    executor_id: str


def executor_of(argv: Sequence[str]) -> tuple[str, str] | None:
    """(application id, executor id) from an executor JVM's command line (the worker passes both as options
    of CoarseGrainedExecutorBackend); None for any other command line."""
    if EXECUTOR_CLASS not in argv:
        return None
    options = dict(zip(argv, argv[1:], strict=False))
    app_id, executor_id = options.get("--app-id"), options.get("--executor-id")
    return (app_id, executor_id) if app_id and executor_id else None


def newest_active_app(master_status: Mapping[str, object] | None) -> str | None:
    """The id of the newest application the master's `/json/` page lists as active (ids sort by start time)."""
    apps = (master_status or {}).get("activeapps")
    ids = [a["id"] for a in apps if isinstance(a, dict) and isinstance(a.get("id"), str)] if isinstance(
        apps, list) else []
    return max(ids, default=None)


def executors(worker_pids: Mapping[str, int]) -> list[ExecutorProcess]:
    """The live executor JVMs in each worker's process tree (a worker starts them as its children)."""
    out = []
    for worker, root in sorted(worker_pids.items()):
        for pid in tree_snapshot(root):
            if pid != root and alive(pid) and (ids := executor_of(_cmdline(pid))):
                out.append(ExecutorProcess(pid, worker, *ids))
    return out


def worker_pids(spark: LocalSparkCluster) -> dict[str, int]:
    """The running workers' JVM pids by name ("worker-0", ...)."""
    return {n: pid for n, pid in spark.pids.items() if n.startswith("worker-")}


def app_executors(spark: LocalSparkCluster) -> tuple[str | None, list[ExecutorProcess]]:
    """The application the master runs now (the replicator's driver) and its live executor JVMs."""
    app = newest_active_app(spark.master_status())
    return app, [e for e in executors(worker_pids(spark)) if e.app_id == app]


def kill_executor(executor: ExecutorProcess, timeout_s: float = GONE_TIMEOUT_S) -> None:
    """SIGKILL one executor JVM (not its worker) and wait until it is gone (its worker reaps it)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(executor.pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout_s
    while alive(executor.pid):
        if time.monotonic() > deadline:
            raise RuntimeError(f"executor {executor.executor_id} (pid {executor.pid}) survived SIGKILL")
        time.sleep(0.05)
