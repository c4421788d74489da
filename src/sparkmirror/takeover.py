"""Take over a flow from a stopped MM2 without copying again (`sparkmirror takeover`), and hand it back
(`sparkmirror handback`).

MM2's source tasks keep how far they copied in a Kafka Connect offsets topic. The plan reads it, MM2's newest
offset syncs and both clusters' partition ends, and says per partition where sparkmirror continues and how many
records it may copy a second time (offsets/takeover.py). Applying it commits those starts as the flow's
positions on the target, where `sparkmirror run` starts from (positions committed on the target win over the
state dir's). It refuses while something still writes the remote topics: MM2 running (its heartbeats reach
the remote heartbeats topic every second), or another replicator. Handing back writes the flow's positions
into MM2's Connect offsets, where MM2's source tasks read them when they start.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Generic, TypeVar

from sparkmirror.config.mm2 import MirrorMakerConfig, load_config
from sparkmirror.config.model import FlowConfig
from sparkmirror.control.topics import TopicPlan, plan_topics
from sparkmirror.errors import AdminOperationError, SparkmirrorError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.groups import ConsumerGroups
from sparkmirror.kafka.internal_log import read_internal_topic
from sparkmirror.kafka.produce import AcknowledgedProducer, Message
from sparkmirror.kafka.records import read_range, read_topic
from sparkmirror.offsets.connect_offsets import (
    SOURCE_CONNECTOR,
    decode_source_offset,
    dedicated_offsets_topic,
    dedicated_workers_group,
    encode_source_offset,
    hand_back_entries,
    next_offsets,
)
from sparkmirror.offsets.flow_report import written_syncs
from sparkmirror.offsets.syncs import OffsetSync
from sparkmirror.offsets.takeover import PartitionTakeover, match_tail, plan_partition
from sparkmirror.pipeline.class_host import ensure_class_host

logger = logging.getLogger(__name__)

IDLE_GROUP_STATES = ("EMPTY", "DEAD")  # a group without members, or none at all
WATCH_S = 5.0  # how long the remote ends must stand still: MM2's heartbeats move them every second
TAIL_LIMIT = 100_000  # records of a remote tail compared with the source's, at most, per partition
HAND_BACK_TIMEOUT_S = 30.0


class TakeoverRefused(SparkmirrorError):  # reads as what happened
    """Taking over now could lose or double records: something writes the remote topics, or the flow is not
    one this can take over."""


@dataclass(frozen=True)
class HandBackPartition:
    topic: str
    partition: int
    position: int | None  # sparkmirror's next offset (None: it has none for this partition)
    committed: int | None  # MM2's next offset before the hand-back

    def to_json(self) -> dict:
        return {"topic": self.topic, "partition": self.partition, "sparkmirror_position": self.position,
                "mm2_committed": self.committed}


P = TypeVar("P", PartitionTakeover, HandBackPartition)


@dataclass(frozen=True)
class OffsetsPlan(Generic[P]):
    """A flow's partitions between MM2's Connect offsets and sparkmirror's positions, one way or the other."""

    flow: str
    offsets_topic: str
    connector: str
    partitions: list[P]
    notes: list[str] = field(default_factory=list)
    applied: bool = False

    def to_json(self) -> dict:
        return {"flow": self.flow, "offsets_topic": self.offsets_topic, "connector": self.connector,
                "applied": self.applied, "notes": self.notes, "partitions": [p.to_json() for p in self.partitions]}


class TakeoverPlan(OffsetsPlan[PartitionTakeover]):
    @property
    def duplicates(self) -> int:
        return sum(p.duplicates for p in self.partitions)

    def to_json(self) -> dict:
        return {**super().to_json(), "duplicates_at_most": self.duplicates}


HandBackPlan = OffsetsPlan[HandBackPartition]


@dataclass(frozen=True)
class _Still:
    """A flow's topics on both clusters once its remote topics stood still for the watch."""

    flow: FlowConfig
    offsets_topic: str
    offsets_partitions: int
    topics: TopicPlan
    remote_marks: dict[str, dict[int, tuple[int, int]]]
    source_admin: ClusterAdmin
    target_admin: ClusterAdmin
    notes: list[str]


