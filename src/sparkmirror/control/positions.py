"""Where each source partition of a flow is read from: the flow's own positions, not a Spark checkpoint.

A flow owns its read positions (next upstream offset per partition, with the topic's id) so that it can
restart its query with another set of topics and still continue every partition exactly where it was,
and so that a topic deleted and re-created under the same name is recognised by its new id.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sparkmirror.model import PartitionSummary

EARLIEST, LATEST = "earliest", "latest"


@dataclass(frozen=True)
class TopicPosition:
    """Next upstream offset to read for each partition of one source topic, and the topic's id."""

    topic_id: str | None
    next_offsets: Mapping[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class StartPlan:
    """Concrete start offsets for every assigned partition, and what the operator should be told."""

    offsets: Mapping[str, Mapping[int, int]]
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    # (topic, partition) -> (first, last) offsets removed by retention on the source before they were replicated
    removed: Mapping[tuple[str, int], tuple[int, int]] = field(default_factory=dict)

    def removed_records(self) -> int:
        return sum(last - first + 1 for first, last in self.removed.values())

    def positions(self, topic_ids: Mapping[str, str | None]) -> dict[str, TopicPosition]:
        return {t: TopicPosition(topic_ids.get(t), dict(parts)) for t, parts in self.offsets.items()}


def plan_start(partitions: Mapping[str, int], topic_ids: Mapping[str, str | None],
               watermarks: Mapping[str, Mapping[int, tuple[int, int]]],
               stored: Mapping[str, TopicPosition] | None, reset: str, flow: str) -> StartPlan:
    """Start offsets for the source topics `partitions` (topic -> partition count).

    - a partition with a stored position continues there; below the log start it moves up to it, and the
      records removed by retention before they were replicated are named in a warning;
    - a topic whose id differs from the stored one was deleted and re-created: it starts from its
      beginning, with a warning;
    - on the flow's very first start (`stored` is None), topics start where `auto.offset.reset` says;
    - a topic or partition that joins a running flow starts at its beginning, so the records written
      before its remote topic existed are replicated too.
    """
    offsets: dict[str, dict[int, int]] = {}
    warnings: list[str] = []
    notes: list[str] = []
    removed: dict[tuple[str, int], tuple[int, int]] = {}
    for topic in sorted(partitions):
        marks = watermarks[topic]
        previous = (stored or {}).get(topic)
        new_id = topic_ids.get(topic)
        if previous is not None and previous.topic_id and new_id and previous.topic_id != new_id:
            warnings.append(f"flow {flow}: source topic '{topic}' was deleted and re-created (topic id "
                            f"{previous.topic_id} -> {new_id}); replicating it from its start")
            previous = None
            first_sight = False
        else:
            first_sight = previous is None
        out: dict[int, int] = {}
        for p in range(partitions[topic]):
            low, high = marks[p]
            position = None if previous is None else previous.next_offsets.get(p)
            if position is None:
                out[p] = high if (stored is None and reset == LATEST) else low
            elif position < low:
                warnings.append(f"flow {flow}: {low - position} records of {topic}-{p} (offsets {position} to "
                                f"{low - 1}) were removed by retention on the source before they were "
                                f"replicated; continuing at {low}")
                removed[(topic, p)] = (position, low - 1)
                out[p] = low
            elif position > high:
                warnings.append(f"flow {flow}: {topic}-{p} ends at {high} but was read up to {position}; the "
                                f"source lost records (unclean leader election?); continuing at {high}")
                out[p] = high
            else:
                out[p] = position
        if first_sight and stored is not None:
            notes.append(f"flow {flow}: new source topic '{topic}' ({partitions[topic]} partitions), "
                         f"replicating from its start")
        offsets[topic] = out
    return StartPlan(offsets, tuple(warnings), tuple(notes), removed)


def with_committed(stored: Mapping[str, TopicPosition] | None, committed: Mapping[tuple[str, int], tuple[int, str]],
                   remote_topics: Mapping[str, str], topic_ids: Mapping[str, str | None],
                   flow: str, group: str = "") -> tuple[dict[str, TopicPosition] | None, tuple[str, ...]]:
    """The positions committed on the target (exactly once: in the same transactions as the records) win over
    the state dir's, a cache that a crash can leave behind them, another host may not have, or that is gone.

    `committed` is keyed by remote topic (as the writer commits them) with the source topic's id at commit
    time; a position committed for an earlier topic of the same name (another id) does not count. Returns the
    positions to plan the start from (None, as `stored`, when neither has any) and a note when they moved.
    """
    if not committed:
        return (None if stored is None else dict(stored)), ()
    source_of = {remote: source for source, remote in remote_topics.items()}
    out = dict(stored or {})
    moved = 0
    for (remote, partition), (offset, committed_id) in sorted(committed.items()):
        source = source_of.get(remote)
        if source is None:
            continue
        current_id = topic_ids.get(source)
        if committed_id and current_id and committed_id != current_id:
            continue  # committed for a deleted topic of the same name
        previous = out.get(source)
        if previous is not None and previous.topic_id and current_id and previous.topic_id != current_id:
            previous = None  # the state dir knew the deleted topic; the target knows the new one
        parts = dict(previous.next_offsets) if previous is not None else {}
        if parts.get(partition) != offset:
            moved += 1
        parts[partition] = offset
        out[source] = TopicPosition((previous.topic_id if previous is not None else None) or committed_id or None,
                                    parts)
    where = f" (group {group})" if group else ""
    notes = (f"flow {flow}: {moved} partition(s) continue from the positions committed on the target{where}, not "
             f"from the state dir's",) if moved else ()
    return out, notes


def advance(positions: Mapping[str, TopicPosition],
            summaries: Sequence[PartitionSummary]) -> dict[str, TopicPosition]:
    """Positions after a written batch: each partition moves to one past the last offset it read."""
    out = dict(positions)
    for s in summaries:
        current = out.get(s.topic, TopicPosition(None))
        if s.next_upstream > current.next_offsets.get(s.partition, -1):
            out[s.topic] = TopicPosition(current.topic_id, {**current.next_offsets, s.partition: s.next_upstream})
    return out


def written_again(positions: Mapping[str, TopicPosition], summaries: Sequence[PartitionSummary]) -> int:
    """Records of `summaries` at source offsets the positions had already passed: written to the target a
    second time (at least once: a task retried after its executor was lost, or a query stopped before its
    reports arrived). A report's first sync is its first record, so this counts by offset from there, at most
    the report's records (a compacted gap counts as records)."""
    again = 0
    for s in summaries:
        position = positions.get(s.topic, TopicPosition(None)).next_offsets.get(s.partition)
        if position is None or not s.sync_upstream or s.sync_upstream[0] >= position:
            continue
        again += min(s.records, min(position, s.next_upstream) - s.sync_upstream[0])
    return again


def to_json(positions: Mapping[str, TopicPosition]) -> dict:
    return {t: {"topic_id": p.topic_id, "next_offsets": {str(k): v for k, v in sorted(p.next_offsets.items())}}
            for t, p in sorted(positions.items())}


class PositionsFormatError(ValueError):
    """A positions document that is valid JSON but not the shape `to_json` writes; says where and what."""


MAX_PARTITION = 2**31 - 1  # Kafka's partition numbers are int32, its offsets int64
MAX_OFFSET = 2**63 - 1
_PARTITION = re.compile(r"0|[1-9][0-9]*")  # what to_json writes: no sign, no padding, no "1_0"
_ENTRY = 'an object {"topic_id": a string or null, "next_offsets": {partition: offset}}'


def from_json(data: object) -> dict[str, TopicPosition]:
    """Positions from what `to_json` wrote. Strict, so that a hand-edited file stops the flow with a message
    instead of an AttributeError later or, worse, a read from a wrong offset; a missing `topic_id` is null."""
    if not isinstance(data, Mapping):
        raise PositionsFormatError(f"expected an object of topic -> position, got {_kind(data)}")
    return {_topic_name(topic): _topic_position(topic, entry) for topic, entry in data.items()}


def _topic_name(topic: object) -> str:
    if not isinstance(topic, str) or not topic:
        raise PositionsFormatError(f"topic names must be non-empty strings, got {_kind(topic)}")
    return topic


def _topic_position(topic: str, entry: object) -> TopicPosition:
    where = f"topic {topic!r}"
    if not isinstance(entry, Mapping):
        raise PositionsFormatError(f"{where}: expected {_ENTRY}, got {_kind(entry)}")
    unknown = sorted(str(k) for k in entry if k not in ("topic_id", "next_offsets"))
    if unknown:
        raise PositionsFormatError(f"{where}: unexpected key {', '.join(map(repr, unknown))}; expected {_ENTRY}")
    if "next_offsets" not in entry:
        raise PositionsFormatError(f"{where}: 'next_offsets' is missing; expected {_ENTRY}")
    topic_id, offsets = entry.get("topic_id"), entry["next_offsets"]
    if topic_id is not None and not isinstance(topic_id, str):
        raise PositionsFormatError(f"{where}: 'topic_id' must be a string or null, got {_kind(topic_id)}")
    if not isinstance(offsets, Mapping):
        raise PositionsFormatError(f"{where}: 'next_offsets' must be an object of partition -> offset, "
                                   f"got {_kind(offsets)}")
    next_offsets: dict[int, int] = {}
    for key, value in offsets.items():
        if not isinstance(key, str) or not _PARTITION.fullmatch(key) or int(key) > MAX_PARTITION:
            raise PositionsFormatError(f"{where}: partition {_kind(key)} is not a partition number "
                                       f"(0 to {MAX_PARTITION})")
        if type(value) is not int or not 0 <= value <= MAX_OFFSET:  # type(): True is an int too
            raise PositionsFormatError(f"{where}, partition {key}: the offset must be an integer from 0 to "
                                       f"{MAX_OFFSET}, got {_kind(value)}")
        next_offsets[int(key)] = value
    return TopicPosition(topic_id, next_offsets)


def _kind(value: object) -> str:
    """A value as a message names it, in JSON's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:40] + "...")
    return repr(value)
