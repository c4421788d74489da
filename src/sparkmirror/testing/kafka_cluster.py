"""LocalKafkaCluster: one single-node KRaft Kafka (combined broker + controller) on loopback ports.

Started from the Maven-resolved jars with `kafka.Kafka`, storage formatted in a temp folder first.
Used by the demo and the tests; any number can run side by side. Every JVM it starts ends when the owning
Python process ends, however it ends (see watchdog.py). With `sasl_users` the client listener is
SASL_PLAINTEXT (SCRAM-SHA-512, SCRAM-SHA-256 and PLAIN), the users' SCRAM credentials written at format time;
with `listeners` (and `tls`) there are SSL, mTLS and SASL_SSL listeners, and with `super_users` KRaft's
StandardAuthorizer (see broker_listeners.py).
"""

from __future__ import annotations

import base64
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path

from sparkmirror import jars
from sparkmirror.errors import ClusterUnreachableError, EmbeddedSetupError
from sparkmirror.testing import watchdog
from sparkmirror.testing.broker_listeners import (
    SASL_MECHANISMS,
    BrokerTls,
    ClientListener,
    check_listeners,
    check_sasl_users,
    listener_properties,
    scram_arguments,
)

__all__ = ["SASL_MECHANISMS", "SINGLE_BROKER", "BrokerTls", "ClientListener", "LocalKafkaCluster", "free_port",
           "free_ports", "new_cluster_id", "start_clusters"]

logger = logging.getLogger(__name__)

START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 20.0
DEFAULT_HEAP = "384m"
_JVM_FLAGS = ["-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-Djava.awt.headless=true",
              "-XX:TieredStopAtLevel=1", "-Xshare:auto"]


_handed_out: set[int] = set()


# MM2 settings a single-broker cluster needs: every topic MM2 creates defaults to 2 or 3 replicas.
SINGLE_BROKER = "".join(f"{k} = 1\n" for k in (
    "replication.factor", "offset-syncs.topic.replication.factor", "heartbeats.topic.replication.factor",
    "checkpoints.topic.replication.factor"))


def free_ports(count: int) -> list[int]:
    """Distinct free loopback TCP ports, never one this process handed out before.

    The sockets are held open together, so the OS cannot return the same port twice in one call; the
    record of earlier ports keeps clusters that start in parallel (and bind seconds later) apart.
    """
    held: list[socket.socket] = []  # bound until we return, so the OS keeps offering new ports
    ports: list[int] = []
    try:
        while len(ports) < count:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            held.append(s)
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
            if port not in _handed_out:
                ports.append(port)
        _handed_out.update(ports)
        return ports
    finally:
        for s in held:
            s.close()


def free_port() -> int:
    """One currently free loopback TCP port (see free_ports)."""
    return free_ports(1)[0]


