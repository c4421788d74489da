"""The takeover trial's view of the remote topic: every record read back as it arrives (its id, its offset, its
CreateTime), and after each kill a probe that notes when the copy came back.

The rate producer stamps each record with its CreateTime and its id (`bench-seq`); both replicators keep the
timestamp. A record created after the killed process was gone can only have been copied by its successor, so
the takeover is over when every partition of the remote topic holds such a record. Records written after the
kill but created before it (re-sends and the backlog the kill left) show the copy resumed, not that it caught up.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

from benchmarks.kill_analysis import ID_HEADER, QUIET, TopicReader
from sparkmirror.kafka.admin import ClusterAdmin


@dataclass
class Probe:
    """What came back after one kill: `killed_at` (wall clock, s) is when the kill was sent, `threshold_ms` the
    CreateTime after which a record is the successor's work (the killed process was gone by then), `marks` each
    partition's end offset once it was gone (a record at or past it was written after the kill)."""

    partitions: int
    killed_at: float
    threshold_ms: int
    marks: Mapping[int, int]
    resumed_at: float | None = None  # the first record written after the kill arrived
    newer_at: dict[int, float] = field(default_factory=dict)  # partition -> first record created after the kill

    def observe(self, partition: int, offset: int, timestamp_ms: int, now: float) -> None:
        if self.resumed_at is None and offset >= self.marks.get(partition, 0):
            self.resumed_at = now
        if timestamp_ms > self.threshold_ms and partition not in self.newer_at:
            self.newer_at[partition] = now

    @property
    def complete(self) -> bool:
        """Every partition holds a record created after the kill."""
        return len(self.newer_at) == self.partitions

    def resumed_s(self) -> float | None:
        return None if self.resumed_at is None else round(self.resumed_at - self.killed_at, 2)

    def takeover_s(self) -> float | None:
        """Seconds from the kill until the last partition got a record created after it."""
        return round(max(self.newer_at.values()) - self.killed_at, 2) if self.complete else None


class RemoteLog:
    """Every record of the remote topic as read: (offset, id) per partition in read order, the newest CreateTime
    per partition, and how many distinct ids; a probe, while one is set, sees every record too. Pure: fed by
    RemoteWatch, or by a test."""

    def __init__(self, partitions: int) -> None:
        self.partitions = partitions
        self.offsets = {p: array("q") for p in range(partitions)}
        self.ids = {p: array("q") for p in range(partitions)}
        self.newest_ms = dict.fromkeys(range(partitions), -1)
        self.distinct = 0
        self.probe: Probe | None = None
        self._seen = bytearray()

    def add(self, partition: int, offset: int, record_id: int, timestamp_ms: int, now: float) -> None:
        self.offsets[partition].append(offset)
        self.ids[partition].append(record_id)
        self.newest_ms[partition] = max(self.newest_ms[partition], timestamp_ms)
        if record_id >= 0:
            if record_id >= len(self._seen):
                self._seen.extend(bytes(max(record_id + 1 - len(self._seen), len(self._seen))))
            if not self._seen[record_id]:
                self._seen[record_id] = 1
                self.distinct += 1
        if self.probe is not None:
            self.probe.observe(partition, offset, timestamp_ms, now)

    def all_newer_than(self, timestamp_ms: int) -> bool:
        """Every partition holds a record created after `timestamp_ms`."""
        return all(ts > timestamp_ms for ts in self.newest_ms.values())

    def missing(self, records: int) -> int:
        """Ids below `records` not read yet."""
        return records - sum(self._seen[:records])


class RemoteWatch(TopicReader):
    """A consumer of the remote topic from its beginning that feeds a RemoteLog; poll() it often (it is not a
    thread: the trial's loop polls it while it waits for anything)."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        self.topic = topic
        self.log = RemoteLog(partitions)
        self.last_record_at = time.monotonic()
        self._admin = ClusterAdmin("target", {"bootstrap.servers": bootstrap})
        self._consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-takeover-{time.time_ns()}",
                                   "enable.auto.commit": "false", "fetch.wait.max.ms": "50", "logger": QUIET})
        self._consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])

    def poll(self, timeout_s: float = 0.1) -> int:
        """Read what is there, waiting up to timeout_s for the first record; returns the records read."""
        msgs = self._consumer.consume(num_messages=10_000, timeout=timeout_s)
        now = time.time()
        for msg in msgs:
            if msg.error():
                raise KafkaException(msg.error())
            seq = next((v for k, v in msg.headers() or () if k == ID_HEADER), None)
            record_id = int.from_bytes(seq, "big") if seq is not None else -1
            self.log.add(msg.partition(), msg.offset(), record_id, msg.timestamp()[1], now)
        if msgs:
            self.last_record_at = time.monotonic()
        return len(msgs)

    def ends(self) -> dict[int, int]:
        """Each partition's end offset now."""
        marks = self._admin.watermarks(self.topic, self.log.partitions)
        return {p: high for p, (_, high) in marks.items()}

