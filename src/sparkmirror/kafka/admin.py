"""ClusterAdmin: a typed façade over confluent-kafka's AdminClient for one cluster alias.

Every call is wrapped so that a failure names the operation and the cluster.
"""

from __future__ import annotations

import base64
import logging
import re
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Protocol

from confluent_kafka import KafkaError, KafkaException, TopicCollection, TopicPartition, Uuid
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    ResourceType,
)

from sparkmirror.errors import (
    AdminOperationError,
    ClusterAuthenticationError,
    ClusterUnreachableError,
    SecurityProtocolMismatchError,
)
from sparkmirror.model import NewTopicSpec, TopicConfigEntry

logger = logging.getLogger(__name__)
_librdkafka_logger = logging.getLogger("sparkmirror.librdkafka")

PROBE_TIMEOUT_S = 10.0
PROBE_SLICE_S = 0.5
CALL_TIMEOUT_S = 30.0


class ConfigAlterationLike(Protocol):
    """What `alter_topic_configs` reads of an alteration (control.configs.ConfigAlteration fits)."""

    @property
    def name(self) -> str: ...
    @property
    def op(self) -> str: ...
    @property
    def value(self) -> str | None: ...


class ClientRenewal:
    """When to replace a cluster's client: after it lost the cluster or a call timed out. The first time at
    once, then after 1 s, 2 s, ... up to 30 s while the trouble lasts; an answer starts over."""

    MIN_BACKOFF_S = 1.0
    MAX_BACKOFF_S = 30.0

    def __init__(self, alias: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.alias = alias
        self._clock = clock
        self._why: str | None = None
        self._gap_s = 0.0  # wait before the next renewal
        self._renewed_at = -float("inf")
        self.renewals = 0

    def lost(self, why: str) -> None:
        self._why = self._why or why

    def answered(self) -> None:
        if self._why is None:
            self._gap_s = 0.0

    def due(self) -> bool:
        """True (once) when a new client should be made now."""
        if self._why is None or self._clock() - self._renewed_at < self._gap_s:
            return False
        logger.info("cluster '%s': new admin client (%s)", self.alias, self._why)
        self._why = None
        self._renewed_at = self._clock()
        self._gap_s = min(self.MAX_BACKOFF_S, self._gap_s * 2) if self._gap_s else self.MIN_BACKOFF_S
        self.renewals += 1
        return True


class AdminConnection:
    """An AdminClient for one cluster that names it by alias and turns a refused login, or a security.protocol
    the listener does not speak, into an error."""

    def __init__(self, alias: str, settings: Mapping[str, str]) -> None:
        self.alias = alias
        self.bootstrap_servers = settings.get("bootstrap.servers", "")
        conf: dict[str, object] = dict(settings)
        conf.setdefault("socket.connection.setup.timeout.ms", "5000")
        self._protocol = str(settings.get("security.protocol", "PLAINTEXT")).upper()
        self._failures = _FailureLog()
        conf["logger"] = self._failures
        conf["error_cb"] = self._on_error
        self._conf = conf
        self._refused: KafkaError | None = None
        self._client = AdminClient(conf)
        self._retired: AdminClient | None = None
        self._renewal = ClientRenewal(alias)

    @property
    def _admin(self) -> AdminClient:
        """The client for the next call: a new one when the cluster was lost or a call timed out since.

        A long-lived librdkafka admin client can stay broken after its cluster restarted (seen with Kafka
        4.3 and librdkafka 2.16: every offset fetch of a group timed out, while a new client answered at once).
        """
        self._client.poll(0)  # serves error_cb, which reports a lost cluster
        if self._renewal.due():
            # The old one stays referenced until the next renewal: dropping it would end the calls another
            # thread may still wait on (librdkafka fails them with _DESTROY).
            self._retired, self._client = self._client, AdminClient(self._conf)
        return self._client

    def _on_error(self, error: KafkaError) -> None:
        # librdkafka retries a refused login forever and reports it only here, not to the waiting call.
        if error.code() in (KafkaError._AUTHENTICATION, KafkaError._SSL):
            self._refused = error
        elif error.code() in _CONNECTION_LOST_CODES:
            self._renewal.lost(error.str())

    def _result(self, future: Future, timeout_s: float, operation: str) -> object:
        """`future.result()`, noting a time-out so that the next call gets a new client."""
        try:
            result = future.result(timeout=timeout_s)
        except KafkaException as exc:
            err = exc.args[0] if exc.args else None
            if isinstance(err, KafkaError) and err.code() in _TIMEOUT_CODES:
                self._renewal.lost(f"{operation}: {err.str()}")
            raise
        except FutureTimeout:
            self._renewal.lost(f"{operation}: no answer within {timeout_s:.0f} s")
            raise
        self._renewal.answered()
        return result

    def _raise_if_refused(self) -> None:
        self._admin.poll(0)  # serves error_cb and the logger
        mismatch = self._protocol_mismatch()
        if mismatch is not None:
            raise mismatch
        if self._refused is not None:
            raise ClusterAuthenticationError(self.alias, self.bootstrap_servers, self._refused.str(),
                                             tls=self._refused.code() == KafkaError._SSL)

    def _protocol_mismatch(self, inferred: bool = False, final: bool = False) -> SecurityProtocolMismatchError | None:
        """The error to raise when the latest connection failures show the listener speaks another protocol.

        `inferred`: also the mismatches read from where the connection broke, only safe before the cluster
        ever answered (a probe). `final`: the probe is out of time, so one such failure is enough.
        """
        failures = list(self._failures.recent)
        found, run = None, 0
        for failure in reversed(failures):  # the latest run of failures that name the same mismatch
            mismatch = _listener_mismatch(self._protocol, failure)
            if mismatch is None or (found is not None and mismatch[0] != found[0]):
                break
            found, run = mismatch, run + 1
        if found is None or (found[2] and not inferred) or run < (1 if final else found[1]):
            return None
        return SecurityProtocolMismatchError(self.alias, self.bootstrap_servers, self._protocol, found[0],
                                             _FAILURE_PREFIX.sub("", failures[-1]))


class ClusterAdmin(AdminConnection):
    """Admin operations on one cluster, identified by its alias in every error."""

    def probe(self, timeout_s: float = PROBE_TIMEOUT_S) -> None:
        """Raise unless a metadata request is answered within the timeout.

        Refused credentials fail at once, a security.protocol the listener does not speak within a second
        or so (SecurityProtocolMismatchError, not "unreachable").
        """
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                metadata = self._admin.list_topics(timeout=min(PROBE_SLICE_S, max(0.01, deadline - time.monotonic())))
                break
            except KafkaException as exc:
                self._raise_if_refused()
                final = time.monotonic() >= deadline
                mismatch = self._protocol_mismatch(inferred=True, final=final)
                if mismatch is not None:
                    raise mismatch from None
                if final:
                    raise ClusterUnreachableError(self.alias, self.bootstrap_servers, _describe(exc)) from None
        if not metadata.brokers:
            raise ClusterUnreachableError(self.alias, self.bootstrap_servers, "no broker in metadata")

    def topic_partitions(self, timeout_s: float = CALL_TIMEOUT_S) -> dict[str, int]:
        """Every topic (internal ones too) with its partition count."""
        try:
            metadata = self._admin.list_topics(timeout=timeout_s)
        except KafkaException as exc:
            raise AdminOperationError(self.alias, "list topics", _describe(exc)) from None
        return {name: len(t.partitions) for name, t in metadata.topics.items() if t.error is None}

    def create_topics(self, specs: list[NewTopicSpec],
                      replication_factor_key: str = "replication.factor") -> dict[str, Exception | None]:
        """Create topics; per-topic results, an existing topic counting as success.

        `replication_factor_key` is the MM2 setting that chose the specs' replication factor, named in the
        hint when the cluster has fewer brokers.
        """
        if not specs:
            return {}
        new = [NewTopic(s.name, num_partitions=s.partitions, replication_factor=s.replication_factor,
                        config=dict(s.configs)) for s in specs]
        futures = self._admin.create_topics(new, operation_timeout=CALL_TIMEOUT_S, request_timeout=CALL_TIMEOUT_S)
        return self._per_topic(futures, "create topic", ok_codes=(KafkaError.TOPIC_ALREADY_EXISTS,),
                               replication_factor_key=replication_factor_key)

    def topic_config_values(self, topics: list[str], key: str) -> dict[str, str]:
        """One config value (e.g. max.message.bytes) of each topic, as the broker reports it."""
        return {topic: entries[key].value for topic, entries in self._describe_topic_configs(topics).items()
                if key in entries}

    def topic_configs(self, topics: list[str]) -> dict[str, list[TopicConfigEntry]]:
        """Each topic's configs that MM2 would consider copying: not read-only, not sensitive, not static."""
        return {topic: [TopicConfigEntry(e.name, e.value, _source(e) is ConfigSource.DEFAULT_CONFIG)
                        for e in entries.values()
                        if not e.is_read_only and not e.is_sensitive and e.value is not None
                        and _source(e) is not ConfigSource.STATIC_BROKER_CONFIG]
                for topic, entries in self._describe_topic_configs(topics).items()}

    def alter_topic_configs(self, alterations: Mapping[str, Sequence[ConfigAlterationLike]]
                            ) -> dict[str, Exception | None]:
        """Apply incremental SET/DELETE config alterations per topic; per-topic results.

        A topic's alterations succeed or fail together (the broker validates them as one resource).
        """
        resources = [ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
            ConfigEntry(a.name, a.value if a.op == "SET" else None, incremental_operation=_OP_TYPES[a.op])
            for a in ops]) for topic, ops in alterations.items() if ops]
        if not resources:
            return {}
        futures = self._admin.incremental_alter_configs(resources, request_timeout=CALL_TIMEOUT_S)
        return self._per_topic({r.name: f for r, f in futures.items()}, "alter configs of",
                               auth_hint="Grant this principal ALTER_CONFIGS on topic '{topic}', or set "
                                         "'<source>-><target>.sync.topic.configs.enabled = false'")

    def topic_ids(self, topics: list[str]) -> dict[str, str]:
        """The topic id of each topic that exists, as Kafka's tools print it; a re-created topic gets a new one."""
        if not topics:
            return {}
        futures = self._admin.describe_topics(TopicCollection(list(topics)), request_timeout=CALL_TIMEOUT_S)
        ids: dict[str, str] = {}
        for name, future in futures.items():
            try:
                ids[name] = _uuid_string(self._result(future, CALL_TIMEOUT_S, "describe topics").topic_id)
            except KafkaException as exc:
                err = exc.args[0] if exc.args else None
                if isinstance(err, KafkaError) and err.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                    continue
                raise AdminOperationError(self.alias, f"describe topic '{name}'", _describe(exc)) from None
        return ids

    def delete_topics(self, names: list[str]) -> dict[str, Exception | None]:
        """Delete topics; per-topic results, a topic that does not exist counting as success."""
        if not names:
            return {}
        futures = self._admin.delete_topics(list(names), operation_timeout=CALL_TIMEOUT_S,
                                            request_timeout=CALL_TIMEOUT_S)
        return self._per_topic(futures, "delete topic", ok_codes=(KafkaError.UNKNOWN_TOPIC_OR_PART,),
                               auth_hint="Grant this principal DELETE on topic '{topic}'")

    def _describe_topic_configs(self, topics: list[str], timeout_s: float = CALL_TIMEOUT_S) -> dict[str, dict]:
        """Configs per topic; a topic created a moment ago is unknown to its broker for a few ms: retried."""
        out: dict[str, dict] = {}
        todo = list(topics)
        deadline = time.monotonic() + timeout_s
        while todo:
            resources = [ConfigResource(ResourceType.TOPIC, t) for t in todo]
            retry = []
            for resource, future in self._admin.describe_configs(resources, request_timeout=CALL_TIMEOUT_S).items():
                try:
                    out[resource.name] = self._result(future, CALL_TIMEOUT_S, "describe configs")
                except KafkaException as exc:
                    err = exc.args[0] if exc.args else None
                    if not _is_transient(err) or time.monotonic() > deadline:
                        raise AdminOperationError(self.alias, f"describe configs of '{resource.name}'",
                                                  _describe(exc)) from None
                    retry.append(resource.name)
            todo = retry
            if todo:
                time.sleep(0.1)
        return out

    def create_partitions(self, totals: dict[str, int]) -> dict[str, Exception | None]:
        """Raise topics' partition counts to the given totals; per-topic results."""
        if not totals:
            return {}
        futures = self._admin.create_partitions([NewPartitions(t, n) for t, n in totals.items()],
                                                request_timeout=CALL_TIMEOUT_S)
        return self._per_topic(futures, "add partitions to")

    def _per_topic(self, futures: Mapping[str, Future[None]], operation: str,
                   ok_codes: tuple[int, ...] = (), auth_hint: str = "",
                   replication_factor_key: str = "replication.factor") -> dict[str, Exception | None]:
        """Wait for per-topic futures: None where it worked, an error naming topic and cluster otherwise.

        `auth_hint` (with `{topic}` filled in) replaces the default hint when authorization fails.
        """
        results: dict[str, Exception | None] = {}
        for name, future in futures.items():
            try:
                self._result(future, CALL_TIMEOUT_S, operation)
                results[name] = None
            except KafkaException as exc:
                err = exc.args[0] if exc.args else None
                ok = isinstance(err, KafkaError) and err.code() in ok_codes
                hint = auth_hint.format(topic=name) if auth_hint and _is_authorization_failure(err) else _hint(
                    exc, replication_factor_key)
                results[name] = None if ok else AdminOperationError(
                    self.alias, f"{operation} '{name}'", _describe(exc), hint)
        return results

    def watermarks(self, topic: str, partitions: int, timeout_s: float = CALL_TIMEOUT_S) -> dict[int, tuple[int, int]]:
        """(low, high) offsets of each partition; retries while leadership is still settling."""
        return self.watermarks_of({topic: partitions}, timeout_s)[topic]

    def watermarks_of(self, partitions: Mapping[str, int],
                      timeout_s: float = CALL_TIMEOUT_S) -> dict[str, dict[int, tuple[int, int]]]:
        """`watermarks` of many topics in two requests (a flow of 100 topics is not 200 round trips)."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                low = self._list_offsets(partitions, OffsetSpec.earliest(), timeout_s)
                high = self._list_offsets(partitions, OffsetSpec.latest(), timeout_s)
                return {t: {p: (low[t, p], high[t, p]) for p in range(n)} for t, n in partitions.items()}
            except KafkaException as exc:
                err = exc.args[0] if exc.args else None
                if not _is_transient(err) or time.monotonic() > deadline:
                    raise AdminOperationError(self.alias, f"list offsets of {_names(partitions)}",
                                              _describe(exc)) from None
                time.sleep(0.2)

    def _list_offsets(self, partitions: Mapping[str, int], spec: OffsetSpec,
                      timeout_s: float) -> dict[tuple[str, int], int]:
        request = {TopicPartition(t, p): spec for t, n in partitions.items() for p in range(n)}
        if not request:
            return {}
        futures = self._admin.list_offsets(request, request_timeout=timeout_s)
        return {(tp.topic, tp.partition): self._result(f, timeout_s, "list offsets").offset
                for tp, f in futures.items()}


def _names(partitions: Mapping[str, int]) -> str:
    names = sorted(partitions)
    if len(names) == 1:
        return f"'{names[0]}'"
    return f"{len(names)} topics ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})"


_TRANSIENT_CODES = frozenset({
    KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE, KafkaError.UNKNOWN_TOPIC_OR_PART,
    KafkaError.REQUEST_TIMED_OUT, KafkaError._TRANSPORT, KafkaError._TIMED_OUT,
})


_CONNECTION_LOST_CODES = frozenset({KafkaError._ALL_BROKERS_DOWN, KafkaError._TRANSPORT})
_TIMEOUT_CODES = frozenset({KafkaError._TIMED_OUT, KafkaError.REQUEST_TIMED_OUT})

_OP_TYPES = {"SET": AlterConfigOpType.SET, "DELETE": AlterConfigOpType.DELETE}


def _uuid_string(uuid: Uuid) -> str:
    """Java's Uuid.toString (URL-safe base64, unpadded); librdkafka's str() uses the standard alphabet."""
    raw = b"".join(bits.to_bytes(8, "big", signed=True)
                   for bits in (uuid.get_most_significant_bits(), uuid.get_least_significant_bits()))
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _is_authorization_failure(err: object) -> bool:
    return isinstance(err, KafkaError) and err.code() in (KafkaError.TOPIC_AUTHORIZATION_FAILED,
                                                          KafkaError.CLUSTER_AUTHORIZATION_FAILED)


def _source(entry: object) -> ConfigSource:
    source = entry.source  # an int from describe_configs, the enum elsewhere
    return source if isinstance(source, ConfigSource) else ConfigSource(int(source))


def _is_transient(err: object) -> bool:
    """Errors seen while a new topic's leadership settles or a broker reconnects."""
    return isinstance(err, KafkaError) and (err.retriable() or err.code() in _TRANSIENT_CODES)


