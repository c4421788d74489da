"""AdminConnection: the admin client of one cluster alias that ClusterAdmin and ConsumerGroups build on.

It renews a client that lost its cluster, and turns a refused login or a security.protocol the listener does
not speak into an error of its own rather than a time-out.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

from sparkmirror.errors import AdminOperationError, ClusterAuthenticationError, SecurityProtocolMismatchError
from sparkmirror.kafka.failures import kafka_error, unreachable_hint
from sparkmirror.kafka.protocol_mismatch import FailureLog, latest_mismatch
from sparkmirror.kafka.tls_failures import is_tls_alert, tls_key_to_fix

logger = logging.getLogger(__name__)

CALL_TIMEOUT_S = 30.0
ANSWER_BACKSTOP_S = 1.0
"""How much longer than a call's request_timeout to wait for its future: librdkafka ends a timed-out request
on its own timer, and a wait of the same length can lose that race and hide the broker's answer."""

_CONNECTION_LOST_CODES = frozenset({KafkaError._ALL_BROKERS_DOWN, KafkaError._TRANSPORT})
_TIMEOUT_CODES = frozenset({KafkaError._TIMED_OUT, KafkaError.REQUEST_TIMED_OUT})
_TLS = ("SSL", "SASL_SSL")


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
        self._failures = FailureLog()
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
        elif error.code() == KafkaError._TRANSPORT and self._protocol in _TLS and is_tls_alert(error.str()):
            self._refused = error  # the broker refused our certificate (see tls_failures)
        elif error.code() in _CONNECTION_LOST_CODES:
            self._renewal.lost(error.str())

    def _result(self, future: Future, timeout_s: float, operation: str) -> object:
        """`future.result()`, noting a time-out so that the next call gets a new client."""
        try:
            result = future.result(timeout=timeout_s)
        except KafkaException as exc:
            err = kafka_error(exc)
            if err is not None and err.code() in _TIMEOUT_CODES:
                self._renewal.lost(f"{operation}: {err.str()}")
            raise
        except FutureTimeout:
            self._renewal.lost(f"{operation}: no answer within {timeout_s:.0f} s")
            raise
        self._renewal.answered()
        return result

    def _answer(self, future: Future, timeout_s: float, operation: str) -> object:
        """The result of a call made with `request_timeout=timeout_s`, waited for `ANSWER_BACKSTOP_S` longer; a
        future that never answers becomes an AdminOperationError naming `operation` and the fix."""
        try:
            return self._result(future, timeout_s + ANSWER_BACKSTOP_S, operation)
        except FutureTimeout:
            raise self._no_answer(operation, timeout_s) from None

    def _no_answer(self, operation: str, timeout_s: float) -> AdminOperationError:
        """The error for a call that got no answer within `timeout_s`; raises the refused login or the protocol
        mismatch instead when that is why."""
        self._raise_if_refused()
        return AdminOperationError(self.alias, operation, f"no answer within {timeout_s:.0f} s",
                                   self._unreachable_hint())

    def _raise_if_refused(self) -> None:
        self._admin.poll(0)  # serves error_cb and the logger
        mismatch = self._protocol_mismatch()
        if mismatch is not None:
            raise mismatch
        if self._refused is not None:
            cause = self._refused.str()
            tls = self._refused.code() != KafkaError._AUTHENTICATION
            raise ClusterAuthenticationError(self.alias, self.bootstrap_servers, cause, tls=tls,
                                             tls_key=tls_key_to_fix(cause) if tls else None)

    def _protocol_mismatch(self, inferred: bool = False, final: bool = False) -> SecurityProtocolMismatchError | None:
        """The error to raise when the latest connection failures show the listener speaks another protocol
        (see protocol_mismatch.latest_mismatch for `inferred` and `final`)."""
        found = latest_mismatch(self._protocol, list(self._failures.recent), inferred, final)
        if found is None:
            return None
        listener, failure = found
        return SecurityProtocolMismatchError(self.alias, self.bootstrap_servers, self._protocol, listener, failure)

    def _unreachable_hint(self) -> str:
        return unreachable_hint(self.alias, self.bootstrap_servers)
