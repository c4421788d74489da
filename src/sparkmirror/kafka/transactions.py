"""Whether a cluster can take the record path's transactions, asked once before an exactly-once flow starts, so
that a cluster that cannot is named with the setting to fix instead of every task timing out in turn."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from confluent_kafka import KafkaError, KafkaException, Producer

from sparkmirror.kafka.failures import UNREACHABLE_CODES, describe, error_code
from sparkmirror.policy.delivery import TRANSACTION_TIMEOUT_MS

PROBE_TIMEOUT_S = 30.0
_librdkafka_logger = logging.getLogger("sparkmirror.librdkafka")
_NO_COORDINATOR = UNREACHABLE_CODES | {KafkaError.COORDINATOR_NOT_AVAILABLE, KafkaError.NOT_COORDINATOR,
                                       KafkaError.COORDINATOR_LOAD_IN_PROGRESS}


def transactions_problem(alias: str, settings: Mapping[str, str], transactional_id: str,
                         timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """None when cluster `alias` initialised a transaction for `transactional_id` (a probe id beside the
    tasks', so it fences none of them), else what went wrong and how to fix it."""
    timeout_ms = str(settings.get("transaction.timeout.ms", TRANSACTION_TIMEOUT_MS))  # the writer's, by default
    producer = Producer({**settings, "transactional.id": transactional_id, "transaction.timeout.ms": timeout_ms,
                         "message.timeout.ms": timeout_ms,  # librdkafka: no longer than the transaction's
                         "logger": _librdkafka_logger})
    try:
        producer.init_transactions(timeout_s)
    except KafkaException as exc:
        code = error_code(exc)
        if code == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
            prefix = transactional_id.rsplit("-", 1)[0]
            return (f"cluster '{alias}' refused transactional id '{transactional_id}' ({describe(exc)}): grant "
                    f"WRITE and DESCRIBE on TransactionalId resources with the prefix '{prefix}' to the principal "
                    f"of '{alias}.producer.*'")
        if code == KafkaError.INVALID_TRANSACTION_TIMEOUT:
            return (f"cluster '{alias}' refused transaction.timeout.ms = {timeout_ms} ({describe(exc)}): raise the "
                    f"brokers' transaction.max.timeout.ms or set '{alias}.producer.transaction.timeout.ms' lower")
        if code in _NO_COORDINATOR:
            return (f"cluster '{alias}' did not coordinate a transaction within {timeout_s:.0f} s ({describe(exc)}): "
                    f"its transaction log (__transaction_state) needs transaction.state.log.replication.factor "
                    f"brokers (default 3) and transaction.state.log.min.isr of them in sync; lower these broker "
                    f"settings or add brokers")
        return f"cluster '{alias}' could not start a transaction: {describe(exc)}"
    return None  # the producer sent nothing: dropping it closes it
