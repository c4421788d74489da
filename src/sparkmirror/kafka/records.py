"""Whether a range of offsets holds records a consumer sees: how a flow knows it has read a partition to its end,
and how old the first of them is (the lag meter's and `sparkmirror status`'s lag in seconds).

Writing and reading back whole topics (the demo, the tests) is `sparkmirror.testing.records`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from confluent_kafka import TIMESTAMP_NOT_AVAILABLE, Consumer, KafkaError, TopicPartition

from sparkmirror.model import KafkaRecord


def has_records_between(settings: Mapping[str, str], topic: str, partition: int, start: int, end: int,
                        timeout_s: float = 10.0) -> bool:
    """Whether a consumer with these (librdkafka) settings reads any record at offsets start..end-1.

    Offsets hold no record a consumer sees when they are transaction markers, or aborted records read
    with read_committed: a flow has read a partition to its end once only such offsets are left. True when
    the answer cannot be had in time (the caller keeps waiting rather than stops early)."""
    found = oldest_records(settings, {(topic, partition): (start, end)}, timeout_s)
    # None: only markers (or aborted records) there; absent: no answer in time, so keep waiting
    return found.get((topic, partition), 0) is not None


OLDEST_POLL_S = 0.2


def oldest_records(settings: Mapping[str, str], ranges: Mapping[tuple[str, int], tuple[int, int]],
                   timeout_s: float = 5.0) -> dict[tuple[str, int], int | None]:
    """Per (topic, partition) -> (start, end): the timestamp (ms) of the first record a consumer with these
    settings sees at an offset in start..end-1, or None when the range holds none (only transaction markers,
    or aborted records under read_committed). A partition whose answer was not had within the timeout is
    left out: its age is unknown, not zero.

    One consumer reads every partition, each paused once answered, so a flow of many partitions costs one
    connection per broker. A start below the log's start (deleted by retention) reads from the oldest record.
    """
    out: dict[tuple[str, int], int | None] = {tp: None for tp, (start, end) in ranges.items() if start >= end}
    pending = {tp: rng for tp, rng in ranges.items() if rng[0] < rng[1]}
    if not pending:
        return out
    consumer = Consumer({**settings, "group.id": f"sparkmirror-peek-{time.time_ns()}",
                         "enable.auto.commit": "false", "enable.auto.offset.store": "false",
                         "enable.partition.eof": "false", "auto.offset.reset": "earliest",
                         # one record per partition is wanted: fetch little, and prefetch nothing more
                         "max.partition.fetch.bytes": "65536", "fetch.max.bytes": "1048576",
                         "queued.min.messages": "1"})
    try:
        consumer.assign([TopicPartition(topic, partition, start) for (topic, partition), (start, _) in pending.items()])
        deadline = time.monotonic() + timeout_s
        while pending and time.monotonic() < deadline:
            answered: list[tuple[str, int]] = []
            for msg in consumer.consume(num_messages=500, timeout=OLDEST_POLL_S):
                tp = (msg.topic(), msg.partition())
                if msg.error() or tp not in pending:
                    continue
                kind, timestamp = msg.timestamp()
                if msg.offset() >= pending[tp][1]:
                    out[tp] = None
                elif kind != TIMESTAMP_NOT_AVAILABLE:
                    out[tp] = timestamp
                answered.append(tp)  # a record without a timestamp: seen, but its age stays unknown
                del pending[tp]
            # Positions, not last offsets: the consumer steps over markers without handing them out.
            for position in consumer.position([TopicPartition(t, p) for t, p in pending]):
                tp = (position.topic, position.partition)
                if position.offset >= pending[tp][1]:
                    out[tp] = None
                    answered.append(tp)
                    del pending[tp]
            if answered:
                consumer.pause([TopicPartition(t, p) for t, p in answered])
        return out
    finally:
        consumer.close()


def read_range(settings: Mapping[str, str], topic: str, partition: int, start: int, end: int,
               timeout_s: float = 30.0, max_records: int | None = None, whole: bool = False) -> list[KafkaRecord]:
    """The records a consumer with these settings sees at offsets start..end-1 of one partition, in order (the
    failover drill's windows). Stops at `end`, at the partition's end, after `max_records`, or when `timeout_s`
    runs out: then what was read so far (the caller compares only what it has), or, with `whole`, TimeoutError."""
    if start >= end or max_records == 0:
        return []
    consumer = Consumer({**settings, "group.id": f"sparkmirror-drill-{time.time_ns()}",
                         "enable.auto.commit": "false", "enable.auto.offset.store": "false",
                         "enable.partition.eof": "true", "auto.offset.reset": "earliest"})
    out: list[KafkaRecord] = []
    try:
        consumer.assign([TopicPartition(topic, partition, start)])
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            msg = consumer.poll(OLDEST_POLL_S)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    break
                continue
            if msg.offset() >= end:
                break
            kind, timestamp = msg.timestamp()
            out.append(KafkaRecord(partition, msg.offset(), msg.key(), msg.value(),
                                   tuple((k, v) for k, v in (msg.headers() or ())), kind, timestamp))
            if msg.offset() + 1 >= end or (max_records is not None and len(out) >= max_records):
                break
        else:
            if whole:
                raise TimeoutError(f"{topic}-{partition}: {len(out)} record(s) of offsets {start}..{end - 1} read "
                                   f"in {timeout_s:.0f} s, not all")
        return out
    finally:
        consumer.close()


def read_topic(settings: Mapping[str, str], topic: str, ends: Mapping[int, tuple[int, int]],
               timeout_s: float = 60.0) -> list[KafkaRecord]:
    """Every record of `topic` up to the high watermarks in `ends` (partition -> (low, high)), in order within
    each partition (a Connect offsets topic: the latest record of a key wins, and a key keeps to one partition).
    Raises TimeoutError naming what was not read when `timeout_s` runs out: a store read in part is a wrong one."""
    todo = {p: high for p, (low, high) in ends.items() if high > low}
    out: list[KafkaRecord] = []
    if not todo:
        return out
    consumer = Consumer({**settings, "group.id": f"sparkmirror-read-{time.time_ns()}",
                         "enable.auto.commit": "false", "enable.auto.offset.store": "false",
                         "enable.partition.eof": "true", "auto.offset.reset": "earliest"})
    try:
        consumer.assign([TopicPartition(topic, p, ends[p][0]) for p in todo])
        deadline = time.monotonic() + timeout_s
        while todo:
            if time.monotonic() > deadline:
                raise TimeoutError(f"read {topic} partitions {sorted(todo)} to their ends in {timeout_s:.0f} s")
            msg = consumer.poll(OLDEST_POLL_S)
            if msg is None:
                continue
            p = msg.partition()
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF and p in todo and msg.offset() >= todo[p]:
                    del todo[p]
                continue
            if p not in todo or msg.offset() >= todo[p]:
                continue
            kind, timestamp = msg.timestamp()
            out.append(KafkaRecord(p, msg.offset(), msg.key(), msg.value(),
                                   tuple((k, v) for k, v in (msg.headers() or ())), kind, timestamp))
            if msg.offset() + 1 >= todo[p]:
                del todo[p]
        return out
    finally:
        consumer.close()
