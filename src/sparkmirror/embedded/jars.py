"""Resolve the pinned JVM jars from Maven Central into a cache folder, once, and build the record path's jar.

Two folders, each from a POM shipped in `embedded/poms/`: `kafka` (broker, MM2, perf tools) and
`spark-kafka` (Spark's Kafka connector). A folder is reused while the POM that made it is unchanged,
so a second run starts no Maven at all. The record path's JVM writer (`pipeline/jvm/`) is compiled with
`javac` against the pyspark wheel's jars and the connector's kafka-clients into `record-path/`, again only
when its sources or those jars change.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import shutil
import subprocess
import tempfile
import zipfile
from importlib import resources
from pathlib import Path

from sparkmirror.errors import EmbeddedSetupError

logger = logging.getLogger(__name__)

GROUPS = ("kafka", "spark-kafka")
CACHE_ENV = "SPARKMIRROR_CACHE"
_MARKER = ".resolved-from"
_MAVEN_TIMEOUT_S = 900


def cache_dir() -> Path:
    """`$SPARKMIRROR_CACHE`, else `~/.cache/sparkmirror`."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser().resolve() if env else Path.home() / ".cache" / "sparkmirror"


def _pom_text(group: str) -> str:
    return resources.files("sparkmirror.embedded").joinpath("poms", f"{group}.xml").read_text("utf-8")


def jar_dir(group: str, cache: Path | None = None) -> Path:
    """The folder of `group`'s jars, resolving it first if needed."""
    if group not in GROUPS:
        raise ValueError(f"unknown jar group {group!r}")
    cache = cache or cache_dir()
    target = cache / "jars" / group
    pom = _pom_text(group)
    digest = hashlib.sha256(pom.encode()).hexdigest()
    marker = target / _MARKER
    if marker.is_file() and marker.read_text().strip() == digest:
        return target
    _resolve(group, pom, target, cache)
    marker.write_text(digest)
    return target


def classpath(group: str, cache: Path | None = None) -> list[Path]:
    """Every jar of a group, sorted."""
    return sorted(jar_dir(group, cache).glob("*.jar"))


def _resolve(group: str, pom: str, target: Path, cache: Path) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise EmbeddedSetupError(
            "Maven ('mvn') is not on PATH; it is needed once to fetch the Kafka and Spark connector "
            "jars from Maven Central. Install it (e.g. 'apt-get install maven') and run again.")
    work = cache / "poms"
    work.mkdir(parents=True, exist_ok=True)
    pom_path = work / f"{group}.xml"
    pom_path.write_text(pom)
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    logger.info("resolving %s jars from Maven Central into %s", group, target)
    cmd = [mvn, "-B", "-q", "-f", str(pom_path), f"-Dmaven.repo.local={cache / 'm2'}",
           "dependency:copy-dependencies", f"-DoutputDirectory={target}", "-DincludeScope=runtime"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_MAVEN_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise EmbeddedSetupError(f"Maven did not finish resolving the {group} jars within "
                                 f"{_MAVEN_TIMEOUT_S} s; check access to Maven Central") from exc
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise EmbeddedSetupError(f"Maven could not resolve the {group} jars (exit {proc.returncode}); "
                                 f"check access to Maven Central:\n{tail}")


RECORD_PATH_JAR = "sparkmirror-record-path.jar"
_JAVA_RELEASE = "17"


def _record_path_sources() -> list[tuple[str, bytes]]:
    root = resources.files("sparkmirror.pipeline").joinpath("jvm")
    found: list[tuple[str, bytes]] = []

    def walk(node, prefix: str) -> None:  # noqa: ANN001 - importlib Traversable
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            elif child.name.endswith(".java"):
                found.append((f"{prefix}{child.name}", child.read_bytes()))

    walk(root, "")
    return found


def pyspark_jars_dir() -> Path:
    """The jars the pyspark wheel ships (Spark itself), found without importing pyspark."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedSetupError("pyspark is not installed; run 'pip install -e .' (or 'make setup')")
    return Path(next(iter(spec.submodule_search_locations))) / "jars"


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
    jar, marker = target / RECORD_PATH_JAR, target / _MARKER
    if jar.is_file() and marker.is_file() and marker.read_text().strip() == digest.hexdigest():
        return jar
    _compile(sources, classpath_dirs, jar)
    marker.write_text(digest.hexdigest())
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
                               *files], capture_output=True, text=True, timeout=_MAVEN_TIMEOUT_S)
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


def ensure_all(cache: Path | None = None) -> dict[str, Path]:
    """Resolve every group; used by `sparkmirror setup`."""
    java_executable()
    out = {g: jar_dir(g, cache) for g in GROUPS}
    out["record-path"] = record_path_jar(cache).parent
    return out
