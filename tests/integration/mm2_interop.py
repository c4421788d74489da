"""Apache Kafka's own MM2 tooling as the peer of interop tests: a real MirrorMaker 2 process,
`RemoteClusterUtils.translateOffsets` run from a small compiled Java program (java/RemoteTranslate.java), and
MM2's own resolution of a properties file (java/ResolveConfig.java).

MM2 reads and writes the same internal topics as sparkmirror, under the same names: offset syncs in
`mm2-offset-syncs.<target>.internal` on the source cluster, checkpoints in `<source>.checkpoints.internal`
on the target cluster.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from sparkmirror import jars
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER
from sparkmirror.testing.mirror_maker import CONNECT_SINGLE_BROKER, LocalMirrorMaker

from .conftest import wait_until

logger = logging.getLogger(__name__)

JAVA_SOURCES = tuple(sorted((Path(__file__).parent / "java").glob("*.java")))
JAVA_MAIN = "RemoteTranslate"
RESOLVE_CONFIG_MAIN = "org.apache.kafka.connect.mirror.ResolveConfig"  # in MM2's package (see its header)
JAVA_TIMEOUT_S = 90.0  # JVM start plus the program's own 30 s read of the checkpoints topic
MM2_START_TIMEOUT_S = 120.0
MM2_HEAP = ("256m", "768m")
# Dedicated-mode MM2 also runs Connect herders, whose storage topics default to 3 replicas.
_TRANSLATION_LINE = re.compile(r"([^\t]+)\t(\d+)\t(-?\d+)")


def compile_java(out_dir: Path) -> Path:
    """Compile the Java helpers (java/*.java) against the Kafka jars into `out_dir`; returns `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    result = subprocess.run([_javac(), "-cp", _kafka_classpath(), "-d", str(out_dir), *map(str, JAVA_SOURCES)],
                            capture_output=True, text=True, timeout=JAVA_TIMEOUT_S)
    if result.returncode != 0:
        names = ", ".join(p.name for p in JAVA_SOURCES)
        raise AssertionError(f"javac {names} failed ({result.returncode}):\n{result.stderr}")
    return out_dir


def plugin_jar(sources: Sequence[Path], folder: Path, name: str) -> Path:
    """The test's own MM2 classes (transforms, policies, filters) compiled against the connector's jars (the
    interfaces sparkmirror runs them with) into `folder/name`, a plugin folder of plugin.path."""
    classes = folder / f".{name}-classes"
    classpath = os.pathsep.join(str(p) for p in jars.classpath("spark-kafka"))
    result = subprocess.run([_javac(), "--release", "17", "-cp", classpath, "-d", str(classes), *map(str, sources)],
                            capture_output=True, text=True, timeout=JAVA_TIMEOUT_S)
    if result.returncode != 0:
        raise AssertionError(f"javac {', '.join(p.name for p in sources)} failed:\n{result.stderr}")
    folder.mkdir(parents=True, exist_ok=True)
    jar = folder / name
    with zipfile.ZipFile(jar, "w") as out:
        for cls in classes.rglob("*.class"):
            out.write(cls, cls.relative_to(classes).as_posix())
    shutil.rmtree(classes)
    return jar


def _javac() -> str:
    """`javac` of the JDK whose `java` runs the brokers, else the one on PATH."""
    beside_java = Path(jars.java_executable()).resolve().parent / "javac"
    found = str(beside_java) if beside_java.is_file() else shutil.which("javac")
    if found is None:
        raise AssertionError("javac not found: the MM2 interop tests compile a Java helper and need a JDK "
                             "(e.g. 'apt-get install openjdk-17-jdk-headless'), not only a JRE")
    return found


@functools.cache
def _classes_dir() -> Path:
    """The Java helpers compiled once per process, into a temporary folder removed at exit."""
    out_dir = Path(tempfile.mkdtemp(prefix="sparkmirror-interop-java-"))
    atexit.register(shutil.rmtree, out_dir, ignore_errors=True)
    return compile_java(out_dir)


@functools.cache
def _kafka_classpath() -> str:
    return os.pathsep.join(str(p) for p in jars.classpath("kafka"))


def java_translate(bootstrap: str, alias: str, group: str, policy: tuple[str, str, Sequence[Path]] | None = None
                   ) -> dict[tuple[str, int], int]:
    """MM2's translation of `group`'s offsets from cluster `alias` to the cluster at `bootstrap`:
    (remote topic, partition) -> downstream offset, read by `RemoteClusterUtils.translateOffsets`.

    `policy` is a replication policy of the test's own: (its class, its checkpoints topic for `alias`, the jars
    that hold it). Empty while the checkpoints topic does not exist there (the Java client would wait 60 s, then
    fail).
    """
    checkpoints_topic = policy[1] if policy else f"{alias}.checkpoints.internal"
    if checkpoints_topic not in ClusterAdmin("interop", {"bootstrap.servers": bootstrap}).topic_partitions():
        return {}
    extra = [str(j) for j in policy[2]] if policy else []
    command = [jars.java_executable(), "-Xmx256m", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
               "-cp", os.pathsep.join((str(_classes_dir()), _kafka_classpath(), *extra)),
               JAVA_MAIN, bootstrap, alias, group, *([policy[0]] if policy else [])]
    result = subprocess.run(command, capture_output=True, text=True, timeout=JAVA_TIMEOUT_S)
    if result.returncode != 0:
        raise AssertionError(f"RemoteClusterUtils.translateOffsets failed ({result.returncode}) for group {group} "
                             f"from {alias} at {bootstrap}:\n{result.stdout}{result.stderr[-4000:]}")
    # Log4j's fallback configuration prints errors to stdout too; only result lines match.
    return {(m[1], int(m[2])): int(m[3]) for line in result.stdout.splitlines()
            if (m := _TRANSLATION_LINE.fullmatch(line))}


def java_resolve_config(paths: Sequence[Path], cwd: Path, env: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """MM2 4.3's own resolution of each properties file (see java/ResolveConfig.java), by file name, in one JVM.

    `cwd` is where relative config-provider paths start; `env` is added to the JVM's environment (for
    `${env:...}` references). A file MM2 refuses maps to `{"error": ...}`.
    """
    command = [jars.java_executable(), "-Xmx256m", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
               "-cp", os.pathsep.join((str(_classes_dir()), _kafka_classpath())),
               RESOLVE_CONFIG_MAIN, *(str(p.resolve()) for p in paths)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=JAVA_TIMEOUT_S, cwd=cwd,
                            env={**os.environ, **env})
    if result.returncode != 0:
        raise AssertionError(f"ResolveConfig failed ({result.returncode}):\n{result.stdout}{result.stderr[-4000:]}")
    # Log4j's fallback configuration prints errors to stdout too; only the JSON lines are results.
    resolved = [json.loads(line) for line in result.stdout.splitlines() if line.startswith('{"')]
    return {Path(r["file"]).name: r for r in resolved}


def _exactly(names: Sequence[str]) -> str:
    """An MM2 regex list matching exactly `names`, as a properties value (which unescapes backslashes once)."""
    return ", ".join(re.escape(name).replace("\\", "\\\\") for name in names)


def mm2_properties(source: str, target: str, topics: Sequence[str], groups: Sequence[str] = (),
                   extra: str = "") -> str:
    """An MM2 properties text for clusters A (`source`) and B (`target`) replicating exactly `topics` A->B
    and checkpointing exactly `groups` (all groups when empty).

    Checkpoints every second, offset syncs as often as MM2 allows (`offset.lag.max = 0`), its worker's offset commit
    every second (a worker setting, read per target cluster: MM2 writes its newest sync when it commits, every 60 s
    by default), no heartbeats (the test clusters are shared) and no group offset sync; replication factors fit
    single-broker clusters.
    """
    return (f"clusters = A, B\nA.bootstrap.servers = {source}\nB.bootstrap.servers = {target}\n"
            f"A->B.enabled = true\nB->A.enabled = false\nA->B.topics = {_exactly(topics)}\n"
            f"A->B.groups = {_exactly(groups) if groups else '.*'}\n"
            "emit.heartbeats.enabled = false\nheartbeats.replication.enabled = false\n"
            "sync.topic.acls.enabled = false\nsync.group.offsets.enabled = false\n"
            "emit.checkpoints.interval.seconds = 1\nrefresh.groups.interval.seconds = 1\n"
            "refresh.topics.interval.seconds = 1\noffset.lag.max = 0\nB.offset.flush.interval.ms = 1000\n"
            f"tasks.max = 1\n{SINGLE_BROKER}{CONNECT_SINGLE_BROKER}{extra}")


@contextlib.contextmanager
def running_mm2(source: str, target: str, topics: Sequence[str], groups: Sequence[str] = (),
                extra: str = "", classpath: tuple[Path, ...] = ()) -> Iterator[LocalMirrorMaker]:
    """Run real MM2 A->B (see `mm2_properties`) until the block ends; yields once MM2 has started, that is
    once it has created the remote topics and `A.checkpoints.internal` on B. MM2's logs are kept (and
    their folder logged) when the block fails."""
    mm = LocalMirrorMaker(mm2_properties(source, target, topics, groups, extra), clusters=("B",),
                          name="mm2-interop", heap=MM2_HEAP, classpath=classpath).start()
    try:
        wanted = {f"A.{t}" for t in topics} | {"A.checkpoints.internal"}
        target_admin = ClusterAdmin("B", {"bootstrap.servers": target})

        def started() -> bool:
            if mm.process is not None and mm.process.poll() is not None:
                raise AssertionError(f"MM2 exited ({mm.process.returncode}) while starting:\n{mm.log_tail()}")
            return wanted <= target_admin.topic_partitions().keys()

        wait_until(started, MM2_START_TIMEOUT_S, f"MM2 to create {sorted(wanted)} on B", poll_s=0.5)
        yield mm
    except BaseException:
        mm.keep_logs = True
        logger.error("MM2 logs kept in %s; last lines:\n%s", mm.dir, mm.log_tail())
        raise
    finally:
        mm.stop()
