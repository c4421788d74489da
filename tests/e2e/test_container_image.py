"""The Dockerfile (issue 17, Kubernetes). With a container engine the image is built and its entrypoint runs
the CLI. Without one (this machine) the Dockerfile's own steps run, all but the OS packages' (Java, Maven and
Python are here), with its prefix in a temporary folder, and the result is used as Spark on Kubernetes uses
the image: `submit-args --scheme local` names only files of the prefix, the executor mode starts Spark's
Kubernetes executor backend with the arguments Spark 4.2 parses, and the driver mode, called as the driver
pod is, replicates a topic and stops on the pod's SIGTERM with exit 0. No Kubernetes cluster is involved."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import javaproperties
import pytest

from sparkmirror.jars import cache_dir
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.testing import watchdog
from sparkmirror.testing.kafka_cluster import free_port
from sparkmirror.testing.records import read_all

from . import dockerfile
from .test_run_cli import backlog, copied, wait_for, write_config

REPO = Path(__file__).resolve().parents[2]
RECORDS = 2000
PARTITIONS = 2
COPY_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 90.0
pytestmark = pytest.mark.timeout(900)  # the first test also runs the Dockerfile's steps (about 100 s here)


def engine_answers() -> bool:
    """Whether a container engine is there: the `docker` command alone is not one."""
    docker = shutil.which("docker")
    if docker is None:
        return False
    try:
        return watchdog.run([docker, "info"], timeout_s=60).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def test_the_image_builds_and_its_entrypoint_runs_the_cli(unique):
    if not engine_answers():
        pytest.skip("no container engine answers `docker info`: the Dockerfile's steps run without one below")
    tag = f"sparkmirror-test:{unique}"
    try:
        built = watchdog.run(["docker", "build", "-t", tag, str(REPO)], timeout_s=3600)
        assert built.returncode == 0, built.stderr[-4000:]
        ran = watchdog.run(["docker", "run", "--rm", tag, "--help"], timeout_s=300)
        assert ran.returncode == 0, ran.stderr[-4000:]
        assert "submit-args" in ran.stdout
    finally:
        watchdog.run(["docker", "image", "rm", "--force", tag], timeout_s=300)


def build_context(folder: Path) -> Path:
    """The files a clean checkout has (tracked or new, none that git ignores): what `docker build .` sends."""
    listed = watchdog.run(["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                          timeout_s=60)
    assert listed.returncode == 0, listed.stderr
    for name in filter(None, listed.stdout.split("\0")):
        if (REPO / name).is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def image(tmp_path_factory) -> Iterator[dockerfile.Image]:
    """The Dockerfile's steps, run with SPARKMIRROR_HOME in a temporary folder. Maven resolves from the shared
    repository (`$SPARKMIRROR_CACHE/m2`: nothing downloaded), pip reuses the pyspark wheel it built once
    (`$SPARKMIRROR_CACHE/pip`); the other wheels are downloaded each run where the registry's answers carry no
    caching headers (as here, about 80 MB)."""
    if engine_answers():
        pytest.skip("a container engine is there: the image itself is built instead")
    root = tmp_path_factory.mktemp("image")
    base_env = {  # the base image's: its Python (>= 3.11) as python3 first on PATH, the host's Java and Maven
        "PATH": f"{Path(sys.base_prefix) / 'bin'}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": str(Path.home()), "LANG": "C.UTF-8", "PIP_CACHE_DIR": str(cache_dir() / "pip"),
        **{k: os.environ[k] for k in ("JAVA_HOME",) if k in os.environ},
    }
    started = time.monotonic()
    built = dockerfile.build(REPO / "Dockerfile", build_context(root / "context"),
                             {"SPARKMIRROR_HOME": str(root / "opt"), "SPARKMIRROR_MAVEN_REPO": str(cache_dir() / "m2")},
                             base_env, skip=lambda command: "apt-get" in command, workdir=root)
    print(f"\nthe Dockerfile's {len(built.ran)} RUN steps took {time.monotonic() - started:.0f} s")
    assert len(built.skipped) == 1, f"one RUN step installs OS packages, the rest run here: {built.skipped}"
    assert not (root / "opt" / "cache" / "m2").exists(), "Maven resolved into the shared repository"
    yield built
    shutil.rmtree(root, ignore_errors=True)  # over 1 GB: a venv with pyspark, the jars, the class archive


def entrypoint(image: dockerfile.Image) -> str:
    found = shutil.which(image.entrypoint[0], path=image.env["PATH"])
    assert found and found.startswith(image.env["SPARKMIRROR_HOME"]), f"the image's entrypoint: {found}"
    return found


def submit_args(image: dockerfile.Image) -> list[str]:
    done = watchdog.run([entrypoint(image), "submit-args", "--scheme", "local"], timeout_s=120, env=image.env)
    assert done.returncode == 0, done.stderr[-3000:]
    return shlex.split(done.stdout)


def test_submit_args_name_only_files_of_the_image(image):
    args = submit_args(image)
    home = image.env["SPARKMIRROR_HOME"]
    jars, app = args[args.index("--jars") + 1].split(","), args[-1]
    settings = dict(arg.split("=", 1) for arg in args[1:-1] if "=" in arg)
    uris = [*jars, app]
    assert all(uri.startswith(f"local://{home}/") for uri in uris), uris
    missing = [uri for uri in uris if not Path(uri.removeprefix("local://")).is_file()]
    assert not missing, f"named by submit-args but not in the image: {missing}"
    assert any("record-path" in uri for uri in jars) and any("spark-sql-kafka" in uri for uri in jars)
    assert Path(settings["spark.pyspark.python"]).parent == Path(home) / "venv" / "bin"
    log_cfg = settings["spark.executor.extraJavaOptions"].removeprefix("-Dlog4j2.configurationFile=")
    assert log_cfg.startswith(home) and Path(log_cfg).is_file()
    spark_home = Path(image.env["SPARK_HOME"])
    assert (spark_home / "bin" / "spark-submit").is_file()
    assert list((spark_home / "jars").glob("spark-kubernetes_*.jar")), "Spark's Kubernetes backend is in the image"


def test_executor_mode_starts_sparks_kubernetes_executor_backend(image):
    """As an executor pod starts: Spark's variables only, its Java options numbered from 0. The backend parses
    its arguments, then fails to reach the driver (there is none): as far as Spark 4.2 goes without a cluster."""
    port = free_port()
    executor_options = next(arg for arg in submit_args(image) if arg.startswith("spark.executor.extraJavaOptions="))
    env = {**image.env, "SPARK_DRIVER_URL": f"spark://CoarseGrainedScheduler@127.0.0.1:{port}",
           "SPARK_EXECUTOR_ID": "1", "SPARK_EXECUTOR_CORES": "1", "SPARK_APPLICATION_ID": "spark-test",
           "SPARK_EXECUTOR_POD_IP": "127.0.0.1", "SPARK_RESOURCE_PROFILE_ID": "0",
           "SPARK_EXECUTOR_POD_NAME": "sparkmirror-exec-1", "SPARK_EXECUTOR_MEMORY": "256m",
           "SPARK_JAVA_OPT_0": "-Dsparkmirror.test=executor",
           "SPARK_JAVA_OPT_1": executor_options.split("=", 1)[1]}  # sparkmirror's log settings, not Spark's
    done = watchdog.run([entrypoint(image), "executor"], timeout_s=180, env=env)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out[-3000:]
    assert "Unrecognized options" not in out and "Usage:" not in out, out[-3000:]
    assert "KubernetesExecutorBackend" in out and f"Failed to connect to /127.0.0.1:{port}" in out, out[-3000:]
    assert "Spark's default log4j profile" not in out, "SPARK_JAVA_OPT_1 reached the JVM"


def spark_properties(args: list[str], master: str) -> dict[str, str]:
    """What Spark's submission client writes into the driver pod's properties file from `spark-submit
    --deploy-mode cluster $(... submit-args --scheme local)`, with `master` for the cluster's."""
    properties = {"spark.master": master, "spark.submit.deployMode": "cluster", "spark.app.name": "sparkmirror",
                  "spark.jars": args[args.index("--jars") + 1]}
    properties.update(args[i + 1].split("=", 1) for i, arg in enumerate(args) if arg == "--conf")
    return properties


