"""MirrorMaker 2's committed source offsets, read from its Connect offsets topic on the target.

With `exactly.once.source.support = enabled`, each MM2 source task commits its records and its source offsets
in one transaction, so the offsets a read_committed consumer sees are exactly the records the target's
committed readers see. The remote topics' end offsets count transaction markers too, so an exactly-once MM2
copy is counted here instead (the sparkmirror-exactly-once row's equivalent is its positions group).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

SOURCE_CONNECTOR = "MirrorSourceConnector"
POLL_TIMEOUT_S = 0.05


def offsets_topic(source_alias: str) -> str:
    """The offsets topic MM2's dedicated mode gives the herder of `source_alias -> target` by default
    (MirrorMakerConfig.workerConfig: `mm2-offsets.<source>.internal`, on the target)."""
    return f"mm2-offsets.{source_alias}.internal"


@dataclass(frozen=True)
class SourcePartition:
    """A source partition as MirrorSourceTask names it in its offsets (MirrorUtils.wrapPartition)."""

    cluster: str
    topic: str
    partition: int


def parse_offset_record(key: bytes | None, value: bytes | None) -> tuple[SourcePartition, int | None] | None:
    """One record of a Connect offsets topic, as JSON (`["<connector>", {"cluster", "topic", "partition"}]` ->
    `{"offset": <last copied offset>}`): the source partition and the next offset to copy, None for a
    tombstone. Records of other connectors (checkpoints, heartbeats) give None."""
    if key is None:
        return None
    connector, partition = json.loads(key)
    if connector != SOURCE_CONNECTOR:
        return None
    where = SourcePartition(partition["cluster"], partition["topic"], int(partition["partition"]))
    return where, None if value is None else int(json.loads(value)["offset"]) + 1


class CommittedSourceOffsets:
    """Follows one MM2 herder's offsets topic with a read_committed consumer; calling it reads what is new and
    returns the records copied into `remote_topics` (remote names, `<source_alias>.<topic>`): the sum of the
    next offsets committed for their source partitions (the backlogs start at offset 0 and have no gaps)."""

    def __init__(self, target: str, source_alias: str, remote_topics: Mapping[str, int]) -> None:
        self.source_alias = source_alias
        self.topic = offsets_topic(source_alias)
        prefix = f"{source_alias}."
        self._remote = {t[len(prefix):]: t for t in remote_topics if t.startswith(prefix)}
        self._next: dict[SourcePartition, int] = {}
        self._consumer = Consumer({"bootstrap.servers": target, "group.id": f"bench-mm2-offsets-{time.time_ns()}",
                                   "isolation.level": "read_committed", "enable.auto.commit": "false"})
        self._assigned = False

    def __call__(self) -> int:
        if not self._assigned and not self._assign():
            return 0
        while batch := self._consumer.consume(num_messages=1000, timeout=POLL_TIMEOUT_S):
            for msg in batch:
                if msg.error():
                    raise RuntimeError(f"reading {self.topic}: {msg.error()}")
                if (parsed := parse_offset_record(msg.key(), msg.value())) is not None:
                    where, next_offset = parsed
                    if next_offset is None:
                        self._next.pop(where, None)
                    else:
                        self._next[where] = next_offset
        return sum(self.positions().values())

    def positions(self) -> dict[tuple[str, int], int]:
        """Next offset to copy per (remote topic, partition) of `remote_topics`, as read so far."""
        return {(self._remote[p.topic], p.partition): n for p, n in self._next.items()
                if p.cluster == self.source_alias and p.topic in self._remote}

    def _assign(self) -> bool:
        topic = self._consumer.list_topics(timeout=10).topics.get(self.topic)
        if topic is None or not topic.partitions:
            return False  # MM2 creates it at start-up
        self._consumer.assign([TopicPartition(self.topic, p, OFFSET_BEGINNING) for p in topic.partitions])
        self._assigned = True
        return True

    def close(self) -> None:
        self._consumer.close()


def untransactional_partitions(positions: Mapping[tuple[str, int], int],
                               end_offsets: Mapping[tuple[str, int], int]) -> list[tuple[str, int]]:
    """Partitions whose end offset is no higher than the records committed to them: no transaction marker,
    so they were not written in transactions (an exactly-once row that fell back to at least once)."""
    return sorted(tp for tp, n in positions.items() if n > 0 and end_offsets.get(tp, 0) <= n)
