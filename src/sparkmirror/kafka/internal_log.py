"""InternalTopicWriter: writes MM2's internal records (offset syncs, heartbeats) to one cluster."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from confluent_kafka import KafkaError, KafkaException, Producer

from sparkmirror.errors import AdminOperationError

_librdkafka_logger = logging.getLogger("sparkmirror.librdkafka")
FLUSH_TIMEOUT_S = 30.0


class InternalTopicWriter:
    """Acknowledged writes of already-encoded (key, value) records; `write` returns once all are stored."""

    def __init__(self, alias: str, settings: Mapping[str, str]) -> None:
        self.alias = alias
        self._producer = Producer({"linger.ms": "0", **settings, "acks": "all", "enable.idempotence": "true",
                                   "logger": _librdkafka_logger})

    def write(self, topic: str, records: Iterable[tuple[bytes, bytes]]) -> int:
        errors: list[KafkaError] = []

        def on_delivery(err: KafkaError | None, _msg: object) -> None:
            if err is not None:
                errors.append(err)

        count = 0
        for key, value in records:
            while True:
                try:
                    self._producer.produce(topic, value=value, key=key, partition=0, on_delivery=on_delivery)
                    break
                except BufferError:
                    self._producer.poll(0.05)
                except KafkaException as exc:
                    raise self._error(topic, exc.args[0]) from None
            count += 1
        remaining = self._producer.flush(FLUSH_TIMEOUT_S)
        if errors:
            raise self._error(topic, errors[0])
        if remaining:
            raise AdminOperationError(self.alias, f"write to '{topic}'",
                                      f"{remaining} records not acknowledged within {FLUSH_TIMEOUT_S:.0f} s")
        return count

    def _error(self, topic: str, err: KafkaError) -> AdminOperationError:
        hint = (f"Grant WRITE on '{topic}' to the principal used for cluster '{self.alias}'"
                if err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED else "")
        return AdminOperationError(self.alias, f"write to '{topic}'", f"{err.str()} ({err.name()})", hint)

    def close(self) -> None:
        self._producer.flush(FLUSH_TIMEOUT_S)
