"""Running under spark-submit: how to tell, the arguments that run sparkmirror there, and the check that they
were given. No pyspark here, so `sparkmirror submit-args` and `run`'s signal handling stay fast to import."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from sparkmirror import jars
from sparkmirror.errors import EmbeddedSetupError

# spark-submit starts the driver JVM itself and hands the Python program its gateway through this variable.
SUBMIT_GATEWAY_ENV = "PYSPARK_GATEWAY_PORT"
SUBMIT_ENTRY_POINT = "spark_submit.py"


def launched_by_spark_submit() -> bool:
    """Whether this Python program is spark-submit's (the driver JVM is our parent, not our child)."""
    return SUBMIT_GATEWAY_ENV in os.environ


def session_jars() -> list[Path]:
    """The jars a sparkmirror driver and its executors need beyond Spark's: the Kafka connector and the writer."""
    return [*jars.classpath("spark-kafka"), jars.record_path_jar()]


def require_record_path_jars(submitted: Mapping[str, str]) -> None:
    """The driver's classpath is fixed when spark-submit starts its JVM: without sparkmirror's jars in
    `--jars` the Kafka source and the record path's writer cannot be loaded, so say so before the first flow."""
    given = {uri.rsplit("/", 1)[-1] for uri in submitted.get("spark.jars", "").split(",") if uri}
    missing = [p.name for p in session_jars() if p.name not in given]
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
    return ["--jars", ",".join(f"{prefix}{p}" for p in session_jars()),
            "--conf", f"spark.pyspark.python={sys.executable}",
            "--conf", f"spark.pyspark.driver.python={sys.executable}",
            "--conf", f"spark.driver.extraJavaOptions=-Dlog4j2.configurationFile={log_cfg}",
            "--conf", f"spark.executor.extraJavaOptions=-Dlog4j2.configurationFile={log_cfg}",
            f"{prefix}{entry}"]
