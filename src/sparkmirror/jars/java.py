"""The local Java and Spark installations the jars run on: the `java` executable and the pyspark wheel's jars."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

from sparkmirror.errors import EmbeddedSetupError


def java_executable() -> str:
    """Path of `java` (JAVA_HOME first); EmbeddedSetupError when there is none."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        raise EmbeddedSetupError("Java is not installed or not on PATH; Kafka 4.x and Spark 4.x need "
                                 "Java 17 or newer (e.g. 'apt-get install openjdk-17-jre-headless').")
    return found


def pyspark_jars_dir() -> Path:
    """The jars of the Spark that runs us (Spark itself), found without importing pyspark: the pyspark wheel's,
    or, under spark-submit (which puts its `python/lib/pyspark.zip` first on the path), `$SPARK_HOME/jars`."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedSetupError("pyspark is not installed; run 'pip install -e .' (or 'make setup')")
    beside = Path(next(iter(spec.submodule_search_locations))) / "jars"
    if beside.is_dir():
        return beside
    home = os.environ.get("SPARK_HOME")
    if home and (Path(home) / "jars").is_dir():
        return Path(home) / "jars"
    raise EmbeddedSetupError(f"no Spark jars beside pyspark ({beside}) nor in $SPARK_HOME ({home or 'unset'}): "
                             f"set SPARK_HOME to the Spark distribution that runs sparkmirror")
