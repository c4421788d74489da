"""A class-data sharing (AppCDS) archive of the Spark driver's classes, made once by `sparkmirror setup`.

Starting a SparkSession spends most of its seconds loading and verifying Spark's classes. The JVM can map
them from an archive written by an earlier run (`-XX:ArchiveClassesAtExit`, JDK 13+) instead. Measured on 2
cores: the session comes up in about 5 s instead of 8.5 s, and the first streaming query plans in 0.25 s
instead of 1 s. The archive is named after everything it depends on (the JVM, the Spark jars, this module's
training run), so a change of any of them simply leaves it unused until the next `setup` makes a new one.
A JVM that cannot use an archive ignores it (`-Xshare:auto`, the default): the archive is an optimisation,
never a requirement.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

from sparkmirror import jars

logger = logging.getLogger(__name__)

_FORMAT = "1"  # bump when the training run below changes what it loads
_TIMEOUT_S = 600
_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"


def archive_path(cache: Path | None = None) -> Path:
    """Where the archive for this JVM and this Spark lives (it need not exist)."""
    java = Path(jars.java_executable()).resolve()
    digest = hashlib.sha256(f"{_FORMAT}\0{java}\0{java.stat().st_mtime_ns}\0".encode())
    digest.update("\n".join(sorted(p.name for p in jars.pyspark_jars_dir().glob("*.jar"))).encode())
    return (cache or jars.cache_dir()) / "jvm" / f"spark-driver-{digest.hexdigest()[:16]}.jsa"


def driver_java_options(cache: Path | None = None) -> str:
    """JVM options that map the archive when `setup` has made it; empty otherwise."""
    try:
        path = archive_path(cache)
    except (OSError, jars.EmbeddedSetupError):
        return ""
    return f"-XX:SharedArchiveFile={path} {_QUIET}" if path.is_file() else ""


def ensure(cache: Path | None = None) -> Path | None:
    """Make the archive unless it exists: a short Spark run in a child process that dumps its classes at exit.
    Returns None (and logs why) when this JVM cannot make one; sparkmirror then starts without it."""
    path = archive_path(cache)
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp")
    logger.info("recording the Spark driver's classes into %s (once)", path)
    started = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", __name__, str(tmp)], capture_output=True, text=True,
                              timeout=_TIMEOUT_S)
        if proc.returncode != 0 or not tmp.is_file() or tmp.stat().st_size == 0:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-10:])
            logger.warning("no class-data archive for the Spark driver (exit %s); sessions start without it:"
                           "\n%s", proc.returncode, tail)
            return None
        os.replace(tmp, path)
    except subprocess.TimeoutExpired:
        logger.warning("recording the Spark driver's classes took over %d s; sessions start without an archive",
                       _TIMEOUT_S)
        return None
    finally:
        tmp.unlink(missing_ok=True)
    for stale in path.parent.glob("spark-driver-*.jsa"):  # archives of an earlier JVM or Spark: never used again
        if stale != path:
            stale.unlink(missing_ok=True)
    logger.info("class-data archive ready in %.0f s", time.monotonic() - started)
    return path


def _train(out: Path) -> None:
    """Start a session, run a short streaming query through the sink API sparkmirror uses, exit the JVM."""
    from sparkmirror.pipeline.session import build_spark_session, spark_defaults

    options = spark_defaults(class_data_archive=False)["spark.driver.extraJavaOptions"]
    spark = build_spark_session({"spark.driver.extraJavaOptions": f"{options} -XX:ArchiveClassesAtExit={out} "
                                                                  f"{_QUIET}"})
    query = (spark.readStream.format("rate").option("rowsPerSecond", "1000").load()
             .selectExpr("CAST(CAST(value AS STRING) AS BINARY) AS key", "CAST(timestamp AS STRING) AS value")
             .writeStream.format("noop").trigger(processingTime="200 milliseconds").start())
    deadline = time.monotonic() + 60
    while (query.lastProgress is None or query.lastProgress["batchId"] < 3) and time.monotonic() < deadline:
        time.sleep(0.2)
    query.stop()
    gateway = spark.sparkContext._gateway  # the JVM must exit for the archive to be written
    proc = getattr(gateway, "proc", None)
    spark.stop()
    if proc is not None:  # the gateway JVM exits when its stdin closes; the archive is written on exit
        proc.stdin.close()
        proc.wait(timeout=_TIMEOUT_S)


if __name__ == "__main__":
    _train(Path(sys.argv[1]))
