"""LocalSparkCluster: a PySpark driver in client mode runs its tasks on both workers; kill_worker() ends one
worker and its executors only; stop(), and the SIGKILL of the Python process that started a cluster, leave no
master, worker, executor or pyspark daemon behind.

Every driver runs in a process of its own (the test's own local `spark` session stays untouched), watched like
the cluster's JVMs, and prints the working folder of each task: an executor runs in
`<worker's work dir>/<app id>/<executor id>/`, so the folders name the workers and executors that ran them.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from sparkmirror.testing import watchdog
from sparkmirror.testing.processes import alive, group_members, process_tree
from sparkmirror.testing.spark_cluster import LocalSparkCluster

from .conftest import wait_until

JOB_TIMEOUT_S = 180.0  # a session whose two executors must register, and an 8-task job, on 2 loaded cores
GONE_S = 30.0  # the watchdog's SIGTERM, the daemons' shutdown, and SIGKILL after the 5 s grace period
EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"

# A client-mode driver: one executor (1 core, 512 MiB) per worker, scheduling only once both have registered;
# prints the working folder of each of 8 tasks, then stops, or with "hold" keeps its executors until killed.
_DRIVER = """
import json, os, signal, sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master(sys.argv[1]).appName("test-spark-cluster")
         .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
         .config("spark.driver.memory", "512m").config("spark.ui.enabled", "false")
         .config("spark.executor.memory", "512m").config("spark.executor.cores", "1").config("spark.cores.max", "2")
         .config("spark.scheduler.minRegisteredResourcesRatio", "1.0")
         .config("spark.scheduler.maxRegisteredResourcesWaitingTime", "120s").getOrCreate())
folders = spark.sparkContext.parallelize(range(8), 8).map(lambda _: os.getcwd()).collect()
print(json.dumps(folders), flush=True)
if "hold" in sys.argv:
    signal.pause()
spark.stop()
"""

# Starts a cluster, prints its master URL, daemons and folder, and waits to be killed.
_OWNER = """
import json, signal, sys
from sparkmirror.testing.spark_cluster import LocalSparkCluster
cluster = LocalSparkCluster(sys.argv[1]).start()
print(json.dumps({"master_url": cluster.master_url, "pids": cluster.pids, "dir": str(cluster.dir)}), flush=True)
signal.pause()
"""


@contextlib.contextmanager
def driver(master_url: str, log: Path, hold: bool = False) -> Iterator[list[str]]:
    """Run _DRIVER's job on `master_url`; yield its tasks' working folders. With `hold` the driver and its
    executors live until the block ends (then the driver is killed); otherwise the driver has ended by then."""
    with open(log, "wb") as err:
        process, dog = watchdog.spawn([sys.executable, "-c", _DRIVER, master_url, *(["hold"] if hold else [])],
                                      stdout=subprocess.PIPE, stderr=err,
                                      env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], JOB_TIMEOUT_S)
        line = process.stdout.readline() if ready else b""
        assert line, f"the driver printed no task folders within {JOB_TIMEOUT_S:.0f} s:\n{log.read_text()[-3000:]}"
        yield json.loads(line)
        if not hold:
            assert process.wait(timeout=JOB_TIMEOUT_S) == 0, log.read_text()[-3000:]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(dog.pgid, signal.SIGKILL)
        process.wait()
        dog.release()


def worker_of(cluster_dirs: list[Path], folder: str) -> int:
    """The number of the worker whose work dir holds an executor's folder."""
    return cluster_dirs.index(Path(folder).parents[1])


def cluster_processes(pids: dict[str, int]) -> dict[int, str]:
    """Every live process of the daemons `pids` and of their descendants (executors, pyspark daemons)."""
    return {pid: cmd for root in pids.values() for pid, cmd in process_tree(root).items()}


def test_a_client_mode_job_runs_tasks_on_both_workers(spark_cluster, tmp_path):
    with driver(spark_cluster.master_url, tmp_path / "driver.log") as folders:
        executors = set(folders)
    assert len(folders) == 8
    assert len(executors) == 2, f"tasks ran in {executors}"
    assert {worker_of(spark_cluster.worker_dirs, f) for f in executors} == {0, 1}


def test_kill_worker_ends_its_executors_and_stop_ends_everything(unique, tmp_path):
    with (LocalSparkCluster(f"test-spark-stop-{unique}", keep_logs=True) as cluster,
          driver(cluster.master_url, tmp_path / "driver.log", hold=True) as folders):
        assert {worker_of(cluster.worker_dirs, f) for f in folders} == {0, 1}
        pids = cluster.pids
        lost = process_tree(pids["worker-1"])
        kept = cluster_processes({name: pid for name, pid in pids.items() if name != "worker-1"})
        assert sum(EXECUTOR_CLASS in cmd for cmd in lost.values()) == 1, lost
        assert any("pyspark.daemon" in cmd for cmd in lost.values()), lost

        cluster.kill_worker(1)
        wait_until(lambda: not any(alive(p) for p in lost), GONE_S,
                   f"worker 1, its executor and its pyspark daemons {sorted(lost)} to end")
        assert all(alive(p) for p in kept), "kill_worker(1) ended processes of the master or of worker 0"
        wait_until(lambda: cluster.alive_workers() == [0], GONE_S, "the master to list worker 0 alone as ALIVE")

        cluster.stop()
        assert cluster.pids == {}
        wait_until(lambda: not any(alive(p) for p in kept), GONE_S,
                   f"the master, worker 0, its executor and its pyspark daemons {sorted(kept)} to end")
    shutil.rmtree(cluster.dir, ignore_errors=True)


def test_the_cluster_its_executors_and_watchdogs_end_with_their_owner(unique, tmp_path):
    with open(tmp_path / "owner.log", "wb") as log:
        owner = subprocess.Popen([sys.executable, "-c", _OWNER, f"test-spark-owner-{unique}"],
                                 stdout=subprocess.PIPE, stderr=log, text=True)
    assert owner.stdout is not None
    line = owner.stdout.readline()
    started = json.loads(line) if line else None
    groups: list[int] = []
    try:
        assert started, f"the owner did not start its cluster:\n{(tmp_path / 'owner.log').read_text()}"
        groups = [os.getpgid(pid) for pid in started["pids"].values()]
        with driver(started["master_url"], tmp_path / "driver.log", hold=True) as folders:
            assert len(set(folders)) == 2
            processes = cluster_processes(started["pids"])
            assert sum(EXECUTOR_CLASS in cmd for cmd in processes.values()) == 2, processes
            owner.kill()  # the driver lives on: only the watchdogs can end the executors
            assert owner.wait(timeout=GONE_S) == -signal.SIGKILL
            wait_until(lambda: not any(alive(p) for p in processes) and not any(map(group_members, groups)),
                       GONE_S, f"the daemons, executors and pyspark daemons {sorted(processes)} and the process "
                       f"groups {groups} to end after the owner's SIGKILL")
    finally:
        owner.kill()
        owner.wait()
        for group in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
        if started:
            shutil.rmtree(started["dir"], ignore_errors=True)  # the owner never reached stop()
