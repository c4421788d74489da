"""Resolve the pinned jar groups from Maven Central into the cache, once per POM.

Two groups, each from a POM shipped in `jars/poms/`: `kafka` (broker, MM2, perf tools) and `spark-kafka`
(Spark's Kafka connector). A group's folder is reused while the POM that made it is unchanged, so a second
run starts no Maven at all. Maven's own repository is `$SPARKMIRROR_MAVEN_REPO`, else `m2/` in the cache: a
new cache (an image's, a test's) can share one that already holds the artifacts instead of downloading them.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
from importlib import resources
from pathlib import Path

from sparkmirror.errors import EmbeddedSetupError
from sparkmirror.jars.cache import cache_dir, is_current, mark_current

logger = logging.getLogger(__name__)

GROUPS = ("kafka", "spark-kafka")
MAVEN_REPO_ENV = "SPARKMIRROR_MAVEN_REPO"
_MAVEN_TIMEOUT_S = 900


def _pom_text(group: str) -> str:
    return resources.files("sparkmirror.jars").joinpath("poms", f"{group}.xml").read_text("utf-8")


def jar_dir(group: str, cache: Path | None = None) -> Path:
    """The folder of `group`'s jars, resolving it first if needed."""
    if group not in GROUPS:
        raise ValueError(f"unknown jar group {group!r}")
    cache = cache or cache_dir()
    target = cache / "jars" / group
    pom = _pom_text(group)
    digest = hashlib.sha256(pom.encode()).hexdigest()
    if is_current(target, digest):
        return target
    _resolve(group, pom, target, cache)
    mark_current(target, digest)
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
    repo = os.environ.get(MAVEN_REPO_ENV) or cache / "m2"
    cmd = [mvn, "-B", "-q", "-f", str(pom_path), f"-Dmaven.repo.local={repo}",
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
