"""MM2's source positions in a Kafka Connect offsets topic: how far each MirrorSourceTask copied.

MM2 keeps them as Connect source offsets (dedicated mode: `mm2-offsets.<source>.internal` on the target; on a
Connect cluster, that cluster's `offset.storage.topic`). Key: the compact JSON array
`["<connector>",{"cluster":"<source alias>","partition":<n>,"topic":"<topic>"}]`; value: `{"offset":<last
copied offset>}`, or null (a tombstone). The task seeks to offset + 1 when it starts. Connect finds an entry
by its key's bytes, so what is written here must be byte for byte what Java's JSON converter writes (that
key order, no spaces).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

SOURCE_CONNECTOR = "MirrorSourceConnector"  # the connector's name in dedicated mode (its class's simple name)


def dedicated_offsets_topic(source_alias: str) -> str:
    """The offsets topic of dedicated MM2's herder `source->target`, on the target (MirrorMakerConfig's
    `offset.storage.topic` default)."""
    return f"mm2-offsets.{source_alias}.internal"


def dedicated_workers_group(source_alias: str) -> str:
    """The Connect group of dedicated MM2's workers for herder `source->target`, on the target (MirrorMakerConfig's
    `group.id`): it has members while MM2 runs, copying or not."""
    return f"{source_alias}-mm2"


@dataclass(frozen=True)
class SourceOffset:
    """One entry: `connector` copied `topic`-`partition` of cluster `cluster` up to `last_copied` (None: a
    tombstone, the entry was removed)."""

    connector: str
    cluster: str
    topic: str
    partition: int
    last_copied: int | None

    @property
    def next_offset(self) -> int | None:
        return None if self.last_copied is None else self.last_copied + 1


def encode_source_offset(entry: SourceOffset) -> tuple[bytes, bytes | None]:
    """(key, value) as a Java MirrorSourceTask's offset commit writes them."""
    partition = {"cluster": entry.cluster, "partition": entry.partition, "topic": entry.topic}
    key = json.dumps([entry.connector, partition], separators=(",", ":"), ensure_ascii=False).encode()
    value = None if entry.last_copied is None else json.dumps({"offset": entry.last_copied},
                                                             separators=(",", ":")).encode()
    return key, value


def decode_source_offset(key: bytes | None, value: bytes | None) -> SourceOffset | None:
    """An offsets-topic record as a MirrorSourceConnector entry; None for anything else (the checkpoint and
    heartbeat connectors' entries, other connectors', records that are not Connect offsets)."""
    try:
        name, partition = json.loads(key or b"")
        offset = None if value is None else json.loads(value)["offset"]
        entry = SourceOffset(name, partition["cluster"], partition["topic"], partition["partition"], offset)
    except (ValueError, TypeError, KeyError):
        return None
    if not (isinstance(entry.connector, str) and isinstance(entry.cluster, str) and isinstance(entry.topic, str)
            and _is_int(entry.partition) and (entry.last_copied is None or _is_int(entry.last_copied))):
        return None
    return entry


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def next_offsets(entries: Iterable[SourceOffset], connector: str, cluster: str) -> dict[tuple[str, int], int]:
    """(topic, partition) -> the next offset `connector` would copy from `cluster`, after `entries` in the
    order written (the latest entry of a partition wins; a tombstone removes it)."""
    out: dict[tuple[str, int], int] = {}
    for e in entries:
        if e.connector != connector or e.cluster != cluster:
            continue
        if e.next_offset is None:
            out.pop((e.topic, e.partition), None)
        else:
            out[(e.topic, e.partition)] = e.next_offset
    return out


def hand_back_entries(positions: Mapping[tuple[str, int], int], connector: str,
                      cluster: str) -> list[SourceOffset]:
    """Entries that make MM2 continue at `positions` ((topic, partition) -> next offset to copy); a partition
    at 0 has nothing copied, which Connect's offsets cannot say: it gets a tombstone (MM2 then starts where
    its `auto.offset.reset` says, `earliest` by default)."""
    return [SourceOffset(connector, cluster, topic, partition, None if offset <= 0 else offset - 1)
            for (topic, partition), offset in sorted(positions.items())]
