"""The failover drill's verdict for one partition: what a group would re-read or miss if it failed over now. Pure.

The group's next record on the source is the one at its committed offset; after a failover it would read first
the target's record at the translated offset. Found among the source's records around the committed offset (by
key, value, headers and timestamp), that record says it all: found before the committed offset, the records
between are read again; found after, the records between were never on the target where the group resumes, and
it would miss them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from sparkmirror.model import KafkaRecord


@dataclass(frozen=True, slots=True)
class DrillPartition:
    topic: str
    partition: int
    committed: int  # the group's next offset on the source
    remote_topic: str | None
    translated: int | None  # where it would resume on the target (None: no translation)
    reread: int | None  # None: unknown (see note)
    miss: int | None
    not_replicated: int = 0  # source records after the committed offset not on the target yet (the flow's lag)
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.miss == 0


def record_digest(record: KafkaRecord) -> bytes:
    """Key, value, headers and timestamp: what a replicated record keeps."""
    h = hashlib.blake2b(digest_size=16)
    for part in (record.key, record.value):
        h.update(b"\x00" if part is None else b"\x01" + len(part).to_bytes(8, "big") + part)
    for key, value in record.headers:
        h.update(key.encode() + b"\x00" + (b"\x00" if value is None else b"\x01" + value))
    h.update(record.timestamp.to_bytes(8, "big", signed=True))
    return h.digest()


def judge_partition(topic: str, partition: int, committed: int, remote_topic: str | None, translated: int | None,
                    around: Sequence[KafkaRecord], first_on_target: KafkaRecord | None, source_end: int,
                    note: str = "") -> DrillPartition:
    """`around`: the source's records near `committed`, in offset order; `first_on_target`: the target's first
    record at or after `translated` (None: the group would be at the end of the copy)."""
    if translated is None:
        return DrillPartition(topic, partition, committed, remote_topic, None, None, None,
                              note=note or "no translation: the group would start at auto.offset.reset")
    if first_on_target is None:  # at the end of the copy: the records from `committed` on are not there (yet)
        pending = sum(1 for r in around if r.offset >= committed) if around else max(0, source_end - committed)
        return DrillPartition(topic, partition, committed, remote_topic, translated, 0, 0, pending, note)
    digest = record_digest(first_on_target)
    matches = [r.offset for r in around if record_digest(r) == digest]
    if not matches:
        return DrillPartition(topic, partition, committed, remote_topic, translated, None, None, note=(
            f"the target's record at {first_on_target.offset} is none of the source's {len(around)} records around "
            f"offset {committed}"))
    found = min(matches, key=lambda o: (abs(o - committed), o))
    reread = sum(1 for r in around if found <= r.offset < committed)
    miss = sum(1 for r in around if committed <= r.offset < found)
    return DrillPartition(topic, partition, committed, remote_topic, translated, reread, miss, note=note)
