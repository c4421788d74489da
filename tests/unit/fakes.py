"""In-memory stand-ins for the control plane's ports (control/ports.py) and the record path's engine
(runtime/engine.py), so the supervisor, the flow runner, the checkpointer and each control job are unit
tested without a broker or a JVM. They keep only what those callers observe: topics with partitions,
configs and ids, partition-0 logs of internal topics, consumer groups, and queries started on a plan.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.properties import parse_properties
from sparkmirror.errors import AdminOperationError, ClusterUnreachableError
from sparkmirror.model import Member, TopicAcl, TopicConfigEntry

UNANSWERED_LIMIT_S = 30.0  # how long a call to a cluster that does not answer waits at most (a test that forgot)


class Clock:
    """A clock that moves only when a test sets `now`."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def load(text: str) -> MirrorMakerConfig:
    return MirrorMakerConfig.from_properties(parse_properties(text, "mm2.properties"), {})


@dataclass
class Record:
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple = ()
    timestamp_ms: int = 0


@dataclass
class State:
    state: str
    members: int


@dataclass
class FakeCluster:
    alias: str
    partitions: dict[str, int] = field(default_factory=dict)
    configs: dict[str, dict[str, str]] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)
    ends: dict[tuple[str, int], int] = field(default_factory=dict)  # high watermark per partition
    starts: dict[tuple[str, int], int] = field(default_factory=dict)  # log start (retention moved it), default 0
    logs: dict[str, list[Record]] = field(default_factory=dict)  # partition 0 of internal topics
    committed_offsets: dict[str, dict[tuple[str, int], tuple[int, str]]] = field(default_factory=dict)
    members: dict[str, int] = field(default_factory=dict)
    committed_calls: list[tuple[list[str], set[tuple[str, int]]]] = field(default_factory=list)  # (groups, asked)
    groups: dict[str, FakeGroup] = field(default_factory=dict)  # coordination groups (runtime/ownership.py)
    created: list = field(default_factory=list)  # NewTopicSpecs, in order
    down: bool = False  # unreachable: probes and calls fail
    broken: bool = False  # answers probes, fails calls (a broker refusing requests)
    refuse: set[str] = field(default_factory=set)  # topics whose creation fails
    acls: set[TopicAcl] | None = None  # topic ACLs; None: the cluster has no authorizer
    refuse_acls: set[TopicAcl] = field(default_factory=set)  # ACLs whose creation or deletion fails
    answering: threading.Event | None = None  # while not set, calls wait (a cluster that does not answer)

    def _check(self, operation: str) -> None:
        if self.answering is not None:
            self.answering.wait(UNANSWERED_LIMIT_S)
        if self.down or self.broken:
            raise AdminOperationError(self.alias, operation, "cluster down (fake)")

    # -- topics ----------------------------------------------------------------------------------------
    def add_topic(self, name: str, partitions: int, configs: dict[str, str] | None = None, end: int = 0) -> None:
        self.partitions[name] = partitions
        self.configs[name] = dict(configs or {})
        self.ids[name] = uuid.uuid4().hex
        for p in range(partitions):
            self.ends[(name, p)] = end

    def probe(self, timeout_s: float = 10.0) -> None:
        if self.answering is not None and not self.answering.wait(min(timeout_s, UNANSWERED_LIMIT_S)):
            raise ClusterUnreachableError(self.alias, "fake:9092", f"no answer within {timeout_s} s")
        if self.down:
            raise ClusterUnreachableError(self.alias, "fake:9092", "down")

    def topic_partitions(self) -> dict[str, int]:
        self._check("list topics")
        return dict(self.partitions)

    def topic_ids(self, topics: list[str]) -> dict[str, str]:
        return {t: self.ids[t] for t in topics if t in self.ids}

    def topic_configs(self, topics: list[str]) -> dict[str, list[TopicConfigEntry]]:
        return {t: [TopicConfigEntry(k, v, False) for k, v in self.configs[t].items()]
                for t in topics if t in self.configs}

    def topic_config_values(self, topics: list[str], key: str) -> dict[str, str]:
        return {t: self.configs[t][key] for t in topics if key in self.configs.get(t, {})}

    def create_topics(self, specs, replication_factor_key: str = "replication.factor"):
        self._check("create topics")
        out: dict[str, Exception | None] = {}
        for spec in specs:
            if spec.name in self.refuse:
                out[spec.name] = AdminOperationError(self.alias, f"create topic '{spec.name}'", "refused (fake)")
                continue
            if spec.name not in self.partitions:
                self.add_topic(spec.name, spec.partitions, dict(spec.configs))
                self.created.append(spec)
            out[spec.name] = None
        return out

    def create_partitions(self, totals: dict[str, int]) -> dict[str, Exception | None]:
        for name, total in totals.items():
            for p in range(self.partitions[name], total):
                self.ends[(name, p)] = 0
            self.partitions[name] = total
        return dict.fromkeys(totals)

    def alter_topic_configs(self, alterations):
        for topic, ops in alterations.items():
            for op in ops:
                if op.op == "SET":
                    self.configs[topic][op.name] = op.value
                else:
                    self.configs[topic].pop(op.name, None)
        return dict.fromkeys(alterations)

    def watermarks_of(self, partitions):
        self._check("list offsets")
        return {t: {p: (self.starts.get((t, p), 0), self.ends.get((t, p), 0)) for p in range(n)}
                for t, n in partitions.items()}

    # -- topic ACLs ------------------------------------------------------------------------------------
    def topic_acls(self) -> frozenset[TopicAcl] | None:
        self._check("describe ACLs")
        return None if self.acls is None else frozenset(self.acls)

    def create_acls(self, acls) -> dict[TopicAcl, Exception | None]:
        return self._change_acls(acls, "create", self.acls.add if self.acls is not None else None)

    def delete_acls(self, acls) -> dict[TopicAcl, Exception | None]:
        return self._change_acls(acls, "delete", self.acls.discard if self.acls is not None else None)

    def _change_acls(self, acls, operation: str, change) -> dict[TopicAcl, Exception | None]:
        self._check(f"{operation} ACLs")
        out: dict[TopicAcl, Exception | None] = {}
        for acl in acls:
            if change is None or acl in self.refuse_acls:
                out[acl] = AdminOperationError(self.alias, f"{operation} ACL ({acl})", "refused (fake)")
            else:
                change(acl)
                out[acl] = None
        return out

    # -- internal topics (partition 0) ---------------------------------------------------------------
    def append(self, topic: str, key: bytes | None, value: bytes | None, headers=()) -> None:
        log = self.logs.setdefault(topic, [])
        log.append(Record(len(log), key, value, tuple(headers or ())))

    # -- groups ------------------------------------------------------------------------------------------
    def list_groups(self) -> list[str]:
        self._check("list groups")
        return sorted(self.committed_offsets)

    def committed(self, groups: list[str], partitions):
        asked = set(partitions)
        self.committed_calls.append((list(groups), asked))
        return {g: {tp: o for tp, o in self.committed_offsets.get(g, {}).items() if tp in asked} for g in groups}

    def describe(self, groups: list[str]):
        return {g: State("STABLE" if self.members.get(g) else "EMPTY", self.members.get(g, 0)) for g in groups}

    def alter_offsets(self, group: str, offsets) -> None:
        self.committed_offsets.setdefault(group, {}).update(offsets)

    def states(self, groups: list[str]):
        return {g: self.describe([g])[g].state for g in groups}

    def commit(self, group: str, offsets, keep: bool = True) -> None:
        if self.members.get(group):
            raise AdminOperationError(self.alias, f"commit offsets of group '{group}'", "UNKNOWN_MEMBER_ID")
        self.alter_offsets(group, offsets)

    def close(self) -> None:
        pass


