"""The JVM that runs a file's own MM2 classes for the control plane (policy/plugged.py's ClassHost).

A small JVM on this host, started on the first question and only then, reached through py4j (the gateway
pyspark ships): its classpath is the record path's jar (`MirrorClasses`, which loads and configures a class from
`plugin.path` as MM2 does) and the connector's jars (MM2's interfaces at the Kafka version Spark runs). It serves
every command alike (`run`, `validate`, `status`, `failover`, the Python client), none of which needs a Spark
session for it. It ends with this process: py4j's gateway exits when its standard input closes, which the kernel
does when this process dies, SIGKILL included.
"""

from __future__ import annotations

import atexit
import collections
import logging
import os
import threading
from pathlib import Path

from sparkmirror.errors import ConfigError, EmbeddedSetupError
from sparkmirror.jars.java import java_executable, pyspark_jars_dir
from sparkmirror.jars.maven import classpath
from sparkmirror.jars.record_path import record_path_jar
from sparkmirror.policy.plugged import Answer, ClassSpec, has_class_host, use_class_host

logger = logging.getLogger(__name__)

_JVM_OPTIONS = ["-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto"]
_SHARED_JARS = ("py4j-", "slf4j-api-")  # from Spark's jars: the gateway, and the logging API Kafka's classes use


class JvmClassHost:
    """One gateway JVM per process, started when a custom class is first asked something."""

    def __init__(self, cache: Path | None = None) -> None:
        self._cache = cache
        self._lock = threading.Lock()
        self._gateway = None
        self._process = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=40)
        self._instances: dict[ClassSpec, object] = {}  # py4j JavaObjects, one per spec

    def call(self, spec: ClassSpec, method: str, *args: str) -> Answer:
        from py4j.protocol import Py4JError, Py4JJavaError

        instance = self._instance(spec)
        try:
            return getattr(instance, method)(*args)
        except Py4JJavaError as exc:
            raise ConfigError([f"{spec.key}: {spec.class_name}.{method}({', '.join(args)}) threw "
                               f"{_java_text(exc)}"]) from None
        except Py4JError as exc:
            raise ConfigError([f"{spec.key}: {spec.class_name}.{method} could not be called: "
                               f"{_py4j_text(exc)}"]) from None

    def _instance(self, spec: ClassSpec):
        from py4j.protocol import Py4JJavaError

        gateway = self._started()
        known = self._instances.get(spec)
        if known is not None:
            return known
        mirror_classes = gateway.jvm.io.sparkmirror.recordpath.MirrorClasses
        try:
            made = mirror_classes.instance(spec.class_name, spec.interface, dict(spec.configs),
                                           list(spec.plugin_path))
        except Py4JJavaError as exc:
            raise ConfigError([f"{spec.key}: '{spec.class_name}' could not be used as MM2's {spec.interface}: "
                               f"{_java_text(exc)}"]) from None
        self._instances[spec] = made
        return made

    def _started(self):
        with self._lock:
            if self._process is not None and self._process.poll() is not None:  # it died: a new one, new instances
                logger.warning("the JVM of the file's own MM2 classes ended (exit %s); starting another: %s",
                               self._process.returncode, " ".join(self._stderr)[-500:])
                self._gateway, self._process = None, None
                self._instances.clear()
            if self._gateway is None:
                self._gateway, self._process = self._launch()
                atexit.unregister(self.close)
                atexit.register(self.close)
            return self._gateway

    def _launch(self):
        from py4j.java_gateway import GatewayParameters, JavaGateway

        shared = [j for j in sorted(pyspark_jars_dir().glob("*.jar")) if j.name.startswith(_SHARED_JARS)]
        py4j_jar = next(j for j in shared if j.name.startswith("py4j-"))
        jars = [record_path_jar(self._cache), *classpath("spark-kafka", self._cache),
                *(j for j in shared if j is not py4j_jar)]
        logger.info("starting a JVM for the file's own MM2 classes")
        port, token, process = _launch_gateway(py4j_jar, jars, self._stderr)
        gateway = JavaGateway(gateway_parameters=GatewayParameters(port=port, auth_token=token, auto_convert=True,
                                                                   auto_close=True))
        return gateway, process

    def close(self) -> None:
        """Stop the JVM (also done at exit; a killed process's JVM ends on its own)."""
        with self._lock:
            gateway, process, self._gateway, self._process = self._gateway, self._process, None, None
            self._instances.clear()
        if gateway is not None:
            try:
                gateway.shutdown()
            except Exception:  # the JVM may be gone already; it is stopped below either way
                logger.debug("class host shutdown", exc_info=True)
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except Exception:  # noqa: BLE001 - it did not end in time: killed
                process.kill()


def _launch_gateway(py4j_jar: Path, jars: list[Path], stderr: collections.deque[str]):
    """py4j's launcher: an authentication token (the gateway listens on loopback), its own process group (a
    Ctrl-C of the terminal is this process's to handle) and an exit when its standard input closes."""
    from py4j.java_gateway import launch_gateway

    try:
        port, token, process = launch_gateway(
            jarpath=str(py4j_jar), classpath=os.pathsep.join(str(j) for j in jars), javaopts=list(_JVM_OPTIONS),
            die_on_exit=True, redirect_stderr=stderr, java_path=java_executable(), enable_auth=True,
            create_new_process_group=True, return_proc=True)
    except ValueError:  # it printed no port: the JVM did not start
        raise EmbeddedSetupError("the JVM for the file's own MM2 classes did not start: "
                                 + " ".join(stderr)[-2000:]) from None
    return port, token.decode() if isinstance(token, bytes) else token, process


def _py4j_text(exc: Exception) -> str:
    """py4j's own failure (no such method, a lost gateway): its exception line, without the gateway's trace."""
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return (lines[1] if len(lines) > 1 else lines[0]) if lines else type(exc).__name__


def _java_text(exc: Exception) -> str:
    """The Java exception's class and message (the first line of its stack trace)."""
    java = getattr(exc, "java_exception", None)
    text = str(java.toString()) if java is not None else str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


def ensure_class_host() -> None:
    """Give this process its class host, unless it has one (each command, the client and the supervisor call this;
    nothing starts until a custom class is asked something)."""
    if not has_class_host():
        use_class_host(JvmClassHost())
