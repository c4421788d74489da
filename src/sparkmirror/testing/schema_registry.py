"""A real Confluent-compatible schema registry on a loopback port, for tests and the demo: Apicurio Registry.

Apicurio Registry is on Maven Central as a ready Quarkus application (`io.apicurio:apicurio-registry-app`, classifier
`all`, a tar.gz); it keeps its schemas in memory and serves Confluent's REST API under `/apis/ccompat/v7`. It is
unpacked into the cache once (`registry/apicurio-<version>/`, Maven's repository shared as for the jar groups) and
runs on Java 21 or newer: `$SPARKMIRROR_REGISTRY_JAVA`, else the first JDK under /usr/lib/jvm that is new enough
(the project's own Java may be 17). Like the brokers, the JVM is watched (see watchdog.py), so it ends with this
process however that ends.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from sparkmirror.errors import EmbeddedSetupError
from sparkmirror.jars.cache import cache_dir, is_current, mark_current
from sparkmirror.jars.maven import MAVEN_REPO_ENV
from sparkmirror.testing import watchdog
from sparkmirror.testing.kafka_cluster import free_ports

logger = logging.getLogger(__name__)

APICURIO_VERSION = "3.3.3"
ARTIFACT = f"io.apicurio:apicurio-registry-app:{APICURIO_VERSION}:tar.gz:all"
JAVA_ENV = "SPARKMIRROR_REGISTRY_JAVA"
MIN_JAVA = 21
CCOMPAT_PATH = "/apis/ccompat/v7"
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 15.0
_MAVEN_TIMEOUT_S = 900


def registry_home(cache: Path | None = None) -> Path:
    """The unpacked application (its `quarkus-run.jar`), unpacking it first if needed."""
    cache = cache or cache_dir()
    target = cache / "registry" / f"apicurio-{APICURIO_VERSION}"
    if is_current(target, ARTIFACT) and (target / "quarkus-run.jar").is_file():
        return target
    mvn = shutil.which("mvn")
    if mvn is None:
        raise EmbeddedSetupError("Maven ('mvn') is not on PATH; it is needed once to fetch Apicurio Registry from "
                                 "Maven Central for the schema registry tests. Install it and run again.")
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    repo = os.environ.get(MAVEN_REPO_ENV) or cache / "m2"
    logger.info("unpacking Apicurio Registry %s from Maven Central into %s", APICURIO_VERSION, target)
    cmd = [mvn, "-B", "-q", f"-Dmaven.repo.local={repo}",
           "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:unpack", f"-Dartifact={ARTIFACT}",
           f"-DoutputDirectory={target}"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_MAVEN_TIMEOUT_S, cwd=target)
    except subprocess.TimeoutExpired as exc:
        raise EmbeddedSetupError(f"Maven did not fetch Apicurio Registry within {_MAVEN_TIMEOUT_S} s; check access "
                                 "to Maven Central") from exc
    if proc.returncode != 0 or not (target / "quarkus-run.jar").is_file():
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise EmbeddedSetupError(f"Maven could not fetch {ARTIFACT} (exit {proc.returncode}); check access to "
                                 f"Maven Central:\n{tail}")
    mark_current(target, ARTIFACT)
    return target


def java_major(java_home: Path) -> int | None:
    """The major version of the JDK at `java_home`, from its `release` file; None when it has none."""
    try:
        text = (java_home / "release").read_text()
    except OSError:
        return None
    found = re.search(r'^JAVA_VERSION="(\d+)', text, re.MULTILINE)
    return int(found.group(1)) if found else None


def registry_java(candidates: list[Path] | None = None) -> Path:
    """A `java` of version MIN_JAVA or newer: $SPARKMIRROR_REGISTRY_JAVA, else $JAVA_HOME's, else the newest JDK in
    /usr/lib/jvm."""
    explicit = os.environ.get(JAVA_ENV)
    if explicit:
        return Path(explicit)
    homes = candidates if candidates is not None else [
        *([Path(os.environ["JAVA_HOME"])] if os.environ.get("JAVA_HOME") else []),
        *sorted(Path("/usr/lib/jvm").glob("*"), key=lambda p: java_major(p) or 0, reverse=True)]
    for home in homes:
        if (java_major(home) or 0) >= MIN_JAVA and (home / "bin" / "java").is_file():
            return home / "bin" / "java"
    raise EmbeddedSetupError(f"Apicurio Registry needs Java {MIN_JAVA} or newer and none was found (looked at "
                             f"$JAVA_HOME and /usr/lib/jvm); install one (e.g. Temurin 21) or set {JAVA_ENV} to its "
                             f"bin/java")


class LocalSchemaRegistry:
    """One Apicurio Registry process on loopback ports, schemas in memory. `url` is its Confluent API."""

    def __init__(self, name: str, heap: str = "256m", keep_logs: bool = False) -> None:
        self.name = name
        self.heap = heap
        self.keep_logs = keep_logs
        self.port: int | None = None
        self.dir: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._watchdog: watchdog.Watchdog | None = None

    @property
    def url(self) -> str:
        assert self.port is not None, "not started"
        return f"http://127.0.0.1:{self.port}{CCOMPAT_PATH}"

    def start(self) -> LocalSchemaRegistry:
        home = registry_home()
        java = registry_java()
        self.dir = Path(tempfile.mkdtemp(prefix=f"sparkmirror-registry-{self.name}-"))
        self.port, management = free_ports(2)
        cmd = [str(java), f"-Xmx{self.heap}", f"-Dquarkus.http.port={self.port}", "-Dquarkus.http.host=127.0.0.1",
               f"-Dquarkus.management.port={management}", "-Dquarkus.management.host=127.0.0.1",
               f"-Djava.io.tmpdir={self.dir}", "-jar", str(home / "quarkus-run.jar")]
        with open(self.dir / "stdout.log", "ab") as out:
            self._proc, self._watchdog = watchdog.spawn(cmd, stdout=out, stderr=subprocess.STDOUT)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        logger.info("local schema registry %s ready at %s", self.name, self.url)
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self._proc is None or self._proc.poll() is not None:
                raise EmbeddedSetupError(f"schema registry '{self.name}' exited during start-up:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/subjects", timeout=2) as response:  # noqa: S310 - http://
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise EmbeddedSetupError(f"schema registry '{self.name}' not ready after {START_TIMEOUT_S:.0f} s:\n"
                                         f"{self.log_tail()}")
            time.sleep(0.2)

    def log_tail(self, lines: int = 40) -> str:
        log = self.dir / "stdout.log" if self.dir else None
        if log is None or not log.is_file():
            return ""
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """SIGTERM, SIGKILL after STOP_TIMEOUT_S; the folder is removed unless keep_logs."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                assert self._watchdog is not None
                os.killpg(self._watchdog.pgid, 9)
                self._proc.wait()
        if self._watchdog is not None:
            self._watchdog.release()
            self._watchdog = None
        self._proc = None
        if self.dir is not None and not self.keep_logs:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> LocalSchemaRegistry:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
