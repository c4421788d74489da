"""Kafka Connect in distributed mode (`org.apache.kafka.connect.cli.ConnectDistributed`) from the Maven-resolved
Kafka jars, and MirrorMaker 2's three connectors run on it through Connect's REST API, as MM2's docs describe
for "running MirrorMaker 2 on a Connect cluster". Our peer for the takeover trial: several workers of one
Connect group share the connectors' tasks, and when one dies the others take its tasks over.

A worker is one JVM with its own REST port; the workers of a cluster share a `group.id` and three internal topics
(configs, offsets, status) on the cluster they connect to, which for MM2 is the target. Every worker ends when the
owning Python process ends, however it ends (see watchdog.py).
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from sparkmirror import jars
from sparkmirror.errors import EmbeddedSetupError, SparkmirrorError
from sparkmirror.testing import watchdog
from sparkmirror.testing.kafka_cluster import free_port

logger = logging.getLogger(__name__)

MAIN_CLASS = "org.apache.kafka.connect.cli.ConnectDistributed"
BYTE_ARRAY_CONVERTER = "org.apache.kafka.connect.converters.ByteArrayConverter"
MIRROR_PACKAGE = "org.apache.kafka.connect.mirror"
SOURCE_CONNECTOR = "MirrorSourceConnector"
MIRROR_CONNECTORS = (SOURCE_CONNECTOR, "MirrorCheckpointConnector", "MirrorHeartbeatConnector")
DEFAULT_REBALANCE_DELAY_MS = 300_000  # Connect's scheduled.rebalance.max.delay.ms: how long lost tasks wait
DEFAULT_HEAP = ("256m", "2g")  # what connect-distributed.sh gives a worker
HOST = "127.0.0.1"
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 60.0
REST_TIMEOUT_S = 5.0
RUNNING = "RUNNING"
LEADER_LOG_TAIL_BYTES = 1 << 20  # where a worker's last "Joined group" line is


class ConnectRestError(SparkmirrorError):
    """Connect's REST API refused a request or no worker answered it in time."""


def worker_properties(bootstrap_servers: str, group_id: str, port: int,
                      rebalance_delay_ms: int = DEFAULT_REBALANCE_DELAY_MS,
                      extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A distributed worker's settings: Connect's defaults but for single-broker replication factors of its
    internal topics (named after `group_id`), MM2's byte-array converters (records, keys and headers copied as
    they are, as MM2's dedicated mode sets them), its REST listener on loopback `port`, advertised as such (so the
    worker id in a connector's status is `127.0.0.1:<port>`), and `scheduled.rebalance.max.delay.ms`."""
    props = {
        "bootstrap.servers": bootstrap_servers,
        "group.id": group_id,
        "config.storage.topic": f"{group_id}-configs",
        "offset.storage.topic": f"{group_id}-offsets",
        "status.storage.topic": f"{group_id}-status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "key.converter": BYTE_ARRAY_CONVERTER,
        "value.converter": BYTE_ARRAY_CONVERTER,
        "header.converter": BYTE_ARRAY_CONVERTER,
        "listeners": f"http://{HOST}:{port}",
        "rest.advertised.host.name": HOST,
        "rest.advertised.port": str(port),
        "rest.advertised.listener": "http",
        "scheduled.rebalance.max.delay.ms": str(rebalance_delay_ms),
    }
    return {**props, **(extra or {})}


def mirror_connector_configs(source_alias: str, target_alias: str, source_bootstrap: str, target_bootstrap: str,
                             topics: str, tasks_max: int, extra: Mapping[str, str] | None = None
                             ) -> dict[str, dict[str, str]]:
    """The configs of MM2's three connectors for the flow `source_alias->target_alias`, by connector name, as a
    Connect cluster on the target runs them: the clusters' aliases and bootstrap servers, the topics to copy,
    `tasks.max`, and replication factors of 1 for the topics MM2 creates; `extra` is added to all three."""
    base = {
        "source.cluster.alias": source_alias,
        "target.cluster.alias": target_alias,
        "source.cluster.bootstrap.servers": source_bootstrap,
        "target.cluster.bootstrap.servers": target_bootstrap,
        "topics": topics,
        "tasks.max": str(tasks_max),
        "key.converter": BYTE_ARRAY_CONVERTER,
        "value.converter": BYTE_ARRAY_CONVERTER,
        "header.converter": BYTE_ARRAY_CONVERTER,
    }
    own = {
        SOURCE_CONNECTOR: {"replication.factor": "1", "offset-syncs.topic.replication.factor": "1"},
        "MirrorCheckpointConnector": {"checkpoints.topic.replication.factor": "1"},
        "MirrorHeartbeatConnector": {"heartbeats.topic.replication.factor": "1"},
    }
    return {name: {"connector.class": f"{MIRROR_PACKAGE}.{name}", **base, **own[name], **(extra or {})}
            for name in MIRROR_CONNECTORS}


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """One task of a connector as `/connectors/<name>/status` reports it."""

    task: int
    state: str  # RUNNING, PAUSED, FAILED, UNASSIGNED, RESTARTING
    worker_id: str  # host:port of the worker that wrote this status last


@dataclass(frozen=True, slots=True)
class ConnectorStatus:
    """A connector and its tasks as Connect's status topic holds them: what each worker wrote last, so a task of a
    worker that died without a word still shows that worker until another one starts it."""

    name: str
    state: str
    worker_id: str
    tasks: tuple[TaskStatus, ...]

    def running_tasks(self) -> dict[str, list[int]]:
        """worker id -> the ids of the tasks reported RUNNING there, in task order."""
        out: dict[str, list[int]] = {}
        for t in sorted(self.tasks, key=lambda t: t.task):
            if t.state == RUNNING:
                out.setdefault(t.worker_id, []).append(t.task)
        return out

    def busiest_worker(self) -> str | None:
        """The worker running the most tasks (the first task's, on a tie); None if no task runs."""
        running = self.running_tasks()
        return max(running, key=lambda w: (len(running[w]), -running[w][0])) if running else None

    def all_running_elsewhere(self, worker_id: str) -> bool:
        """Every task runs, none of them (as far as the status says) on `worker_id`."""
        return bool(self.tasks) and all(t.state == RUNNING and t.worker_id != worker_id for t in self.tasks)


def parse_connector_status(body: Mapping[str, object]) -> ConnectorStatus:
    """The JSON of `GET /connectors/<name>/status`; ValueError when it is not that."""
    try:
        connector = body["connector"]
        tasks = body.get("tasks") or []
        if not isinstance(connector, Mapping) or not isinstance(tasks, list):
            raise TypeError("connector must be an object and tasks a list")
        return ConnectorStatus(
            name=str(body["name"]), state=str(connector["state"]), worker_id=str(connector.get("worker_id", "")),
            tasks=tuple(TaskStatus(int(t["id"]), str(t["state"]), str(t.get("worker_id", ""))) for t in tasks))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"not a connector status: {json.dumps(body)[:300]} ({exc})") from exc