def _still(cfg: MirrorMakerConfig, source: str, target: str, offsets_topic: str | None, force: bool,
           watch_s: float, writer: str) -> _Still:
    """The flow, its topics and the remote partitions' ends, refused while those ends move (`writer` says who
    must stop) unless `force`."""
    flow = cfg.flow(source, target)
    offsets_topic = offsets_topic or flow.mm2_offsets_topic or dedicated_offsets_topic(source)
    source_admin = ClusterAdmin(source, flow.source_admin.rdkafka)
    target_admin = ClusterAdmin(target, flow.target_admin.rdkafka)
    on_target = target_admin.topic_partitions()
    if offsets_topic not in on_target:
        raise TakeoverRefused(f"no topic '{offsets_topic}' on cluster '{target}': MM2 keeps its positions there "
                              f"in dedicated mode; on a Connect cluster pass its offset.storage.topic "
                              f"(--offsets-topic)")
    workers = flow.mm2_workers_group or dedicated_workers_group(source)
    state, members = ConsumerGroups(target, flow.target_admin.rdkafka).workers_state(workers)
    if state not in IDLE_GROUP_STATES and not force:  # idle, it writes nothing the watch below could see
        raise TakeoverRefused(f"MM2 runs {source}->{target}: its workers' group '{workers}' on '{target}' has "
                              f"{members} member(s), {state} (a killed worker stays in it for its session timeout, "
                              f"10 s by default). Stop MM2 first; --force goes on anyway")
    topics = plan_topics(source_admin.topic_partitions(), on_target, flow.topic_filter, flow.policy, target, source,
                         1, heartbeats_replication_enabled=flow.heartbeats_replication_enabled)
    remote = {r: topics.target_partitions[r] for r in topics.remote_topics.values() if r in topics.target_partitions}
    before = target_admin.watermarks_of(remote)
    time.sleep(watch_s)
    remote_marks = target_admin.watermarks_of(remote)
    moving = sorted(f"{t}-{p} ({before[t][p][1]} -> {high})" for t, parts in remote_marks.items()
                    for p, (_low, high) in parts.items() if high != before[t][p][1])
    if moving and not force:
        raise TakeoverRefused(f"the remote topics of {flow.name} on '{target}' are being written: "
                              f"{', '.join(moving[:5])}{', ...' if len(moving) > 5 else ''} in {watch_s:.0f} s. "
                              f"Stop {writer} first; --force goes on anyway")
    notes = [f"remote topics written during the {watch_s:.0f} s watch: {', '.join(moving)}"] if moving else []
    if state not in IDLE_GROUP_STATES:  # only reached with force
        notes.insert(0, f"MM2's workers' group '{workers}' on '{target}' had {members} member(s), {state}: "
                        f"taken over anyway (--force)")
    return _Still(flow, offsets_topic, on_target[offsets_topic], topics, remote_marks, source_admin, target_admin,
                  notes)


def _load(config: MirrorMakerConfig | str | Path) -> MirrorMakerConfig:
    ensure_class_host()  # a file's own replication policy and filters
    return config if isinstance(config, MirrorMakerConfig) else load_config(config)


def take_over(config: MirrorMakerConfig | str | Path, source: str, target: str, apply: bool = False,
              force: bool = False, connector: str = SOURCE_CONNECTOR, offsets_topic: str | None = None,
              watch_s: float = WATCH_S) -> TakeoverPlan:
    """Plan (and with `apply`, commit) where flow source->target continues MM2's copy. `offsets_topic` is MM2's
    Connect offsets topic on the target (default: dedicated mode's, the file's `<target>.offset.storage.topic` or
    `mm2-offsets.<source>.internal`; on a Connect cluster, its `offset.storage.topic`), `connector` the name of
    MM2's MirrorSourceConnector there. Refused while dedicated MM2's workers' group (`<target>.group.id`, else
    `<source>-mm2`) has members, or while the remote topics' ends move.

    Exactly once on either side changes nothing here: MM2's exactly-once tasks commit their offsets in the
    records' transactions (read_committed reads only those), and an exactly-once flow of sparkmirror starts from
    the same positions group, read once it has fenced its transactional ids (none is open before its first run)."""
    cfg = _load(config)
    still = _still(cfg, source, target, offsets_topic, force, watch_s, "MM2 (or whatever writes them)")
    flow, topics, notes = still.flow, still.topics, list(still.notes)
    committed = _committed(still, connector)
    syncs = _newest_syncs(flow)
    source_marks = still.source_admin.watermarks_of(topics.source_partitions)
    if not committed:
        notes.append(f"'{still.offsets_topic}' holds no position of connector {connector} for cluster '{source}'")
    partitions = []
    for topic, remote_topic in sorted(topics.remote_topics.items()):
        for p in range(topics.source_partitions[topic]):
            marks = still.remote_marks.get(remote_topic, {}).get(p, (0, 0))
            plan = plan_partition(topic, p, remote_topic, committed.get((topic, p)), syncs.get((topic, p)),
                                  source_marks[topic][p], marks, flow.reset_policy == "latest")
            partitions.append(_narrowed(flow, plan))
    result = TakeoverPlan(flow.name, still.offsets_topic, connector, partitions, notes)
    if not apply:
        return result
    ids = still.source_admin.topic_ids(sorted(topics.remote_topics))
    positions = {(p.remote_topic, p.partition): (p.start, ids.get(p.topic, "")) for p in partitions}
    ConsumerGroups(target, flow.target_admin.rdkafka).commit(flow.positions_group, positions, keep=False)
    logger.info("flow %s: %d partition(s) take over from MM2 in group %s; at most %d record(s) copied again",
                flow.name, len(positions), flow.positions_group, result.duplicates)
    return replace(result, applied=True)


