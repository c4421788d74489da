"""The pure parts of LocalSparkCluster: its daemons' command lines and environment, and reading the master's
`/json/` page (a real one, captured from a Spark 4 master after one of its two workers was SIGKILLed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sparkmirror.testing.spark_cluster import (
    HOST,
    LocalSparkCluster,
    WorkerSpec,
    alive_worker_ports,
    daemon_env,
    master_command,
    worker_command,
)

STATUS = json.loads((Path(__file__).parents[2] / "data" / "spark" / "master-status-one-worker-lost.json").read_text())
SPARK_HOME = Path("/opt/pyspark")


def test_the_master_runs_from_spark_class_on_loopback_ports():
    assert master_command(SPARK_HOME, 7077, 8080) == [
        "bash", "/opt/pyspark/bin/spark-class", "org.apache.spark.deploy.master.Master",
        "--host", "127.0.0.1", "--port", "7077", "--webui-port", "8080"]


def test_each_worker_has_its_own_ports_cores_memory_and_work_dir():
    cmd = worker_command(SPARK_HOME, "spark://127.0.0.1:7077", 40001, 40002, WorkerSpec(cores=2, memory="768m"),
                         Path("/srv/w0/work"))
    assert cmd[:3] == ["bash", "/opt/pyspark/bin/spark-class", "org.apache.spark.deploy.worker.Worker"]
    options = dict(zip(cmd[3:-1:2], cmd[4:-1:2], strict=True))
    assert options == {"--host": HOST, "--port": "40001", "--webui-port": "40002", "--cores": "2",
                       "--memory": "768m", "--work-dir": "/srv/w0/work"}
    assert cmd[-1] == "spark://127.0.0.1:7077"


def test_daemons_get_the_wheel_and_loopback_and_none_of_the_callers_spark_settings():
    base = {"PATH": "/usr/bin", "JAVA_HOME": "/jdk", "SPARK_HOME": "/elsewhere", "SPARK_MASTER_HOST": "spark.example",
            "SPARK_CONF_DIR": "/etc/spark"}
    env = daemon_env(base, SPARK_HOME, Path("/srv/c/conf"), "256m", {"SPARK_WORKER_DIR": "/srv/c/work"})
    assert env == {"PATH": "/usr/bin", "JAVA_HOME": "/jdk", "SPARK_HOME": "/opt/pyspark",
                   "SPARK_CONF_DIR": "/srv/c/conf", "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_DAEMON_MEMORY": "256m",
                   "SPARK_DAEMON_JAVA_OPTS": env["SPARK_DAEMON_JAVA_OPTS"], "SPARK_WORKER_DIR": "/srv/c/work"}
    assert "-Xshare:auto" in env["SPARK_DAEMON_JAVA_OPTS"].split()


def test_only_alive_workers_count_and_only_on_an_alive_master():
    assert alive_worker_ports(STATUS) == {34755}  # its DEAD worker 36657 stays listed
    assert alive_worker_ports({**STATUS, "status": "STANDBY"}) == set()
    assert alive_worker_ports({"status": "ALIVE"}) == set()
    assert alive_worker_ports({"status": "ALIVE", "workers": [{"state": "ALIVE"}, "junk"]}) == set()


def test_worker_specs_are_checked_and_a_count_means_default_workers():
    assert LocalSparkCluster(workers=3).workers == (WorkerSpec(1, "1g"),) * 3
    assert LocalSparkCluster(workers=[WorkerSpec(2, "2g")]).workers == (WorkerSpec(2, "2g"),)
    with pytest.raises(ValueError, match="at least one worker"):
        LocalSparkCluster(workers=0)
    with pytest.raises(ValueError, match="at least one core"):
        WorkerSpec(cores=0)
    with pytest.raises(ValueError, match="512m or 1g"):
        WorkerSpec(memory="1 GB")


def test_urls_name_the_master_on_loopback():
    cluster = LocalSparkCluster()
    cluster.master_port, cluster.master_ui_port = 7077, 8080
    assert (cluster.master_url, cluster.master_ui_url) == ("spark://127.0.0.1:7077", "http://127.0.0.1:8080")
