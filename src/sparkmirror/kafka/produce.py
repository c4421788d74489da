"""The one librdkafka producer sparkmirror's Python side writes with: acks=all and idempotent, always.

`write` sends a batch, waiting out a full local queue (BufferError) instead of failing, then waits a bounded
time for the acknowledgements and raises DeliveryFailed when a record was refused or is still unacknowledged.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from confluent_kafka import KafkaError, Producer

from sparkmirror.policy.delivery import ACKNOWLEDGED_WRITES

_QUEUE_FULL_WAIT_S = 0.05
_librdkafka_logger = logging.getLogger("sparkmirror.librdkafka")

Headers = Sequence[tuple[str, bytes | None]]


@dataclass(frozen=True, slots=True)
class Message:
    """One record to write; `timestamp` 0 means the time it is sent."""

    partition: int
    key: bytes | None
    value: bytes | None
    headers: Headers | None = None
    timestamp: int = 0


class DeliveryFailed(Exception):
    """What a write's flush found: the refused records' errors, in delivery order, and how many got no answer."""

    def __init__(self, errors: list[KafkaError], remaining: int, timeout_s: float) -> None:
        self.errors = errors
        self.remaining = remaining
        self.timeout_s = timeout_s
        super().__init__(f"{len(errors)} records refused ({', '.join(e.str() for e in errors[:3])}), {remaining} "
                         f"not acknowledged within {timeout_s:.0f} s")


class AcknowledgedProducer:
    """A librdkafka Producer with ACKNOWLEDGED_WRITES forced over `settings`, which are over `defaults`.

    Writes from several threads are safe: each write sees the delivery reports of its own records only.
    """

    def __init__(self, settings: Mapping[str, str], defaults: Mapping[str, str] | None = None) -> None:
        self._producer = Producer({**(defaults or {}), **settings, **ACKNOWLEDGED_WRITES,
                                   "logger": _librdkafka_logger})

    def write(self, topic: str, messages: Iterable[Message], timeout_s: float) -> int:
        """Send every message, then wait up to `timeout_s` for all to be acknowledged; returns how many.

        DeliveryFailed unless all were acknowledged. A KafkaException while sending (a record too large, a
        partition that does not exist) is the caller's to map; the records sent before it stay queued.
        """
        refused: list[KafkaError] = []

        def on_delivery(err: KafkaError | None, _msg: object) -> None:
            if err is not None:
                refused.append(err)

        count = 0
        for m in messages:
            headers = list(m.headers) if m.headers else None
            while True:
                try:
                    self._producer.produce(topic, value=m.value, key=m.key, partition=m.partition,
                                           timestamp=m.timestamp, headers=headers, on_delivery=on_delivery)
                    break
                except BufferError:
                    self._producer.poll(_QUEUE_FULL_WAIT_S)
            count += 1
        remaining = self._producer.flush(timeout_s)
        if refused or remaining:
            raise DeliveryFailed(refused, remaining, timeout_s)
        return count

    def close(self, timeout_s: float) -> None:
        """Wait up to `timeout_s` for what is still queued, without raising."""
        self._producer.flush(timeout_s)
