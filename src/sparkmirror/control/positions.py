"""Where each source partition of a flow is read from: the flow's own positions, not a Spark checkpoint.

A flow owns its read positions (next upstream offset per partition, with the topic's id) so that it can
restart its query with another set of topics and still continue every partition exactly where it was,
and so that a topic deleted and re-created under the same name is recognised by its new id.
"""

from __future__ import annotations

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
    return StartPlan(offsets, tuple(warnings), tuple(notes))


def advance(positions: Mapping[str, TopicPosition],
            summaries: Sequence[PartitionSummary]) -> dict[str, TopicPosition]:
    """Positions after a written batch: each partition moves to one past the last offset it read."""
    out = dict(positions)
    for s in summaries:
        current = out.get(s.topic, TopicPosition(None))
        if s.next_upstream > current.next_offsets.get(s.partition, -1):
            out[s.topic] = TopicPosition(current.topic_id, {**current.next_offsets, s.partition: s.next_upstream})
    return out


def to_json(positions: Mapping[str, TopicPosition]) -> dict:
    return {t: {"topic_id": p.topic_id, "next_offsets": {str(k): v for k, v in sorted(p.next_offsets.items())}}
            for t, p in sorted(positions.items())}


def from_json(data: Mapping) -> dict[str, TopicPosition]:
    return {t: TopicPosition(p.get("topic_id"), {int(k): int(v) for k, v in p["next_offsets"].items()})
            for t, p in data.items()}
