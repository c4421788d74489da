"""Java client settings (as written in MM2 files) -> librdkafka settings for confluent-kafka."""

from __future__ import annotations

import logging
from collections.abc import Mapping

logger = logging.getLogger(__name__)

# Settings librdkafka knows under the same name as the Java client.
_SAME_NAME = frozenset({
    "bootstrap.servers", "client.id", "security.protocol", "sasl.mechanism", "client.rack",
    "metadata.max.age.ms", "reconnect.backoff.ms", "reconnect.backoff.max.ms", "retry.backoff.ms",
    "socket.connection.setup.timeout.ms", "connections.max.idle.ms", "request.timeout.ms",
    "ssl.endpoint.identification.algorithm", "ssl.key.password", "ssl.cipher.suites",
    "acks", "linger.ms", "compression.type", "enable.idempotence", "max.in.flight.requests.per.connection",
    "retries", "delivery.timeout.ms", "batch.size", "isolation.level", "fetch.min.bytes",
    "fetch.max.bytes", "max.partition.fetch.bytes", "session.timeout.ms", "heartbeat.interval.ms",
    "max.poll.interval.ms", "group.instance.id", "transactional.id", "transaction.timeout.ms",
})
_RENAMED = {
    "receive.buffer.bytes": "socket.receive.buffer.bytes",
    "send.buffer.bytes": "socket.send.buffer.bytes",
    "fetch.max.wait.ms": "fetch.wait.max.ms",
    "max.request.size": "message.max.bytes",
}


def librdkafka_settings(java_settings: Mapping[str, str]) -> dict[str, str]:
    """Translate what has a librdkafka equivalent; log the rest once (full translation: issue 4)."""
    out: dict[str, str] = {}
    skipped = []
    for key, value in java_settings.items():
        if key in _SAME_NAME:
            out[key] = value
        elif key in _RENAMED:
            out[_RENAMED[key]] = value
        else:
            skipped.append(key)
    if skipped:
        logger.warning("client settings not passed to the control-plane client: %s", ", ".join(sorted(skipped)))
    return out
