"""The jar resolver: the pinned JVM jars from Maven Central in a cache folder, and the record path's jar.

Used in production (the Spark session's classpath, `sparkmirror setup`) and by the local clusters of
`sparkmirror.testing`. This package is its public surface; each job has its own module:

- `cache`: the cache folder (`$SPARKMIRROR_CACHE`) and what each folder in it was made from;
- `java`: the local `java` and the pyspark wheel's jars;
- `maven`: the `kafka` and `spark-kafka` jar groups, resolved by Maven from the POMs in `poms/`;
- `record_path`: the record path's JVM writer (`pipeline/jvm/`), compiled with `javac`.

Every failure is an EmbeddedSetupError that says what is missing and how to get it.
"""

from __future__ import annotations

from pathlib import Path

from sparkmirror.errors import EmbeddedSetupError
from sparkmirror.jars.cache import CACHE_ENV, cache_dir
from sparkmirror.jars.java import java_executable, pyspark_jars_dir
from sparkmirror.jars.maven import GROUPS, classpath, jar_dir
from sparkmirror.jars.record_path import RECORD_PATH_JAR, record_path_jar

__all__ = ["CACHE_ENV", "GROUPS", "RECORD_PATH_JAR", "EmbeddedSetupError", "cache_dir", "classpath", "ensure_all",
           "jar_dir", "java_executable", "pyspark_jars_dir", "record_path_jar"]


def ensure_all(cache: Path | None = None) -> dict[str, Path]:
    """Resolve every group and build the record path's jar; used by `sparkmirror setup`."""
    java_executable()
    out = {g: jar_dir(g, cache) for g in GROUPS}
    out["record-path"] = record_path_jar(cache).parent
    return out
