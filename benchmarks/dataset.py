"""The benchmark backlog: seeded pseudo-random 16-byte keys and values, one header, spread over partitions."""

from __future__ import annotations

import random
import time

from confluent_kafka import Producer

from sparkmirror.errors import PipelineError

KEY_BYTES = 16
_BLOCK_BYTES = 8 << 20


class Payloads:
    """Values are slices of one seeded random block at varying offsets: distinct and incompressible."""

    def __init__(self, record_size: int, seed: int) -> None:
        rng = random.Random(seed)  # noqa: S311 - benchmark data
        self.block = rng.randbytes(_BLOCK_BYTES + record_size + KEY_BYTES)
        self.record_size = record_size
        self.span = _BLOCK_BYTES

    def key(self, i: int) -> bytes:
        start = (i * 104_729) % self.span
        return self.block[start:start + KEY_BYTES]

    def value(self, i: int) -> bytes:
        start = (i * 7_919) % self.span
        return self.block[start:start + self.record_size]


SSN_HEADER = "ssn"  # the transforms mode's header to drop (9 bytes on every record)
SKIP_HEADER = "skip"  # the transforms mode's mark of a record to filter out (every SKIP_EVERY-th)
SKIP_EVERY = 10


def skipped(records: int) -> int:
    """Records of a `shaped` backlog that carry the skip mark."""
    return (records + SKIP_EVERY - 1) // SKIP_EVERY


def load(bootstrap: str, topics: list[str], partitions: int, records: int, record_size: int, seed: int,
         shaped: bool = False, value_prefix: bytes = b"", key_prefix: bytes = b"") -> float:
    """Write `records` records round-robin over the topics' partitions; returns seconds taken. `shaped` adds
    the transforms mode's headers: an `ssn` header on every record and a `skip` mark on every tenth.
    `value_prefix` and `key_prefix` start every value and key (the schemas mode: the wire-format header on values,
    keys that are not in the wire format), their sizes kept."""
    payloads = Payloads(record_size, seed)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": "20",
                         "batch.size": "1000000", "queue.buffering.max.kbytes": "262144",
                         "enable.idempotence": "true"})
    failures: list[str] = []

    def on_delivery(err: object, _msg: object) -> None:
        if err is not None:
            failures.append(str(err))

    started = time.monotonic()
    slots = len(topics) * partitions
    for i in range(records):
        slot = i % slots
        while True:
            try:
                headers = [("bench-seq", i.to_bytes(8, "big"))]
                if shaped:
                    headers.append((SSN_HEADER, b"123456789"))
                    if i % SKIP_EVERY == 0:
                        headers.append((SKIP_HEADER, b"1"))
                value = value_prefix + payloads.value(i)[len(value_prefix):] if value_prefix else payloads.value(i)
                key = key_prefix + payloads.key(i)[len(key_prefix):] if key_prefix else payloads.key(i)
                producer.produce(topics[slot // partitions], value=value, key=key,
                                 partition=slot % partitions, headers=headers, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(300) or failures:
        raise PipelineError(f"loading the benchmark backlog failed: {failures[:3]}")
    return time.monotonic() - started
