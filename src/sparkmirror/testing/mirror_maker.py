"""LocalMirrorMaker: real MirrorMaker 2 in dedicated mode (`org.apache.kafka.connect.mirror.MirrorMaker`)
from the Maven-resolved connect-mirror jars. Our peer in interop tests and benchmarks; it ends when the owning
Python process ends, however it ends (see watchdog.py)."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

from sparkmirror import jars
from sparkmirror.testing import watchdog

logger = logging.getLogger(__name__)

MAIN_CLASS = "org.apache.kafka.connect.mirror.MirrorMaker"
DEFAULT_HEAP = ("256m", "2g")  # what connect-mirror-maker.sh gives it
STOP_TIMEOUT_S = 60.0
# MM2's dedicated mode keeps Connect's own state in three topics (replication factor 3 by default);
# a single-broker cluster needs these beside kafka_cluster.SINGLE_BROKER.
CONNECT_SINGLE_BROKER = "".join(f"{k}.storage.replication.factor = 1\n" for k in ("offset", "status", "config"))


class LocalMirrorMaker:
    """One MM2 process for a properties text; start(), then stop() (SIGTERM, SIGKILL after a timeout)."""

    def __init__(self, properties: str, clusters: tuple[str, ...] = (), name: str = "mm2",
                 heap: tuple[str, str] = DEFAULT_HEAP, keep_logs: bool = False,
                 classpath: tuple[Path, ...] = ()) -> None:
        """`classpath`: jars added to MM2's own (dedicated mode validates a connector's transforms with the
        classpath's loader, so a user's transform found only on plugin.path is refused as not found)."""
        self.properties = properties
        self.classpath = classpath
        self.clusters = clusters
        self.name = name
        self.heap = heap
        self.keep_logs = keep_logs
        self.dir: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self._watchdog: watchdog.Watchdog | None = None

    def command(self) -> list[str]:
        assert self.dir is not None
        cp = os.pathsep.join(str(p) for p in (*jars.classpath("kafka"), *self.classpath))
        log_cfg = resources.files("sparkmirror.testing").joinpath("broker-log4j2.properties")
        args = [str(self.dir / "mm2.properties")]
        if self.clusters:
            args += ["--clusters", *self.clusters]
        return [jars.java_executable(), f"-Xms{self.heap[0]}", f"-Xmx{self.heap[1]}", "-XX:+UseG1GC",
                "-XX:MaxGCPauseMillis=20", "-Djava.awt.headless=true", f"-Dlog4j2.configurationFile={log_cfg}",
                f"-Dkafka.logs.dir={self.dir / 'logs'}", "-cp", cp, MAIN_CLASS, *args]

    def start(self) -> LocalMirrorMaker:
        self.dir = Path(tempfile.mkdtemp(prefix=f"sparkmirror-{self.name}-"))
        (self.dir / "logs").mkdir()
        (self.dir / "mm2.properties").write_text(self.properties)
        with open(self.dir / "logs" / "stdout.log", "wb") as out:
            self.process, self._watchdog = watchdog.spawn(self.command(), stdout=out, stderr=subprocess.STDOUT)
        logger.info("started MirrorMaker 2 pid=%d dir=%s", self.process.pid, self.dir)
        return self

    def log_tail(self, lines: int = 40) -> str:
        if self.dir is None:
            return ""
        f = self.dir / "logs" / "server.log"
        return "\n".join(f.read_text(errors="replace").splitlines()[-lines:]) if f.is_file() else ""

    def stop(self) -> int | None:
        """Stop MM2; returns its exit code."""
        code = None
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(timeout=STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    assert self._watchdog is not None
                    os.killpg(self._watchdog.pgid, signal.SIGKILL)
                    self.process.wait()
            code = self.process.returncode
        if self._watchdog is not None:
            self._watchdog.release()
            self._watchdog = None
        if self.dir is not None and not self.keep_logs:
            shutil.rmtree(self.dir, ignore_errors=True)
        return code

    def __enter__(self) -> LocalMirrorMaker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
