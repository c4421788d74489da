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


def load(bootstrap: str, topics: list[str], partitions: int, records: int, record_size: int, seed: int) -> float:
    """Write `records` records round-robin over the topics' partitions; returns seconds taken."""
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
                producer.produce(topics[slot // partitions], value=payloads.value(i), key=payloads.key(i),
                                 partition=slot % partitions, headers=[("bench-seq", i.to_bytes(8, "big"))],
                                 on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(300) or failures:
        raise PipelineError(f"loading the benchmark backlog failed: {failures[:3]}")
    return time.monotonic() - started
