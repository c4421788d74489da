"""build_spark_session(): the one place a SparkSession is created."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from importlib import resources

from py4j.protocol import Py4JError
from pyspark.sql import SparkSession

from sparkmirror.embedded import jars

logger = logging.getLogger(__name__)

DEFAULT_MASTER = "local[*,4]"  # all cores; a failed task is retried up to 4 times, as on a cluster


def spark_defaults() -> dict[str, str]:
    """Settings sparkmirror needs; `spark.*` keys of the properties file override them."""
    log_cfg = resources.files("sparkmirror.embedded").joinpath("spark-log4j2.properties")
    return {
        "spark.master": DEFAULT_MASTER,
        "spark.app.name": "sparkmirror",
        "spark.jars": ",".join(str(p) for p in jars.classpath("spark-kafka")),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.python.worker.reuse": "true",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={log_cfg}",
        "spark.executor.extraJavaOptions": f"-Dlog4j2.configurationFile={log_cfg}",
        "spark.sql.streaming.stopGracefullyOnShutdown": "true",
        # Local mode talks to itself over loopback only.
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
    }


def build_spark_session(overrides: Mapping[str, str] | None = None) -> SparkSession:
    """Get or create the session; Python workers run this interpreter so they import sparkmirror."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder
    for key, value in {**spark_defaults(), **(overrides or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def stop_quietly(stoppable: object, what: str) -> None:
    """Call `.stop()`, tolerating a Spark JVM that is already gone (it got the same signal we did)."""
    try:
        stoppable.stop()  # type: ignore[attr-defined]
    except (Py4JError, ConnectionError) as exc:
        logger.debug("%s already stopped with the JVM: %s", what, exc)
