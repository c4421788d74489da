"""Build the record path's JVM writer (`pipeline/jvm/`) into a jar in the cache.

Its main sources (`pipeline/jvm/src/main/java`) are compiled with `javac` against the pyspark wheel's jars and
the connector's kafka-clients into `jars/record-path/`, on first use and again only when they or those jars
change: the jars Spark runs it with, and no Maven at run time. `pipeline/jvm/pom.xml` is the project's build
file for its JUnit tests (`make java-test`), against the same versions.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import zipfile
from importlib import resources
from pathlib import Path

from sparkmirror.errors import EmbeddedSetupError
from sparkmirror.jars.cache import cache_dir, is_current, mark_current
from sparkmirror.jars.java import java_executable, pyspark_jars_dir
from sparkmirror.jars.maven import jar_dir

logger = logging.getLogger(__name__)

RECORD_PATH_JAR = "sparkmirror-record-path.jar"
_JAVA_RELEASE = "17"
_JAVAC_TIMEOUT_S = 900


def _record_path_sources() -> list[tuple[str, bytes]]:
    root = resources.files("sparkmirror.pipeline").joinpath("jvm", "src", "main", "java")
    found: list[tuple[str, bytes]] = []

    def walk(node, prefix: str) -> None:  # importlib Traversable
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            elif child.name.endswith(".java"):
                found.append((f"{prefix}{child.name}", child.read_bytes()))

    walk(root, "")
    return found


def record_path_jar(cache: Path | None = None) -> Path:
    """The record path's JVM writer, compiled on first use and whenever its sources or Spark change."""
    cache = cache or cache_dir()
    classpath_dirs = [pyspark_jars_dir(), jar_dir("spark-kafka", cache)]
    sources = _record_path_sources()
    digest = hashlib.sha256()
    for name, data in sources:
        digest.update(name.encode() + b"\0" + data)
    for folder in classpath_dirs:
        digest.update("\n".join(sorted(p.name for p in folder.glob("*.jar"))).encode())
    target = cache / "jars" / "record-path"
    jar = target / RECORD_PATH_JAR
    if jar.is_file() and is_current(target, digest.hexdigest()):
        return jar
    _compile(sources, classpath_dirs, jar)
    mark_current(target, digest.hexdigest())
    return jar


def _compile(sources: list[tuple[str, bytes]], classpath_dirs: list[Path], jar: Path) -> None:
    javac = shutil.which("javac", path=str(Path(java_executable()).parent)) or shutil.which("javac")
    if javac is None:
        raise EmbeddedSetupError("the Java compiler ('javac') is not installed; the record path's JVM writer is "
                                 "built with it once. Install a JDK 17 or newer (e.g. 'apt-get install "
                                 "openjdk-17-jdk-headless') and run again.")
    logger.info("building the record path's JVM writer into %s", jar)
    with tempfile.TemporaryDirectory(prefix="sparkmirror-javac-") as work:
        src, out = Path(work) / "src", Path(work) / "classes"
        files = []
        for name, data in sources:
            path = src / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            files.append(str(path))
        classpath = os.pathsep.join(str(d / "*") for d in classpath_dirs)
        proc = subprocess.run([javac, "--release", _JAVA_RELEASE, "-nowarn", "-d", str(out), "-cp", classpath,
                               *files], capture_output=True, text=True, timeout=_JAVAC_TIMEOUT_S)
        if proc.returncode != 0:
            raise EmbeddedSetupError(f"compiling the record path's JVM writer failed (exit {proc.returncode}):\n"
                                     + "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-20:]))
        jar.parent.mkdir(parents=True, exist_ok=True)
        tmp = jar.with_suffix(".tmp")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: sparkmirror\n")
            for cls in sorted(out.rglob("*.class")):
                zf.write(cls, cls.relative_to(out).as_posix())
        os.replace(tmp, jar)
