"""One principal per client role, as an MM2 user configures them, under StandardAuthorizer (issue 16, item 3).

Each role of flow A->B logs in as its own SASL user (`A.consumer.sasl.jaas.config`, `B.producer...`, ...; the
clusters' own setting is `app`, who may do nothing) and is granted only the ACLs its MM2 role needs (GRANTS).
The flow must still replicate, write offset syncs and checkpoints, sync its group's offsets and beat, with no
job failing: so every internal client uses its role's settings. In particular the checkpoints are written with
the target producer's (Connect's worker producer) and read back with the target consumer's, and the offset
syncs are read with the source consumer's: the target admin has no WRITE on the checkpoints topic and no admin
may read an internal topic. The mirror client and `sparkmirror status` then read with the same file. The test
sets up and checks data through each broker's PLAINTEXT listener.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)
from tests.role_acls import GRANTS as ROLE_GRANTS

from sparkmirror import client, mirror_status
from sparkmirror.errors import AdminOperationError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.internal_log import InternalTopicWriter, read_internal_topic
from sparkmirror.model import KafkaRecord, NewTopicSpec
from sparkmirror.offsets.codec import decode_heartbeat
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER
from sparkmirror.testing.records import produce

from .conftest import commit, committed, trigger_settings, wait_until

RECORDS = 300
PARTITIONS = 2
COMMITTED = {0: 40, 1: 111}  # the group's committed offsets on A, per partition
COPY_TIMEOUT_S = 120.0
OFFSETS_TIMEOUT_S = 90.0
FAST = ("emit.checkpoints.interval.seconds = 1\nrefresh.groups.interval.seconds = 1\n"
        "sync.group.offsets.enabled = true\nsync.group.offsets.interval.seconds = 1\n"
        "sync.topic.configs.interval.seconds = 2\nsparkmirror.measure.lag.interval.seconds = 1\n")
JOBS = {"sync topic configs", "emit heartbeats", "emit checkpoints", "sync group offsets", "measure lag"}

# MM2 key prefix -> the principal of that role (tests/conftest.ROLE_PRINCIPALS)
ROLES = {"A.consumer": "src-consumer", "A.admin": "src-admin", "A.producer": "src-producer",
         "B.consumer": "tgt-consumer", "B.admin": "tgt-admin", "B.producer": "tgt-producer"}

# The ACLs each role needs (tests/role_acls.GRANTS, also docs/reference.md's table): granted to each role's principal.
GRANTS = [(role.split(".")[0], ROLES[role], ResourceType[kind], name, tuple(AclOperation[op] for op in operations))
          for role, kind, name, operations, _ in ROLE_GRANTS]


def grant(secured, names: dict[str, str]) -> None:
    """Create GRANTS through each broker's PLAINTEXT listener (ANONYMOUS, a super user there)."""
    for alias, cluster in (("A", secured.source), ("B", secured.target)):
        bindings = [AclBinding(kind, name.format(**names).rstrip("*"),
                               ResourcePatternType.PREFIXED if name.endswith("*") else ResourcePatternType.LITERAL,
                               f"User:{principal}", "*", operation, AclPermissionType.ALLOW)
                    for where, principal, kind, name, operations in GRANTS if where == alias
                    for operation in operations]
        admin = AdminClient({"bootstrap.servers": cluster.internal})  # kept until its futures are done
        for future in admin.create_acls(bindings).values():
            future.result(30)


def mm2_file(path, secured, topic: str, group: str):
    """As an MM2 user writes it: each cluster's connection (as `app`, allowed nothing), each role's login."""
    roles = "".join(f"{prefix}.sasl.jaas.config = {secured.jaas(principal)}\n" for prefix, principal in ROLES.items())
    path.write_text("clusters = A, B\n" + secured.mm2_lines("A", "sasl_ssl", "app")
                    + secured.mm2_lines("B", "sasl_ssl", "app") + roles
                    + f"A->B.enabled = true\nA->B.topics = {topic}\nA->B.groups = {group}\n"
                    # ACL sync (issue 16, item 2) needs cluster-wide rights of its own: not this test's subject
                    + "sync.topic.acls.enabled = false\n"
                    + SINGLE_BROKER + FAST + trigger_settings("micro-batch"))
    return path


def heartbeats(bootstrap: str, topic: str, since_ms: int) -> set[tuple[str, str]]:
    """(source, target) of the heartbeats in `topic` stamped at or after `since_ms`."""
    beats = (decode_heartbeat(r.key, r.value) for r in read_internal_topic("check", {"bootstrap.servers": bootstrap},
                                                                            topic))
    return {(b.source_alias, b.target_alias) for b in beats if b.timestamp_ms >= since_ms}