_JOINED = re.compile(r"Joined group at generation \d+ .*leaderUrl='https?://([^/']+)/?'")


def group_leader(log_text: str) -> str | None:
    """The worker id (host:port) of the group's leader as a worker's log last named it (each `Joined group at
    generation N ... leaderUrl='http://host:port/'` line of DistributedHerder); None if it never joined."""
    found = _JOINED.findall(log_text)
    return found[-1] if found else None


class ConnectRest:
    """Connect's REST API at one worker's URL; every failure is a ConnectRestError naming the request."""

    def __init__(self, url: str, timeout_s: float = REST_TIMEOUT_S) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s

    def call(self, method: str, path: str, body: Mapping[str, object] | None = None) -> object:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.url}{path}", data=data, method=method,  # noqa: S310 - our URL
                                         headers={"Content-Type": "application/json", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as answer:  # noqa: S310 - http://127.0.0.1
                raw = answer.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:300]
            raise ConnectRestError(f"{method} {self.url}{path}: HTTP {exc.code} {detail}") from exc
        except (OSError, urllib.error.URLError) as exc:  # refused, reset, timed out
            raise ConnectRestError(f"{method} {self.url}{path}: {exc}") from exc
        return json.loads(raw) if raw else None

    def healthy(self) -> bool:
        """The worker has joined its group and answers (`/health`, KIP-1017)."""
        try:
            self.call("GET", "/health")
        except ConnectRestError:
            return False
        return True

    def put_connector(self, name: str, config: Mapping[str, str]) -> None:
        """Create or update a connector (idempotent)."""
        self.call("PUT", f"/connectors/{name}/config", dict(config))

    def status(self, name: str) -> ConnectorStatus:
        body = self.call("GET", f"/connectors/{name}/status")
        if not isinstance(body, Mapping):
            raise ConnectRestError(f"GET {self.url}/connectors/{name}/status: not an object: {body!r}")
        return parse_connector_status(body)


def submit(rests: Sequence[ConnectRest], configs: Mapping[str, Mapping[str, str]],
           timeout_s: float = START_TIMEOUT_S) -> None:
    """Put each connector's config through the first worker that takes it, retrying while the group forms (a
    worker answers 409 during a rebalance, and refuses connections before its REST server is up)."""
    deadline = time.monotonic() + timeout_s
    for name, config in configs.items():
        while True:
            errors = []
            for rest in rests:
                try:
                    rest.put_connector(name, config)
                    break
                except ConnectRestError as exc:
                    errors.append(str(exc))
            else:
                if time.monotonic() > deadline:
                    raise ConnectRestError(f"no worker took connector {name} within {timeout_s:.0f} s: "
                                           + "; ".join(errors))
                time.sleep(0.5)
                continue
            break


