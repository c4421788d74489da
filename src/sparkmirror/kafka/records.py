"""Whether a range of offsets holds records a consumer sees: how a flow knows it has read a partition to its end.

Writing and reading back whole topics (the demo, the tests) is `sparkmirror.testing.records`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from confluent_kafka import Consumer, TopicPartition


def has_records_between(settings: Mapping[str, str], topic: str, partition: int, start: int, end: int,
                        timeout_s: float = 10.0) -> bool:
    """Whether a consumer with these (librdkafka) settings reads any record at offsets start..end-1.

    Offsets hold no record a consumer sees when they are transaction markers, or aborted records read
    with read_committed: a flow has read a partition to its end once only such offsets are left. True when
    the answer cannot be had in time (the caller keeps waiting rather than stops early)."""
    consumer = Consumer({**settings, "group.id": f"sparkmirror-peek-{time.time_ns()}",
                         "enable.auto.commit": "false", "enable.auto.offset.store": "false"})
    try:
        consumer.assign([TopicPartition(topic, partition, start)])
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is not None and not msg.error():
                return msg.offset() < end
            # Positions, not last offsets: the consumer steps over markers without handing them out.
            [tp] = consumer.position([TopicPartition(topic, partition)])
            if tp.offset >= end:
                return False
        return True
    finally:
        consumer.close()
