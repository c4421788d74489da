"""`spark-submit ... $(sparkmirror submit-args) run mm2.properties`: the same run, in the driver spark-submit
starts. Its `--master` wins over the file's `spark.master` (here `local[2]`, which would keep every task in the
driver): executors on the standalone cluster's workers show it did. Without sparkmirror's jars the run stops
at once with the fix, instead of failing on the Kafka source's missing class."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
from pathlib import Path

import pytest

from sparkmirror.jars import pyspark_jars_dir
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.testing import watchdog
from sparkmirror.testing.processes import alive, children, command_line
from sparkmirror.testing.records import read_all

from .conftest import cli_command
from .test_run_cli import backlog, copied, wait_for, write_config
from .test_spark_cluster_run import CLUSTER_SETTINGS

RECORDS = 2000
PARTITIONS = 2
COPY_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 90.0
SPARK_HOME = pyspark_jars_dir().parent  # the pyspark wheel's Spark distribution
SPARK_SUBMIT = ["bash", str(SPARK_HOME / "bin" / "spark-submit")]
SUBMIT_ENV = {**os.environ, "SPARK_HOME": str(SPARK_HOME)}


def submit_args() -> list[str]:
    out = subprocess.run(cli_command("submit-args"), capture_output=True, text=True, timeout=120, check=True)
    return shlex.split(out.stdout)


@pytest.fixture
def submit(tmp_path):
    """Start spark-submit in a watched process group; the group is killed at teardown."""
    started: list[tuple[subprocess.Popen, watchdog.Watchdog]] = []

    def start(*args: str) -> subprocess.Popen:
        log = open(tmp_path / f"submit-{len(started)}.log", "wb")  # noqa: SIM115
        proc, dog = watchdog.spawn([*SPARK_SUBMIT, *args], stdout=log, stderr=subprocess.STDOUT, env=SUBMIT_ENV)
        proc.log_path = Path(log.name)  # type: ignore[attr-defined]
        started.append((proc, dog))
        return proc

    yield start
    for proc, dog in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(dog.pgid, signal.SIGKILL)
        proc.wait()
        dog.release()


def python_driver(submit_pid: int) -> int:
    """The Python program spark-submit's JVM runs: SIGTERM stops it as it stops `sparkmirror run`."""
    found = children(submit_pid)
    drivers = [pid for pid in found if "spark_submit.py" in (command_line(pid) or "")]
    assert len(drivers) == 1, f"one Python driver under spark-submit, found {drivers} among {found}"
    return drivers[0]


def test_spark_submit_runs_sparkmirror_on_the_cluster_it_names(clusters, spark_cluster, submit, tmp_path, unique):
    topic = f"submitted-{unique}"
    sent = backlog(clusters.source, topic, PARTITIONS, RECORDS, unique)
    path = tmp_path / "mm2.properties"
    write_config(path, clusters.source, clusters.target, topic, f"spark.master = local[2]\n{CLUSTER_SETTINGS}")
    executors_before = [set(d.glob("app-*/*")) for d in spark_cluster.worker_dirs]
    run = submit("--master", spark_cluster.master_url, *submit_args(),
                 "run", str(path), "--state-dir", str(tmp_path / "state"))
    remote = f"A.{topic}"
    target = ClusterAdmin("B", {"bootstrap.servers": clusters.target})
    wait_for(lambda: copied(target, remote, PARTITIONS) == RECORDS, COPY_TIMEOUT_S,
             f"{RECORDS} records of {topic} on B", run)

    os.kill(python_driver(run.pid), signal.SIGTERM)
    assert run.wait(STOP_TIMEOUT_S) == 0, run.log_path.read_text()[-3000:]
    copies = read_all(clusters.target, remote, PARTITIONS)
    for p in range(PARTITIONS):
        assert [r.value for r in copies[p]] == [r.value for r in sent if r.partition == p], f"{remote}-{p} differs"
    new_executors = [set(d.glob("app-*/*")) - before for d, before in zip(spark_cluster.worker_dirs,
                                                                          executors_before, strict=True)]
    assert all(new_executors), f"spark-submit's --master, not the file's local[2]: an executor per worker " \
                               f"{new_executors}"


def test_spark_submit_without_the_jars_names_the_fix(clusters, tmp_path, unique):
    path = tmp_path / "mm2.properties"
    write_config(path, clusters.source, clusters.target, f"nojars-{unique}")
    args = submit_args()
    jars_at = args.index("--jars")
    without_jars = args[:jars_at] + args[jars_at + 2:]  # the Python with sparkmirror, but no jars
    done = watchdog.run([*SPARK_SUBMIT, "--master", "local[1]", *without_jars, "run", str(path),
                         "--state-dir", str(tmp_path / "state")], timeout_s=180, env=SUBMIT_ENV)
    assert done.returncode != 0, done.stdout[-2000:]
    assert "spark-submit was not given sparkmirror's jars" in done.stdout + done.stderr, done.stderr[-3000:]
    assert "sparkmirror submit-args" in done.stdout + done.stderr


def test_the_python_driver_ends_with_spark_submits_jvm(clusters, submit, tmp_path, unique):
    """A SIGTERM to spark-submit (a service manager's stop) reaches only its JVM, which does not pass it on: the
    Python program must notice its parent is gone and stop, or it would run on, orphaned (as it did)."""
    path = tmp_path / "mm2.properties"
    write_config(path, clusters.source, clusters.target, f"orphan-{unique}")
    run = submit("--master", "local[1]", *submit_args(), "run", str(path), "--state-dir", str(tmp_path / "state"))
    wait_for(lambda: "flow A->B" in run.log_path.read_text(), COPY_TIMEOUT_S, "the flow to start", run)
    driver = python_driver(run.pid)
    run.send_signal(signal.SIGTERM)
    run.wait(STOP_TIMEOUT_S)
    wait_for(lambda: not alive(driver), STOP_TIMEOUT_S,
             "the Python driver to end after spark-submit's JVM")  # its output went through the JVM: gone too

