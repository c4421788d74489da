"""librdkafka failures as sparkmirror errors: the one mapping every Kafka façade uses, so that each error names
the operation, the cluster and, where known, the fix."""

from __future__ import annotations

from collections.abc import Mapping

from confluent_kafka import KafkaError, KafkaException

from sparkmirror.errors import AdminOperationError, ClusterUnreachableError

Failure = KafkaError | KafkaException

UNREACHABLE_CODES = frozenset({KafkaError._TIMED_OUT, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN})
"""Codes of a cluster that did not answer in time or could not be reached at all."""
AUTHORIZATION_CODES = frozenset({KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.CLUSTER_AUTHORIZATION_FAILED})
LEADERSHIP_CODES = frozenset({KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE})
"""Codes of a partition whose leader is moving or, on a topic created a moment ago, not yet known: worth a retry."""


def kafka_error(failure: Failure | None) -> KafkaError | None:
    """The KafkaError of a failure: the failure itself or a KafkaException's first argument; None if it has none."""
    if isinstance(failure, KafkaError):
        return failure
    err = failure.args[0] if failure is not None and failure.args else None
    return err if isinstance(err, KafkaError) else None


def error_code(failure: Failure | None) -> int | None:
    """The failure's librdkafka or broker error code; None if it has none."""
    err = kafka_error(failure)
    return None if err is None else err.code()


def describe(failure: Failure) -> str:
    """librdkafka's text and the code's name, e.g. `Broker: Topic authorization failed (TOPIC_AUTHORIZATION_FAILED)`."""
    err = kafka_error(failure)
    if err is not None:
        return f"{err.str()} ({err.name()})"
    return str(failure)


def unreachable_hint(alias: str, bootstrap_servers: str) -> str:
    """The fix to suggest when a cluster did not answer."""
    return (f"Check that cluster '{alias}' is up and reachable at bootstrap.servers="
            f"{bootstrap_servers}, or allow a longer timeout")


def operation_error(alias: str, operation: str, failure: Failure,
                    hints: Mapping[int, str] | None = None) -> AdminOperationError:
    """An AdminOperationError for `operation` on cluster `alias`; `hints` gives the fix for an error code."""
    code = error_code(failure)
    hint = (hints or {}).get(code, "") if code is not None else ""
    return AdminOperationError(alias, operation, describe(failure), hint)


def unreachable_error(alias: str, bootstrap_servers: str, failure: Failure, doing: str = "") -> ClusterUnreachableError:
    """A ClusterUnreachableError for a cluster that did not answer, `doing` what (e.g. "reading 't'"), if given."""
    cause = describe(failure)
    return ClusterUnreachableError(alias, bootstrap_servers, f"{doing}: {cause}" if doing else cause)
