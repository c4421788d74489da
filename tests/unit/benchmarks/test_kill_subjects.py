"""How the kill trial sizes sparkmirror's executors on the Spark cluster: as many task slots as local[--cores]
(micro-batch) or one per source partition (Real-Time Mode), spread over the workers."""

from __future__ import annotations

from argparse import Namespace

import pytest
from benchmarks.kill_subjects import cluster_settings, executor_cores


@pytest.mark.parametrize(("trigger", "cores", "partitions", "workers", "expected"), [
    ("micro-batch", 2, 12, 2, 1), ("micro-batch", 3, 12, 2, 2), ("micro-batch", 1, 12, 4, 1),
    ("real-time", 2, 12, 2, 6), ("real-time", 2, 5, 2, 3)])
def test_executor_cores(trigger, cores, partitions, workers, expected):
    args = Namespace(trigger=trigger, cores=cores, partitions=partitions, spark_workers=workers)
    assert executor_cores(args) == expected


def test_the_application_takes_one_executor_per_worker_and_waits_for_all():
    settings = dict(line.split(" = ") for line in cluster_settings(cores=3, workers=2).splitlines())
    assert settings["spark.executor.cores"] == "3" and settings["spark.cores.max"] == "6"
    assert settings["spark.scheduler.minRegisteredResourcesRatio"] == "1.0"
    assert settings["spark.driver.host"] == settings["spark.driver.bindAddress"] == "127.0.0.1"
