"""build_spark_session(): the one place a SparkSession is created."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from importlib import resources

from py4j.protocol import Py4JError
from pyspark.sql import SparkSession

from sparkmirror.pipeline import class_archive
from sparkmirror.pipeline.submit import (
    SUBMIT_ENTRY_POINT,
    launched_by_spark_submit,
    require_record_path_jars,
    session_jars,
)

logger = logging.getLogger(__name__)

DEFAULT_MASTER = "local[*,4]"  # all cores; a failed task is retried up to 4 times, as on a cluster
# Real-Time Mode holds a task slot per source partition for good; room for partitions added later
REAL_TIME_SLOT_HEADROOM = 8


def default_master(real_time_slots: int = 0) -> str:
    """All cores; with Real-Time Mode flows, at least a thread per source partition they read (plus room
    to grow), since each partition is a task that never ends (idle ones wait on the broker, not the CPU)."""
    if real_time_slots <= 0:
        return DEFAULT_MASTER
    return f"local[{max(os.cpu_count() or 1, real_time_slots + REAL_TIME_SLOT_HEADROOM)},4]"


# The JIT's second tier (C2) compiles a method once it ran about 5,000 times (15,000 with its loops). Starting a
# session and a first query runs thousands of Spark methods that often, so C2 spent seconds of a 2-core machine
# on code that runs no more after start-up, while the first records waited. Four times the thresholds leave C2
# the record path's own loops, which pass them within a second of copying. Measured (2,000,000 records, 12
# partitions, medians of 3): CPU 34.2 s against 37.2 s; C1 alone (-XX:TieredStopAtLevel=1) reached the first
# record 1.8 s sooner but took 24% longer to copy (benchmarks/README.md).
JIT_OPTIONS = ("-XX:Tier4InvocationThreshold=20000 -XX:Tier4MinInvocationThreshold=2400 "
               "-XX:Tier4CompileThreshold=60000 -XX:Tier4BackEdgeThreshold=160000")
# The throughput collector in both trigger modes: no concurrent marking threads or G1 write barriers beside the
# record path. Measured with JIT_OPTIONS over 1,000 partitions (micro-batch): CPU 53.2 s against 62.2 s with G1
# (70.5 s with neither), copy 50.2 s against 54.0 s. In Real-Time Mode (the benchmark's latency mode, 12 partitions
# at 5 MB/s, runs alternated on the same clusters): 31.5 and 31.8 CPU s against G1's 34.5 and 35.5 in 40 s runs,
# 52.1 to 52.8 against 56.9 in 120 s runs, with the same p50 (35.5-36.4 ms) and p99 139-169 against 204 ms over
# 120 s. What a running copy allocates dies young: after the warm-up its pauses were young ones of 15-22 ms at most
# (G1's 21 ms), and the old generation grew 14 MB in 2 minutes. Its full collections came at start-up only, when
# the metaspace grows. A file's own spark.driver.extraJavaOptions replaces these options.
GC_OPTIONS = "-XX:+UseParallelGC"
DRIVER_JVM_OPTIONS = f"{JIT_OPTIONS} {GC_OPTIONS}"
"""JIT and collector options of a driver JVM sparkmirror starts (local mode runs the record path in it)."""


def spark_defaults(real_time_slots: int = 0, class_data_archive: bool = True) -> dict[str, str]:
    """Settings sparkmirror needs; `spark.*` keys of the properties file override them. Without
    `class_data_archive` the driver maps no archive (the JVM that records one must not)."""
    log_cfg = resources.files("sparkmirror.pipeline").joinpath("spark-log4j2.properties")
    archive = class_archive.driver_java_options() if class_data_archive else ""
    driver_options = f"-Dlog4j2.configurationFile={log_cfg} {DRIVER_JVM_OPTIONS} {archive}".strip()
    return {
        "spark.master": default_master(real_time_slots),
        "spark.app.name": "sparkmirror",
        "spark.jars": ",".join(str(p) for p in session_jars()),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.python.worker.reuse": "true",
        "spark.driver.extraJavaOptions": driver_options,
        "spark.executor.extraJavaOptions": f"-Dlog4j2.configurationFile={log_cfg}",
        "spark.sql.streaming.stopGracefullyOnShutdown": "true",
    }


# Local mode talks to itself over loopback only; on a cluster the executors must reach the driver, so Spark's
# own choice (this host's address), or the file's spark.driver.host, applies.
LOCAL_MODE_DEFAULTS = {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}


def session_settings(overrides: Mapping[str, str] | None = None, real_time_slots: int = 0,
                     submitted: Mapping[str, str] | None = None) -> dict[str, str]:
    """sparkmirror's defaults, the loopback ones only in local mode, the file's `spark.*` keys, then what
    spark-submit was given (`submitted`): its `--master`, `--conf` and `--jars` are the operator's last word."""
    settings = {**spark_defaults(real_time_slots), **(overrides or {}), **(submitted or {})}
    if settings["spark.master"].startswith("local"):
        settings = {**LOCAL_MODE_DEFAULTS, **settings}
    if submitted is not None:
        require_record_path_jars(submitted)
    return settings


def submitted_conf() -> dict[str, str] | None:
    """The settings of the driver JVM spark-submit started for this program; None when it was not started so."""
    if not launched_by_spark_submit():
        return None
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()  # connect to spark-submit's JVM: without it SparkConf() reads nothing
    submitted = dict(SparkConf().getAll())  # the JVM's spark.* system properties, as spark-submit set them
    if submitted.get("spark.app.name") == SUBMIT_ENTRY_POINT:  # spark-submit's default: the file's name
        del submitted["spark.app.name"]
    return submitted


def check_submitted() -> None:
    """Under spark-submit, fail with the fix when its arguments lack sparkmirror's jars; else do nothing."""
    submitted = submitted_conf()
    if submitted is not None:
        require_record_path_jars(submitted)


def build_spark_session(overrides: Mapping[str, str] | None = None, real_time_slots: int = 0) -> SparkSession:
    """Get or create the session (`real_time_slots`: source partitions read in Real-Time Mode)."""
    settings = session_settings(overrides, real_time_slots, submitted_conf())
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if settings["spark.master"].startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder
    for key, value in settings.items():
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


def driver_lost(spark: SparkSession) -> str | None:
    """Why this session's driver can run no more queries (its JVM ended, or Spark stopped its context after an
    error such as running out of heap); None while it can."""
    try:
        if spark.sparkContext._jsc.sc().isStopped():  # type: ignore[union-attr]
            return "its Spark context was stopped"
    except (Py4JError, ConnectionError) as exc:
        return f"{exc}"
    return None