def _describe(exc: KafkaException) -> str:
    err = exc.args[0] if exc.args else None
    if isinstance(err, KafkaError):
        return f"{err.str()} ({err.name()})"
    return str(exc)


def _hint(exc: KafkaException, replication_factor_key: str = "replication.factor") -> str:
    err = exc.args[0] if exc.args else None
    if isinstance(err, KafkaError) and err.code() == KafkaError.INVALID_REPLICATION_FACTOR:
        return (f"Set '{replication_factor_key}' (or '<source>-><target>.{replication_factor_key}') in the "
                f"properties file to at most the number of brokers of this cluster, or -1 for the broker default")
    if isinstance(err, KafkaError) and err.code() in (KafkaError.TOPIC_AUTHORIZATION_FAILED,
                                                       KafkaError.CLUSTER_AUTHORIZATION_FAILED):
        return "Grant this principal CREATE on the target cluster, or create the topic beforehand"
    return ""


class _FailureLog:
    """librdkafka's `logger`: passes every line on and keeps the latest connection failures (facility FAIL).

    Some protocol mismatches reach only the log, not error_cb: a listener closing the connection is an
    INFO-level close to librdkafka.
    """

    def __init__(self) -> None:
        self.recent: deque[str] = deque(maxlen=8)

    def log(self, level: int, msg: str, *args: object) -> None:
        _librdkafka_logger.log(level, msg, *args)
        if len(args) == 3 and args[0] == "FAIL":  # confluent-kafka calls log(level, "%s [%s] %s", fac, name, text)
            self.recent.append(str(args[2]))