def hand_back(config: MirrorMakerConfig | str | Path, source: str, target: str, apply: bool = False,
              force: bool = False, connector: str = SOURCE_CONNECTOR, offsets_topic: str | None = None,
              watch_s: float = WATCH_S) -> HandBackPlan:
    """The way back: write the flow's positions (committed on the target) into MM2's Connect offsets, so that an
    MM2 started afterwards continues where sparkmirror stopped. Refused while the remote topics are written
    (stop sparkmirror first)."""
    cfg = _load(config)
    still = _still(cfg, source, target, offsets_topic, force, watch_s, "sparkmirror (or whatever writes them)")
    flow, topics, notes = still.flow, still.topics, list(still.notes)
    source_of = {remote: topic for topic, remote in topics.remote_topics.items()}
    asked = [(remote, p) for topic, remote in topics.remote_topics.items()
             for p in range(topics.source_partitions[topic])]
    groups = ConsumerGroups(target, flow.target_admin.rdkafka)
    committed_here = groups.committed([flow.positions_group], asked).get(flow.positions_group, {})
    ids = still.source_admin.topic_ids(sorted(topics.remote_topics))
    positions: dict[tuple[str, int], int] = {}
    for (remote, p), (offset, topic_id) in sorted(committed_here.items()):
        topic = source_of[remote]
        if topic_id and ids.get(topic) and topic_id != ids[topic]:
            notes.append(f"{topic}-{p}: the position was committed for an earlier topic of that name: left out")
            continue
        positions[(topic, p)] = offset
    mm2 = _committed(still, connector)
    partitions = [HandBackPartition(topic, p, positions.get((topic, p)), mm2.get((topic, p)))
                  for topic in sorted(topics.remote_topics) for p in range(topics.source_partitions[topic])]
    if not positions:
        notes.append(f"group {flow.positions_group} on '{target}' holds no position of flow {flow.name}: "
                     f"nothing to hand back")
    result = HandBackPlan(flow.name, still.offsets_topic, connector, partitions, notes)
    if not apply or not positions:
        return result
    entries = [encode_source_offset(e) for e in hand_back_entries(positions, connector, source)]
    # Connect finds an entry by its key in the partition Java's default partitioner picks: murmur2
    producer = AcknowledgedProducer({**flow.target_producer.rdkafka, "partitioner": "murmur2_random"})
    try:
        producer.write(still.offsets_topic, [Message(-1, key, value) for key, value in entries], HAND_BACK_TIMEOUT_S)
    finally:
        producer.close(HAND_BACK_TIMEOUT_S)
    logger.info("flow %s: %d position(s) handed back to MM2 in '%s'", flow.name, len(entries), still.offsets_topic)
    return replace(result, applied=True)


def _committed(still: _Still, connector: str) -> dict[tuple[str, int], int]:
    """MM2's committed next offset per source partition, read as Connect reads its offsets topic."""
    topic = still.offsets_topic
    try:
        records = read_topic(still.flow.target_consumer.rdkafka, topic,
                             still.target_admin.watermarks(topic, still.offsets_partitions))
    except TimeoutError as exc:  # a store read in part would plan from positions MM2 left behind long ago
        raise AdminOperationError(still.flow.target, f"read MM2's offsets in '{topic}'", str(exc),
                                  "Is the cluster reachable, and may this principal read the topic?") from None
    entries = [e for r in records if (e := decode_source_offset(r.key, r.value)) is not None]
    return next_offsets(entries, connector, still.flow.source)


def _newest_syncs(flow: FlowConfig) -> dict[tuple[str, int], OffsetSync]:
    """The newest offset sync of each source partition in the flow's offset-syncs topic."""
    found, _ = written_syncs(read_internal_topic(flow.offset_syncs_cluster, flow.offset_syncs_consumer.rdkafka,
                                                 flow.offset_syncs_topic))
    return {(w.sync.topic, w.sync.partition): w.sync for w in found}


def _narrowed(flow: FlowConfig, plan: PartitionTakeover) -> PartitionTakeover:
    """The plan narrowed by the remote records after MM2's newest sync, compared with the source's next ones."""
    if plan.tail is None or plan.sync is None or plan.duplicates == 0 or plan.remote_end - plan.tail > TAIL_LIMIT:
        return plan
    try:
        remote = read_range(flow.target_consumer.rdkafka, plan.remote_topic, plan.partition, plan.tail,
                            plan.remote_end, whole=True)
        source = read_range(flow.source_consumer.rdkafka, plan.topic, plan.partition, plan.sync.upstream_offset + 1,
                            plan.source_end, max_records=len(remote), whole=True)
    except TimeoutError as exc:  # compared in part, the tail could hide copies: the plan's bound stands
        logger.warning("flow %s: the remote tail was not compared: %s", flow.name, exc)
        return plan
    return match_tail(plan, source, remote)
