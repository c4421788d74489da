"""The Spark driver's class-data archive: made once, and the classes of a session come from it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from sparkmirror.pipeline import class_archive
from sparkmirror.pipeline.session import spark_defaults

# A session in a process of its own (the test session is already up), its class loading logged to a file.
_SESSION = textwrap.dedent("""
    import sys
    from sparkmirror.pipeline.session import build_spark_session
    spark = build_spark_session({"spark.driver.extraJavaOptions": sys.argv[1]})
    spark.range(3).count()
    proc = spark.sparkContext._gateway.proc
    spark.stop()
    proc.stdin.close()
    proc.wait(120)
""")


def _session_classes(java_options: str, log: Path) -> str:
    subprocess.run([sys.executable, "-c", _SESSION, f"{java_options} -Xlog:class+load=info:file={log}"],
                   check=True, timeout=300, capture_output=True)
    return log.read_text()


def test_spark_sessions_load_their_classes_from_the_archive(tmp_path):
    archive = class_archive.ensure()  # made by `sparkmirror setup`; made here when the tests run without it
    assert archive is not None and archive.is_file()
    options = spark_defaults()["spark.driver.extraJavaOptions"]
    assert f"-XX:SharedArchiveFile={archive}" in options

    loaded = _session_classes(options, tmp_path / "with.log")
    assert "org.apache.spark.SparkContext source: shared objects file (top)" in loaded

    without = _session_classes(options.replace(f"-XX:SharedArchiveFile={archive}", ""), tmp_path / "without.log")
    assert "org.apache.spark.SparkContext source: file:" in without  # read from spark-core's jar


def test_setup_records_an_archive_and_drops_stale_ones(tmp_path):
    # A cache of its own, while the default cache already holds an archive the recording JVM must not map.
    stale = tmp_path / "jvm" / "spark-driver-0000000000000000.jsa"
    stale.parent.mkdir()
    stale.write_bytes(b"an archive of an earlier JVM or Spark")

    made = class_archive.ensure(tmp_path)

    assert made is not None and made.stat().st_size > 1_000_000
    assert sorted(p.name for p in made.parent.iterdir()) == [made.name]
    assert class_archive.driver_java_options(tmp_path).startswith(f"-XX:SharedArchiveFile={made} ")


def test_no_archive_means_no_option(tmp_path):
    assert class_archive.driver_java_options(tmp_path) == ""
    assert class_archive.archive_path(tmp_path).parent == tmp_path / "jvm"