def new_cluster_id() -> str:
    """A random Kafka cluster id: URL-safe base64 of a UUID, never starting with '-' (as Kafka's own
    Uuid.randomUuid ensures), since the storage tool would read such an id as an option."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


def _server_properties(node_dir: Path, port: int, controller_port: int, extra: dict[str, str],
                       secured: dict[str, str] | None = None) -> str:
    props = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(node_dir / "data"),
        "num.partitions": "1",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "3",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "transaction.state.log.num.partitions": "3",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        "num.network.threads": "2",
        "num.io.threads": "2",
        "log.cleaner.dedupe.buffer.size": "8388608",
        "auto.create.topics.enable": "false",
        **(secured or {}),
        **extra,
    }
    return "".join(f"{k}={v}\n" for k, v in props.items())


class LocalKafkaCluster:
    """A single-node KRaft cluster in a subprocess; use as a context manager or call start()/stop()."""

    def __init__(self, name: str = "kafka", heap: str = DEFAULT_HEAP, keep_logs: bool = False,
                 broker_config: dict[str, str] | None = None, sasl_users: Mapping[str, str] | None = None,
                 listeners: Sequence[ClientListener] | None = None, tls: BrokerTls | None = None,
                 super_users: Sequence[str] | None = None) -> None:
        """`sasl_users` (name -> password): the SASL users; alone, they make the client listener SASL_PLAINTEXT.
        `listeners`: the client listeners (bootstrap_servers is the first one's), `tls` the broker's stores for
        those that speak TLS. `super_users` (e.g. `User:mirror`; a client certificate's principal is its CN)
        turns StandardAuthorizer on: everyone else needs ACLs."""
        if sasl_users is not None:
            check_sasl_users(sasl_users)
        if listeners is None and sasl_users is not None:
            listeners = (ClientListener("SASL_PLAINTEXT", "SASL_PLAINTEXT"),)
        if listeners is not None:
            check_listeners(listeners, sasl_users, tls)
        elif super_users is not None:
            raise ValueError("an authorizer needs a secured client listener (listeners or sasl_users)")
        self.listeners = tuple(listeners or ())
        self.tls = tls
        self.super_users = tuple(super_users) if super_users is not None else None
        self.name = name
        self.heap = heap
        self.keep_logs = keep_logs
        self.broker_config = dict(broker_config or {})
        self.sasl_users = dict(sasl_users) if sasl_users is not None else None
        self.port = 0
        self.controller_port = 0
        self.internal_port = 0  # the PLAINTEXT inter-broker listener of a secured cluster; 0 otherwise
        self.ports: dict[str, int] = {}  # client listener name -> port, on a secured cluster
        self.dir: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._watchdog: watchdog.Watchdog | None = None

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    def bootstrap(self, listener: str) -> str:
        """bootstrap.servers of the client listener named `listener`."""
        return f"127.0.0.1:{self.ports[self._listener(listener).name]}"

    @property
    def internal_bootstrap(self) -> str:
        """The broker's own PLAINTEXT listener (no login, a super user under the authorizer), for tests to set
        up and check data; bootstrap_servers on a cluster without secured listeners."""
        return f"127.0.0.1:{self.internal_port}" if self.internal_port else self.bootstrap_servers

    @property
    def security_protocol(self) -> str:
        """Protocol of the listener at bootstrap_servers."""
        return self.listeners[0].protocol if self.listeners else "PLAINTEXT"

    def _listener(self, name: str | None) -> ClientListener:
        if name is None:
            return self.listeners[0]
        for listener in self.listeners:
            if listener.name == name:
                return listener
        raise ValueError(f"cluster '{self.name}' has no client listener {name!r}")

    def client_settings(self, user: str | None = None, mechanism: str = "SCRAM-SHA-512", listener: str | None = None,
                        identity: Path | None = None) -> dict[str, str]:
        """librdkafka settings for a client listener (default: the first, at bootstrap_servers); on a SASL
        listener as `user` (default: the first one), on a TLS one trusting the broker's CA and, with
        `identity` (a PEM file with an unencrypted key and its chain), presenting that client certificate."""
        if not self.listeners:
            return {"bootstrap.servers": self.bootstrap_servers}
        chosen = self._listener(listener)
        settings = {"bootstrap.servers": self.bootstrap(chosen.name), "security.protocol": chosen.protocol}
        if chosen.tls:
            assert self.tls is not None
            settings["ssl.ca.location"] = str(self.tls.ca_pem)
            if identity is not None:
                settings.update({"ssl.certificate.location": str(identity), "ssl.key.location": str(identity)})
        if chosen.sasl:
            assert self.sasl_users is not None
            if mechanism not in SASL_MECHANISMS:
                raise ValueError(f"mechanism must be one of {', '.join(SASL_MECHANISMS)}, not {mechanism!r}")
            user = next(iter(self.sasl_users)) if user is None else user
            settings.update({"sasl.mechanism": mechanism, "sasl.username": user,
                             "sasl.password": self.sasl_users[user]})
        return settings

    @property
    def pid(self) -> int | None:
        """The broker JVM's pid while this object has one running, for tests that watch it."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    @property
    def log_file(self) -> Path:
        assert self.dir is not None
        return self.dir / "logs" / "server.log"

    def _java(self, main: str, *args: str, heap: str) -> list[str]:
        cp = os.pathsep.join(str(p) for p in jars.classpath("kafka"))
        log_cfg = resources.files("sparkmirror.testing").joinpath("broker-log4j2.properties")
        assert self.dir is not None
        return [jars.java_executable(), f"-Xms{heap}", f"-Xmx{heap}", *_JVM_FLAGS,
                f"-Dlog4j2.configurationFile={log_cfg}", f"-Dkafka.logs.dir={self.dir / 'logs'}",
                "-cp", cp, main, *args]

    def start_process(self) -> None:
        """Format storage and launch the broker, without waiting for it (see wait_ready)."""
        self.dir = Path(tempfile.mkdtemp(prefix=f"sparkmirror-{self.name}-"))
        (self.dir / "logs").mkdir()
        secured: dict[str, str] | None = None
        scram_args = scram_arguments(self.sasl_users) if self.sasl_users else []
        if not self.listeners:
            self.port, self.controller_port = free_ports(2)
        else:
            *client_ports, self.internal_port, self.controller_port = free_ports(len(self.listeners) + 2)
            self.ports = {listener.name: port for listener, port in zip(self.listeners, client_ports, strict=True)}
            self.port = client_ports[0]
            secured = listener_properties(self.listeners, self.ports, self.internal_port, self.controller_port,
                                          self.sasl_users, self.tls, self.super_users)
        config = self.dir / "server.properties"
        config.write_text(_server_properties(self.dir, self.port, self.controller_port, self.broker_config, secured))
        fmt = watchdog.run(self._java("kafka.tools.StorageTool", "format", f"--cluster-id={new_cluster_id()}",
                                      "-c", str(config), *scram_args, heap="128m"), timeout_s=120)
        if fmt.returncode != 0:
            raise EmbeddedSetupError(f"formatting storage of local cluster '{self.name}' failed:\n"
                                     f"{fmt.stdout}{fmt.stderr}")
        self._launch()

    def _launch(self) -> None:
        """Start the broker, watched, on the formatted folder; its output is appended to logs/stdout.log."""
        assert self.dir is not None
        with open(self.dir / "logs" / "stdout.log", "ab") as out:
            self._proc, self._watchdog = watchdog.spawn(
                self._java("kafka.Kafka", str(self.dir / "server.properties"), heap=self.heap),
                stdout=out, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Block until an admin metadata call answers; raise with the broker log tail otherwise."""
        from sparkmirror.kafka.admin import ClusterAdmin  # keep confluent_kafka lazy

        deadline = time.monotonic() + timeout_s
        admin = ClusterAdmin(self.name, {"bootstrap.servers": self.internal_bootstrap})
        while True:
            if self._proc is None or self._proc.poll() is not None:
                raise EmbeddedSetupError(f"local cluster '{self.name}' exited during start-up:\n{self.log_tail()}")
            try:
                admin.probe(timeout_s=2.0)
                return
            except ClusterUnreachableError:
                if time.monotonic() > deadline:
                    raise EmbeddedSetupError(f"local cluster '{self.name}' not ready after {timeout_s:.0f} s:\n"
                                             f"{self.log_tail()}") from None

    def start(self) -> LocalKafkaCluster:
        self.start_process()
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        logger.info("local cluster %s ready at %s", self.name, self.bootstrap_servers)
        return self

    def log_tail(self, lines: int = 40) -> str:
        if self.dir is None:
            return ""
        chunks = []
        for f in (self.dir / "logs" / "stdout.log", self.log_file):
            if f.is_file():
                chunks.append("\n".join(f.read_text(errors="replace").splitlines()[-lines:]))
        return "\n".join(chunks)

    def kill(self) -> None:
        """SIGKILL the broker (a crash, for failover tests); the folder stays until stop()."""
        if self._proc is not None and self._proc.poll() is None:
            assert self._watchdog is not None
            os.killpg(self._watchdog.pgid, signal.SIGKILL)
            self._proc.wait()
        self._release_watchdog()

    def _release_watchdog(self) -> None:
        if self._watchdog is not None:
            self._watchdog.release()
            self._watchdog = None

    def restart(self, timeout_s: float = START_TIMEOUT_S) -> LocalKafkaCluster:
        """Relaunch the broker on its folder, config and ports (no formatting: the data stays), then wait_ready.

        For after kill() (a crash) or a stop() with keep_logs; a broker still running is stopped first.
        """
        if self.dir is None or not (self.dir / "server.properties").is_file():
            raise EmbeddedSetupError(f"local cluster '{self.name}' cannot restart: its folder is gone (never "
                                     "started, or stopped without keep_logs). Call start() instead")
        self._terminate()
        self._launch()
        try:
            self.wait_ready(timeout_s)
        except BaseException:
            self.kill()  # the folder stays for the log; stop() removes it
            raise
        logger.info("local cluster %s restarted at %s", self.name, self.bootstrap_servers)
        return self

    def _terminate(self) -> None:
        """Stop the broker process (SIGTERM, then SIGKILL after STOP_TIMEOUT_S), keeping the folder."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.kill()
        self._release_watchdog()
        self._proc = None

    def stop(self) -> None:
        """Stop the broker (SIGTERM, then SIGKILL) and remove its folder unless keep_logs."""
        self._terminate()
        if self.dir is not None and not self.keep_logs:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> LocalKafkaCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_clusters(names: list[str], **kwargs: object) -> list[LocalKafkaCluster]:
    """Start several clusters in parallel (their JVMs boot concurrently)."""
    clusters = [LocalKafkaCluster(n, **kwargs) for n in names]  # type: ignore[arg-type]
    try:
        for c in clusters:
            c.start_process()
        for c in clusters:
            c.wait_ready()
    except BaseException:
        for c in clusters:
            c.stop()
        raise
    return clusters