class FakeWriter:
    def __init__(self, cluster: FakeCluster, settings=None) -> None:
        self.cluster = cluster
        self.settings = dict(settings or {})  # the librdkafka settings it was made with
        self.closed = False

    def write(self, topic: str, records) -> int:
        self.cluster._check(f"write to '{topic}'")
        count = 0
        for key, value, *rest in records:
            self.cluster.append(topic, key, value, rest[0] if rest else ())
            count += 1
        return count

    def close(self) -> None:
        self.closed = True


class FakeReader:
    def __init__(self, cluster: FakeCluster, topic: str, settings=None) -> None:
        self.cluster, self.topic, self.next = cluster, topic, 0
        self.settings = dict(settings or {})  # the librdkafka settings it was made with
        self.closed = False

    def read_new(self) -> list[Record]:
        log = self.cluster.logs.get(self.topic, [])
        new, self.next = log[self.next:], len(log)
        return new

    def close(self) -> None:
        self.closed = True


class FakeClients:
    """`Clients` over FakeClusters by alias; remembers every writer and reader it handed out."""

    def __init__(self, *clusters: FakeCluster) -> None:
        self.clusters = {c.alias: c for c in clusters}
        self.writers: list[FakeWriter] = []
        self.readers: list[FakeReader] = []
        # What `oldest_records` answers per (topic, partition): a timestamp, None (only markers), or absent.
        self.oldest: dict[tuple[str, int], int | None] = {}
        self.probed: list[dict] = []  # the ranges of each oldest_records call
        # (alias, settings) of each admin, groups and read_all client asked for, in order
        self.admins: list[tuple[str, dict]] = []
        self.group_admins: list[tuple[str, dict]] = []
        self.read_alls: list[tuple[str, str, dict]] = []  # (alias, topic, settings)
        self.transaction_probes: list[tuple[str, str]] = []  # (alias, transactional id)
        self.transactions_refused: dict[str, str] = {}  # alias -> the problem its probe reports

    def admin(self, alias: str, settings) -> FakeCluster:
        self.admins.append((alias, dict(settings)))
        return self.clusters[alias]

    def groups(self, alias: str, settings) -> FakeCluster:
        self.group_admins.append((alias, dict(settings)))
        return self.clusters[alias]

    def writer(self, alias: str, settings) -> FakeWriter:
        self.writers.append(FakeWriter(self.clusters[alias], settings))
        return self.writers[-1]

    def reader(self, alias: str, settings, topic: str) -> FakeReader:
        self.readers.append(FakeReader(self.clusters[alias], topic, settings))
        return self.readers[-1]

    def read_all(self, alias: str, settings, topic: str) -> list[Record]:
        self.read_alls.append((alias, topic, dict(settings)))
        return list(self.clusters[alias].logs.get(topic, []))

    def has_records(self, settings, topic: str, partition: int, start: int, end: int) -> bool:
        return start < end

    def transactions_problem(self, alias: str, settings, transactional_id: str) -> str | None:
        self.transaction_probes.append((alias, transactional_id))
        return self.transactions_refused.get(alias)

    def oldest_records(self, settings, ranges, timeout_s: float) -> dict[tuple[str, int], int | None]:
        self.probed.append(dict(ranges))
        return {key: self.oldest[key] for key in ranges if key in self.oldest}

    def membership(self, alias: str, settings, group: str, session_timeout_ms: int, client_id: str) -> FakeMembership:
        cluster = self.clusters[alias]
        fake_group = cluster.groups.setdefault(group, FakeGroup(lambda: cluster.partitions.get(group, 0)))
        return FakeMembership(fake_group, client_id, session_timeout_ms)