class ConnectWorker:
    """One distributed worker; start(), kill() (SIGKILL, a crash) or stop() (SIGTERM), and start() again on the
    same folder, port and settings after either: the worker comes back as a new member of the same group."""

    def __init__(self, bootstrap_servers: str, group_id: str, name: str = "connect",
                 rebalance_delay_ms: int = DEFAULT_REBALANCE_DELAY_MS, settings: Mapping[str, str] | None = None,
                 heap: tuple[str, str] = DEFAULT_HEAP, keep_logs: bool = False) -> None:
        self.name = name
        self.port = free_port()
        self.properties = worker_properties(bootstrap_servers, group_id, self.port, rebalance_delay_ms, settings)
        self.heap = heap
        self.keep_logs = keep_logs
        self.dir: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self._watchdog: watchdog.Watchdog | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def worker_id(self) -> str:
        """How Connect names this worker in a connector's status."""
        return f"{HOST}:{self.port}"

    @property
    def rest(self) -> ConnectRest:
        return ConnectRest(self.url)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def command(self) -> list[str]:
        assert self.dir is not None
        cp = os.pathsep.join(str(p) for p in jars.classpath("kafka"))
        log_cfg = resources.files("sparkmirror.testing").joinpath("broker-log4j2.properties")
        return [jars.java_executable(), f"-Xms{self.heap[0]}", f"-Xmx{self.heap[1]}", "-XX:+UseG1GC",
                "-XX:MaxGCPauseMillis=20", "-Djava.awt.headless=true", f"-Dlog4j2.configurationFile={log_cfg}",
                f"-Dkafka.logs.dir={self.dir / 'logs'}", "-cp", cp, MAIN_CLASS, str(self.dir / "worker.properties")]

    def start(self) -> ConnectWorker:
        """Launch the JVM (its folder made on the first start), without waiting for it (see wait_ready)."""
        if self.alive:
            raise EmbeddedSetupError(f"Connect worker {self.name} is already running (pid {self.pid})")
        self._release()
        if self.dir is None:
            self.dir = Path(tempfile.mkdtemp(prefix=f"sparkmirror-{self.name}-"))
            (self.dir / "logs").mkdir()
            (self.dir / "worker.properties").write_text("".join(f"{k}={v}\n" for k, v in self.properties.items()))
        with open(self.dir / "logs" / "stdout.log", "ab") as out:
            self.process, self._watchdog = watchdog.spawn(self.command(), stdout=out, stderr=subprocess.STDOUT)
        self.starts += 1
        logger.info("started Connect worker %s pid=%d rest=%s", self.name, self.process.pid, self.url)
        return self

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.alive and self.process is not None else None

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Block until the worker answers `/health` (it has joined the group); raise with its log tail otherwise."""
        deadline = time.monotonic() + timeout_s
        rest = self.rest
        while not rest.healthy():
            if not self.alive:
                raise EmbeddedSetupError(f"Connect worker {self.name} exited during start-up:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise EmbeddedSetupError(f"Connect worker {self.name} not ready after {timeout_s:.0f} s:\n"
                                         f"{self.log_tail()}")
            time.sleep(0.25)

    def kill(self) -> None:
        """SIGKILL the worker's process group (its JVM and watchdog) and reap it: a crash. The folder stays."""
        if self.process is not None and self.process.poll() is None:
            assert self._watchdog is not None
            os.killpg(self._watchdog.pgid, signal.SIGKILL)
            self.process.wait()
        self._release()

    def stop(self) -> int | None:
        """SIGTERM the worker (SIGKILL after STOP_TIMEOUT_S); returns its exit code. The folder stays."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.kill()
        self._release()
        return self.process.returncode if self.process is not None else None

    def close(self) -> None:
        """Stop the worker and remove its folder unless keep_logs."""
        self.stop()
        if self.dir is not None and not self.keep_logs:
            shutil.rmtree(self.dir, ignore_errors=True)

    def _release(self) -> None:
        if self._watchdog is not None:
            self._watchdog.release()
            self._watchdog = None

    def leader(self) -> str | None:
        """The group's leader as this worker's log last named it (group_leader)."""
        log = self.dir / "logs" / "server.log" if self.dir is not None else None
        if log is None or not log.is_file():
            return None
        with open(log, "rb") as f:
            f.seek(max(0, log.stat().st_size - LEADER_LOG_TAIL_BYTES))
            return group_leader(f.read().decode(errors="replace"))

    def log_tail(self, lines: int = 40) -> str:
        if self.dir is None:
            return ""
        chunks = []
        for f in (self.dir / "logs" / "stdout.log", self.dir / "logs" / "server.log"):
            if f.is_file():
                chunks.append("\n".join(f.read_text(errors="replace").splitlines()[-lines:]))
        return "\n".join(chunks)