_FAILURE_STATE = re.compile(r"\(after \d+ms in state (\w+)\)")
_FAILURE_PREFIX = re.compile(r"^(\[thrd:[^\]]*\]: )?\S+/(bootstrap|\d+): ")


def _listener_mismatch(protocol: str, failure: str) -> tuple[str, int, bool] | None:
    """What a connection failure says of a listener that does not speak `protocol`; None if it says nothing.

    Returns (what the listener looks like, failures in a row that prove it, whether that is only inferred
    from the state the connection broke in). The texts are librdkafka 2.x's, measured against real
    listeners (see tests/unit/kafka/test_protocol_mismatch.py).
    """
    found = _FAILURE_STATE.search(failure)
    state = found.group(1) if found else ""
    tls, sasl = protocol in ("SSL", "SASL_SSL"), protocol in ("SASL_PLAINTEXT", "SASL_SSL")
    if sasl and "Request not valid in current SASL state" in failure:  # the broker's answer: no SASL here
        return f"the listener takes no SASL login (it looks like {'SSL' if tls else 'PLAINTEXT'})", 1, False
    if tls and state == "SSL_HANDSHAKE" and "Disconnected" in failure:  # closed without a TLS alert
        return "the listener does not speak TLS (it looks like PLAINTEXT or SASL_PLAINTEXT)", 2, False
    if not tls and ("connecting to a SSL listener?" in failure
                    or (state == "APIVERSION_QUERY" and "Disconnected" in failure)):
        return ("the listener closes the connection before answering the first request, as a TLS listener "
                "does (it looks like SSL or SASL_SSL)", 3, True)
    if not sasl and state == "UP" and "Disconnected" in failure:
        return ("the listener answers ApiVersions, then closes the connection at the next request, as a SASL "
                f"listener does before a login (it looks like {'SASL_SSL' if tls else 'SASL_PLAINTEXT'})", 3, True)
    return None