class FakeGroup:
    """A consumer group's coordinator in memory: members in join order, partitions balanced stickily (each keeps
    what it has up to its share); each member learns its changes at its next poll, revocations first."""

    def __init__(self, partitions: Callable[[], int]) -> None:
        self.partitions = partitions
        self.members: list[FakeMembership] = []
        self.assignment: dict[str, set[int]] = {}

    def join(self, member: FakeMembership) -> None:
        self.members.append(member)
        self.assignment[member.client_id] = set()
        self.rebalance()

    def leave(self, member: FakeMembership, lost: bool = False) -> None:
        self.members.remove(member)
        held = self.assignment.pop(member.client_id, set())
        if lost:
            member.pending.append(("lost", held))
        self.rebalance()

    def rebalance(self) -> None:
        count, members = self.partitions(), [m.client_id for m in self.members]
        if not members:
            return
        quotas = {m: count // len(members) + (1 if i < count % len(members) else 0) for i, m in enumerate(members)}
        free = set(range(count)) - {p for m in members for p in self.assignment[m]}
        new = {}
        for m in members:
            kept = sorted(self.assignment[m])[:quotas[m]]
            free |= self.assignment[m] - set(kept)
            new[m] = set(kept)
        for m in members:
            while len(new[m]) < quotas[m] and free:
                new[m].add(min(free))
                free.discard(min(free))
        for member in self.members:
            old = self.assignment[member.client_id]
            member.pending.append(("revoked", old - new[member.client_id]))
            member.pending.append(("assigned", new[member.client_id] - old))
        self.assignment = new


class FakeMembership:
    def __init__(self, group: FakeGroup, client_id: str, session_timeout_ms: int) -> None:
        self.group = group
        self.client_id = client_id
        self.heartbeat_interval_ms = max(100, session_timeout_ms // 10)
        self.pending: list[tuple[str, set[int]]] = []
        self.callbacks: dict[str, Callable[[set[int]], None]] = {}
        self.closed = False

    def join(self, on_assigned, on_revoked, on_lost) -> None:
        self.callbacks = {"assigned": on_assigned, "revoked": on_revoked, "lost": on_lost}
        self.group.join(self)

    def poll(self, timeout_s: float) -> None:
        while self.pending:
            kind, partitions = self.pending.pop(0)
            if partitions or kind == "assigned":
                self.callbacks[kind](partitions)
        time.sleep(timeout_s)

    def member_id(self) -> str:
        return self.client_id

    def members(self, timeout_s: float = 0.0):
        return [Member(m.client_id, m.client_id, "localhost", tuple(sorted(self.group.assignment[m.client_id])))
                for m in self.group.members]

    def expire(self) -> None:
        """The session ran out (the process was cut off): its partitions go to the others, it learns at its poll."""
        self.group.leave(self, lost=True)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self in self.group.members:
                held = self.group.assignment.get(self.client_id, set())
                if held:
                    self.callbacks["revoked"](held)
                self.group.leave(self)


class FakeQuery:
    def __init__(self, request) -> None:
        self.request = request
        self.active = True
        self.failure: str | None = None
        self.stopped = False
        self.renewals: list[int] = []  # valid_ms of each renew_lease call, in order

    def status(self) -> tuple[bool, str | None]:
        return self.active and not self.stopped, self.failure

    def stop(self) -> None:
        self.stopped = True

    def renew_lease(self, valid_ms: int) -> None:
        self.renewals.append(valid_ms)


class FakeEngine:
    """Starts FakeQuery objects; `fail_next` makes the next start raise it."""

    def __init__(self) -> None:
        self.queries: list[FakeQuery] = []
        self.prepared = False
        self.stopped = False
        self.fail_next: Exception | None = None
        self.committed: dict[tuple[str, int], tuple[int, str]] = {}  # the target's positions group
        self.take_overs = 0
        self.lost_because: str | None = None  # set: the Spark driver ended

    def prepare(self, real_time_slots) -> None:
        self.prepared = True

    def check_sql_rules(self, flows) -> list[str]:
        return [f"{f.name}: {e}" for f in flows for _, e in f.sql_rules.expressions() if "bad" in e]

    def take_over_transactions(self, flow) -> dict[tuple[str, int], tuple[int, str]]:
        self.take_overs += 1
        return dict(self.committed)

    def lost(self) -> str | None:
        return self.lost_because

    def start_query(self, request) -> FakeQuery:
        if self.fail_next is not None:
            error, self.fail_next = self.fail_next, None
            raise error
        self.queries.append(FakeQuery(request))
        return self.queries[-1]

    def stop(self) -> None:
        self.stopped = True
