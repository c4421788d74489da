"""build_spark_session(): the one place a SparkSession is created."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from importlib import resources

from py4j.protocol import Py4JError
from pyspark.sql import SparkSession

from sparkmirror import jars
from sparkmirror.errors import EmbeddedSetupError
from sparkmirror.pipeline import class_archive

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


def spark_defaults(real_time_slots: int = 0, class_data_archive: bool = True) -> dict[str, str]:
    """Settings sparkmirror needs; `spark.*` keys of the properties file override them. Without
    `class_data_archive` the driver maps no archive (the JVM that records one must not)."""
    log_cfg = resources.files("sparkmirror.pipeline").joinpath("spark-log4j2.properties")
    archive = class_archive.driver_java_options() if class_data_archive else ""
    driver_options = f"-Dlog4j2.configurationFile={log_cfg} {archive}".strip()
    return {
        "spark.master": default_master(real_time_slots),
        "spark.app.name": "sparkmirror",
        "spark.jars": ",".join(str(p) for p in [*jars.classpath("spark-kafka"), jars.record_path_jar()]),
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


# spark-submit starts the driver JVM itself and hands the Python program its gateway through these variables.
SUBMIT_GATEWAY_ENV = "PYSPARK_GATEWAY_PORT"
SUBMIT_ENTRY_POINT = "spark_submit.py"


def session_settings(overrides: Mapping[str, str] | None = None, real_time_slots: int = 0,
                     submitted: Mapping[str, str] | None = None) -> dict[str, str]:
    """sparkmirror's defaults, the loopback ones only in local mode, the file's `spark.*` keys, then what
    spark-submit was given (`submitted`): its `--master`, `--conf` and `--jars` are the operator's last word."""
    settings = {**spark_defaults(real_time_slots), **(overrides or {}), **(submitted or {})}
    if settings["spark.master"].startswith("local"):
        settings = {**LOCAL_MODE_DEFAULTS, **settings}
    if submitted is not None:
        _require_record_path_jars(submitted)
    return settings


def submitted_conf() -> dict[str, str] | None:
    """The settings of the driver JVM spark-submit started for this program; None when it was not started so."""
    if SUBMIT_GATEWAY_ENV not in os.environ:
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
        _require_record_path_jars(submitted)


def _require_record_path_jars(submitted: Mapping[str, str]) -> None:
    """The driver's classpath is fixed when spark-submit starts its JVM: without sparkmirror's jars in
    `--jars` the Kafka source and the record path's writer cannot be loaded, so say so before the first flow."""
    given = {uri.rsplit("/", 1)[-1] for uri in submitted.get("spark.jars", "").split(",") if uri}
    missing = [p.name for p in [*jars.classpath("spark-kafka"), jars.record_path_jar()] if p.name not in given]
    if missing:
        raise EmbeddedSetupError(
            f"spark-submit was not given sparkmirror's jars ({len(missing)} missing, e.g. {missing[0]}): pass the "
            f"arguments `sparkmirror submit-args` prints, e.g. spark-submit --master <url> "
            f"$(sparkmirror submit-args) run mm2.properties")


def submit_arguments(scheme: str = "") -> list[str]:
    """spark-submit's arguments that run sparkmirror as `sparkmirror` itself would: the jars (on the driver's
    classpath from its start, and shipped to executors), the Python that has sparkmirror, the log
    configuration, then the application file. `scheme` "local" names files already on every node (an image)."""
    prefix = f"{scheme}://" if scheme else ""
    log_cfg = resources.files("sparkmirror.pipeline").joinpath("spark-log4j2.properties")
    entry = resources.files("sparkmirror").joinpath(SUBMIT_ENTRY_POINT)
    paths = [*jars.classpath("spark-kafka"), jars.record_path_jar()]
    return ["--jars", ",".join(f"{prefix}{p}" for p in paths),
            "--conf", f"spark.pyspark.python={sys.executable}",
            "--conf", f"spark.pyspark.driver.python={sys.executable}",
            "--conf", f"spark.driver.extraJavaOptions=-Dlog4j2.configurationFile={log_cfg}",
            "--conf", f"spark.executor.extraJavaOptions=-Dlog4j2.configurationFile={log_cfg}",
            f"{prefix}{entry}"]


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
