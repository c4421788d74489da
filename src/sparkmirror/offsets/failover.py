"""Moving a consumer group from one cluster to another: which topic, which offset, what it costs. Pure.

A topic the group reads on the cluster it leaves maps to the destination in one of two ways:
- forward: the flow `from->to` replicates it (`orders` -> `A.orders`); its committed offset translates
  downstream with that flow's offset syncs (or, when `from` is down, comes from the latest checkpoint);
- reverse: it is itself a copy made by the flow `to->from` (`A.orders` read on B, going back to A's
  `orders`, the failback case); its offset translates upstream with that flow's syncs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from sparkmirror.offsets.checkpoints import CheckpointKey, GroupOffsets
from sparkmirror.offsets.codec import Checkpoint
from sparkmirror.offsets.translation import SyncIndex, Translation

FORWARD, REVERSE, CHECKPOINT = "offset syncs", "reverse offset syncs", "checkpoint"


@dataclass(frozen=True)
class FlowSyncs:
    """One flow's offset syncs and its topic naming (from its replication policy)."""

    source: str
    target: str
    remote_topic: Callable[[str], str]  # source topic -> its copy on the target
    upstream_topic: Callable[[str], str | None]  # a topic on the target -> the source topic it copies, if any
    index: SyncIndex
    replicates: Callable[[str], bool] = lambda topic: False  # the flow's topic filter, for topics without syncs


@dataclass(frozen=True)
class PartitionTranslation:
    """One partition the group committed on the cluster it leaves, and where it resumes."""

    topic: str
    partition: int
    upstream_offset: int  # the group's committed offset on the cluster it leaves
    remote_topic: str | None  # the topic it reads on the destination
    downstream_offset: int | None  # where it resumes there; None: cannot be translated (see note)
    status: str  # exact | at-least-once | checkpoint | untranslatable
    note: str = ""
    route: str = ""
    metadata: str = ""
    reread: int | None = 0  # at most this many records delivered again (None: unknown)
    lag: int | None = None  # records it will read on the destination right away
    unreplicated: int | None = None  # offsets on the cluster it leaves not replicated yet (lost if it dies)


def _row(topic: str, partition: int, offset: int, metadata: str, remote: str, route: str,
         t: Translation) -> PartitionTranslation:
    return PartitionTranslation(topic, partition, offset, remote, t.offset, t.status, t.reason, route, metadata,
                                t.reread)


def plan_move(committed: GroupOffsets, source: str, target: str, forward: FlowSyncs | None,
              reverse: FlowSyncs | None) -> list[PartitionTranslation]:
    """Translate each committed offset of a group from cluster `source` to cluster `target`."""
    rows = []
    for (topic, partition), (offset, metadata) in sorted(committed.items()):
        if forward is not None and (topic in forward.index.topics() or forward.replicates(topic)):
            remote = forward.remote_topic(topic)
            rows.append(_row(topic, partition, offset, metadata, remote, FORWARD,
                             forward.index.get(topic, partition).downstream(offset)))
            continue
        upstream = _upstream_of(topic, reverse)
        if upstream is not None:
            rows.append(_row(topic, partition, offset, metadata, upstream, REVERSE,
                             reverse.index.get(upstream, partition).upstream(offset)))  # type: ignore[union-attr]
            continue
        rows.append(PartitionTranslation(topic, partition, offset, None, None, "untranslatable",
                                         f"no offset syncs for '{topic}' between '{source}' and '{target}': it is "
                                         f"not replicated {source}->{target}, nor a copy made by {target}->{source}",
                                         metadata=metadata, reread=None))
    return rows


def _upstream_of(topic: str, reverse: FlowSyncs | None) -> str | None:
    """The topic on the destination that `topic` is a copy of, when the flow destination->here made it."""
    if reverse is None:
        return None
    upstream = reverse.upstream_topic(topic)
    return upstream if upstream is not None and upstream in reverse.index.topics() else None


def plan_from_checkpoints(checkpoints: Mapping[CheckpointKey, Checkpoint], group: str,
                          upstream_topic: Callable[[str], str | None], written_ms: Mapping[CheckpointKey, int],
                          now_ms: int) -> list[PartitionTranslation]:
    """The group's latest checkpoints, for when the cluster it leaves cannot be read."""
    rows = []
    for key, cp in sorted(checkpoints.items()):
        if cp.group != group:
            continue
        age = (now_ms - written_ms[key]) / 1000 if key in written_ms else None
        when = f"{age:.0f} s ago" if age is not None else "at an unknown time"
        rows.append(PartitionTranslation(
            upstream_topic(cp.topic) or cp.topic, cp.partition, cp.upstream_offset, cp.topic,
            cp.downstream_offset, CHECKPOINT,
            f"from the checkpoint written {when}: commits made after it are not known", CHECKPOINT, cp.metadata,
            None))
    return rows


def with_lag(rows: list[PartitionTranslation], ends: Mapping[tuple[str, int], int],
             unreplicated: Mapping[tuple[str, int], int] | None = None) -> list[PartitionTranslation]:
    """Add the destination lag (its end offset minus the resume offset) and the unreplicated counts."""
    out = []
    for row in rows:
        end = ends.get((row.remote_topic, row.partition)) if row.remote_topic is not None else None
        lag = end - row.downstream_offset if end is not None and row.downstream_offset is not None else None
        out.append(replace(row, lag=lag, unreplicated=(unreplicated or {}).get((row.topic, row.partition))))
    return out


def unreplicated_offsets(flow: FlowSyncs, ends: Mapping[tuple[str, int], int]) -> dict[tuple[str, int], int]:
    """Per source partition: offsets past what the flow has replicated (its last sync), up to the end."""
    out = {}
    for (topic, partition), end in ends.items():
        syncs = flow.index.get(topic, partition)
        if not syncs.points:
            out[(topic, partition)] = end
            continue
        last = syncs.points[-1]
        read_to = last.link.next_upstream if last.link is not None and last.link.next_upstream else last.upstream + 1
        out[(topic, partition)] = max(end - read_to, 0)
    return out