def test_every_role_with_its_own_principal_and_only_its_acls(secured_clusters, running, tmp_path, unique):
    secured = secured_clusters
    topic, group = f"roles-{unique}", f"roles-app-{unique}"
    remote = f"A.{topic}"
    grant(secured, {"topic": topic, "remote": remote, "group": group})
    assert ClusterAdmin("A", {"bootstrap.servers": secured.source.internal}).create_topics(
        [NewTopicSpec(topic, PARTITIONS, 1)])[topic] is None
    now = int(time.time() * 1000)
    assert produce(secured.source.internal, topic, [KafkaRecord(i % PARTITIONS, -1, None, f"v{i}".encode(), (), 0,
                                                                now) for i in range(RECORDS)]) == RECORDS
    commit(secured.source.internal, group, {(topic, p): offset for p, offset in COMMITTED.items()})
    path = mm2_file(tmp_path / "mm2.properties", secured, topic, group)
    partitions = [(remote, p) for p in range(PARTITIONS)]
    started_ms = int(time.time() * 1000)

    with running(path) as supervisor:
        def copied():
            admin = ClusterAdmin("B", {"bootstrap.servers": secured.target.internal})
            return remote in admin.topic_partitions() and sum(
                high for _, high in admin.watermarks(remote, PARTITIONS).values()) == RECORDS
        wait_until(copied, COPY_TIMEOUT_S, f"{RECORDS} records of {topic} on B")

        def checkpointed():
            got = client.read_checkpoints(path, "A", "B", group)  # as B's consumer, as MM2's MirrorClient
            return {(k[1], k[2]): c.upstream_offset for k, c in got.items()} == {
                (remote, p): offset for p, offset in COMMITTED.items()}
        wait_until(checkpointed, OFFSETS_TIMEOUT_S, f"checkpoints of {group}")

        def synced():
            return committed(secured.target.internal, group, partitions) == {
                (remote, p): offset for p, offset in COMMITTED.items()}
        wait_until(synced, OFFSETS_TIMEOUT_S, f"{group}'s offsets committed on B")

        wait_until(lambda: ("B", "A") in heartbeats(secured.source.internal, "heartbeats", started_ms),
                   OFFSETS_TIMEOUT_S, "B->A's heartbeats in A's heartbeats (written by A's producer)")
        wait_until(lambda: ("B", "A") in heartbeats(secured.target.internal, "A.heartbeats", started_ms),
                   COPY_TIMEOUT_S, "B->A's heartbeats replicated to B's A.heartbeats")

        def jobs() -> tuple[set[str], set[tuple[str, str | None]]]:
            """The jobs of A->B that ran, and those failing now (with their error)."""
            status = supervisor.status().flow_jobs("A->B")
            return {j.name for j in status if j.runs}, {(j.name, j.last_error) for j in status if j.failures_in_a_row}
        try:
            wait_until(lambda: (lambda ran, failing: ran >= JOBS and not failing)(*jobs()), OFFSETS_TIMEOUT_S,
                       f"every job of A->B ({', '.join(sorted(JOBS))}) to run, none failing")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; ran, failing: {jobs()}") from None

    # The mirror client and `sparkmirror status` with the same file: the consumers read the internal topics
    syncs = [s for s in client.read_offset_syncs(path, "A", "B") if s.topic == topic]
    assert {s.partition for s in syncs} == set(range(PARTITIONS))
    translation = client.translate_offsets(path, group, "A", "B")
    resumes = {(t.remote_topic, t.partition): (t.downstream_offset, t.status) for t in translation.partitions}
    assert (translation.method, resumes) == ("live", {(remote, p): (offset, "exact") for p, offset in
                                                      COMMITTED.items()}), translation
    [report] = mirror_status.read_status(path).flows
    assert {(p.partition, p.lag_records) for p in report.partitions if p.topic == topic} == {(0, 0), (1, 0)}
    assert group in {g.group for g in report.groups}


def test_the_admins_may_neither_write_nor_read_the_internal_topics(secured_clusters, unique):
    """The grants are tight: the roles the checkpointer used before (the admins) are refused, and a read refused
    names the grant rather than reading as an empty topic."""
    secured = secured_clusters
    grant(secured, {"topic": f"roles-{unique}", "remote": f"A.roles-{unique}", "group": f"roles-app-{unique}"})
    for alias, cluster, topic in (("A", secured.source, "mm2-offset-syncs.B.internal"),
                                  ("B", secured.target, "A.checkpoints.internal")):
        ClusterAdmin(alias, {"bootstrap.servers": cluster.internal}).create_topics(
            [NewTopicSpec(topic, 1, 1, {"cleanup.policy": "compact"})])
    as_admin = {alias: {"bootstrap.servers": cluster.bootstraps["SASL_SSL"], "security.protocol": "SASL_SSL",
                        "ssl.ca.location": str(secured.trust.pem), "sasl.mechanism": "SCRAM-SHA-512",
                        "sasl.username": principal, "sasl.password": secured.users[principal]}
                for alias, cluster, principal in (("A", secured.source, "src-admin"),
                                                  ("B", secured.target, "tgt-admin"))}
    writer = InternalTopicWriter("B", as_admin["B"])
    try:
        with pytest.raises(AdminOperationError, match="AUTHORIZATION_FAILED"):
            writer.write("A.checkpoints.internal", [(b"k", b"v")])
    finally:
        writer.close()
    for alias, topic in (("A", "mm2-offset-syncs.B.internal"), ("B", "A.checkpoints.internal")):
        with pytest.raises(AdminOperationError, match=f"Grant READ and DESCRIBE on '{topic}'"):
            read_internal_topic(alias, as_admin[alias], topic)