def test_driver_mode_runs_sparkmirror_as_the_driver_pod_does(image, clusters, tmp_path, unique):
    topic = f"image-{unique}"
    sent = backlog(clusters.source, topic, PARTITIONS, RECORDS, unique)
    config = write_config(tmp_path / "mm2.properties", clusters.source, clusters.target, topic)
    args = submit_args(image)
    conf_dir = tmp_path / "conf"  # Spark mounts the pod's properties at $SPARK_CONF_DIR/spark.properties
    conf_dir.mkdir()
    javaproperties.dump(spark_properties(args, "local[2]"), (conf_dir / "spark.properties").open("w"),
                        timestamp=False)
    env = {**image.env, "SPARK_CONF_DIR": str(conf_dir), "SPARK_DRIVER_BIND_ADDRESS": "127.0.0.1"}
    log = open(tmp_path / "driver.log", "wb")  # noqa: SIM115
    pod, dog = watchdog.spawn([entrypoint(image), "driver", "--properties-file", str(conf_dir / "spark.properties"),
                               "--class", "org.apache.spark.deploy.PythonRunner", args[-1],
                               "run", config, "--state-dir", str(tmp_path / "state")],
                              stdout=log, stderr=subprocess.STDOUT, env=env)
    pod.log_path = Path(log.name)  # type: ignore[attr-defined]
    try:
        remote = f"A.{topic}"
        target = ClusterAdmin("B", {"bootstrap.servers": clusters.target})
        wait_for(lambda: copied(target, remote, PARTITIONS) == RECORDS, COPY_TIMEOUT_S,
                 f"{RECORDS} records of {topic} on B", pod)
        pod.send_signal(signal.SIGTERM)  # a pod's deletion: to PID 1, the entrypoint, which passes it on
        assert pod.wait(STOP_TIMEOUT_S) == 0, pod.log_path.read_text()[-4000:]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(dog.pgid, signal.SIGKILL)
        pod.wait()
        dog.release()
        log.close()
    assert "stopped (SIGTERM)" in pod.log_path.read_text(), pod.log_path.read_text()[-3000:]
    copies = read_all(clusters.target, remote, PARTITIONS)
    for p in range(PARTITIONS):
        assert [r.value for r in copies[p]] == [r.value for r in sent if r.partition == p], f"{remote}-{p} differs"
