"""Topic ACL sync on real brokers with StandardAuthorizer: MM2's mapping, sparkmirror's prefixes, and the
incremental sync (a second run changes nothing; an ACL removed at the source leaves the target only where
sparkmirror created it, as its ledger on the target says, even to a process whose state dir is new). `plan` shows
the ACLs before anything runs; a cluster without authorizer is no error; a target that refuses the ledger's topic
says which grant is missing.

The flow runs as the super user `mirror` over SASL_SSL; the tests set ACLs up and read them back through each
broker's own PLAINTEXT listener. Principals are unique per test, so other tests' ACLs never match.
"""

from __future__ import annotations

import logging
import shutil

import pytest
from click.testing import CliRunner
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from sparkmirror.cli.main import cli
from sparkmirror.config.mm2 import load_config
from sparkmirror.config.model import ACL_LEDGER_TOPIC
from sparkmirror.control.acl_ledger import TopicAclLedger, decode_ledger, encode_ledger, latest_value
from sparkmirror.control.acl_sync import AclSync, MemoryLedger
from sparkmirror.errors import AdminOperationError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.internal_log import InternalTopicWriter, read_internal_topic
from sparkmirror.model import NewTopicSpec, TopicAcl
from sparkmirror.runtime.clients import KafkaClients
from sparkmirror.runtime.state import ACL_LEDGER_FILE
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER

from .conftest import ONLY_OWN_TOPICS, trigger_settings, wait_until

SYNC_TIMEOUT_S = 90.0


def acl(name: str, principal: str, operation: str, permission: str = "ALLOW", pattern: str = "LITERAL") -> TopicAcl:
    return TopicAcl(pattern, name, principal, "*", operation, permission)


def ledger_on(bootstrap: str, flow: str = "A->B") -> frozenset[TopicAcl] | None:
    """A flow's ledger as the target's ledger topic holds it; None when it holds none."""
    latest = latest_value(read_internal_topic("check", {"bootstrap.servers": bootstrap}, ACL_LEDGER_TOPIC),
                          flow.encode())
    return None if latest is None else decode_ledger(latest[1])


def test_topic_acls_sync_by_mm2s_rules_incrementally(secured_clusters, running, tmp_path, unique, caplog):
    secured = secured_clusters
    source = ClusterAdmin("A", {"bootstrap.servers": secured.source.internal})
    target = ClusterAdmin("B", {"bootstrap.servers": secured.target.internal})
    orders, payments, secret = f"acl-{unique}-orders", f"acl-{unique}-payments", f"acl-{unique}-secret"
    assert all(e is None for e in source.create_topics([NewTopicSpec(t, 1, 1) for t in (orders, payments, secret)])
               .values())
    app, guest, ops = f"User:app-{unique}", f"User:guest-{unique}", f"User:ops-{unique}"
    mine = {app, guest, ops}
    on_source = {
        acl(orders, app, "ALL"),  # -> ALLOW READ
        acl(orders, app, "WRITE"),  # never copied
        acl(orders, app, "DESCRIBE"),
        acl(orders, guest, "READ", "DENY"),
        acl(payments, app, "READ"),
        acl(secret, app, "READ"),  # the flow does not replicate it
        acl(f"acl-{unique}-ord", ops, "DESCRIBE", pattern="PREFIXED"),  # beyond MM2: the prefix renamed
        acl(f"acl-{unique}-zzz", ops, "DESCRIBE", pattern="PREFIXED"),  # no replicated topic has it
    }
    assert all(e is None for e in source.create_acls(on_source).values())
    there_before = acl(f"A.{orders}", app, "READ")  # made by someone else, and also what ALL maps to
    unrelated = acl(f"A.{orders}", ops, "ALTER")
    assert all(e is None for e in target.create_acls({there_before, unrelated}).values())

    path = tmp_path / "mm2.properties"
    path.write_text("clusters = A, B\n" + secured.mm2_lines("A", "sasl_ssl") + secured.mm2_lines("B", "sasl_ssl")
                    + f"A->B.enabled = true\nA->B.topics = acl-{unique}-(orders|payments)\n"
                    + "sync.topic.acls.interval.seconds = 1\n" + SINGLE_BROKER + ONLY_OWN_TOPICS
                    + trigger_settings("micro-batch"))

    def target_acls() -> set[TopicAcl]:
        return {a for a in target.topic_acls() or () if a.principal in mine}

    wanted = {acl(f"A.{orders}", app, "READ"), acl(f"A.{orders}", app, "DESCRIBE"),
              acl(f"A.{orders}", guest, "READ", "DENY"), acl(f"A.{payments}", app, "READ"),
              acl(f"A.acl-{unique}-ord", ops, "DESCRIBE", pattern="PREFIXED")}

    # `plan` lists them before anything runs: the one already on B as exists, the others as create.
    shown = CliRunner().invoke(cli, ["plan", str(path)])
    assert shown.exit_code == 0, shown.output
    plan_lines = [line.strip() for line in shown.stdout.splitlines()]
    assert f"{there_before}  [exists]" in plan_lines
    assert {f"{a}  [create]" for a in wanted - {there_before}} <= set(plan_lines)
    assert f"not copied: {acl(orders, app, 'WRITE')}: ALLOW WRITE is never copied: only the replication writes " \
           f"remote topics" in plan_lines
    assert target_acls() == {there_before, unrelated}, "plan changed the target"

    def ledger() -> set[TopicAcl]:
        """This test's part of A->B's ledger: the topic is the session's, shared by every flow A->B into B."""
        return {a for a in ledger_on(secured.target.internal) or () if a.principal in mine}

    def ran(supervisor, times: int):
        return lambda: any(j.name == "sync topic ACLs" and j.runs >= times and j.failures == 0
                           for j in supervisor.status().jobs)

    state_dir = tmp_path / "state"
    with caplog.at_level(logging.INFO, logger="sparkmirror.control.acl_sync"), \
            running(path, state_dir=state_dir) as supervisor:
        wait_until(lambda: target_acls() == wanted | {unrelated}, SYNC_TIMEOUT_S, "the ACLs of A's topics on B")
        wait_until(ran(supervisor, 3), SYNC_TIMEOUT_S, "three runs of ACL sync")
        created = [r.message for r in caplog.records if "created topic ACL" in r.message]
        assert len(created) == len(wanted - {there_before}), "a run after the first changed something"
        assert ledger() == wanted - {there_before}
    assert not list(state_dir.rglob(ACL_LEDGER_FILE)), "the ledger is on the target, not in the state dir"

    # The process's state dir is lost; a new one starts with an empty dir and still knows what was made before.
    # Removed at the source: the DESCRIBE sparkmirror made goes; the READ it found there stays.
    shutil.rmtree(state_dir)
    assert all(e is None for e in source.delete_acls({acl(orders, app, "DESCRIBE"), acl(orders, app, "ALL")})
               .values())
    with running(path, state_dir=tmp_path / "new-state") as supervisor:
        wait_until(lambda: acl(f"A.{orders}", app, "DESCRIBE") not in target_acls(), SYNC_TIMEOUT_S,
                   "the DESCRIBE removed at the source to leave B")
        wait_until(ran(supervisor, 3), SYNC_TIMEOUT_S, "three runs of ACL sync")
    assert target_acls() == wanted - {acl(f"A.{orders}", app, "DESCRIBE")} | {unrelated}
    assert ledger() == wanted - {there_before, acl(f"A.{orders}", app, "DESCRIBE")}


def test_a_source_without_authorizer_syncs_nothing_and_says_so_once(clusters, tmp_path, caplog):
    path = tmp_path / "mm2.properties"
    path.write_text(f"clusters = A, B\nA.bootstrap.servers = {clusters.source}\n"
                    f"B.bootstrap.servers = {clusters.target}\nA->B.enabled = true\n")
    flow = load_config(path).flow("A", "B")
    sync = AclSync(lambda: flow, ClusterAdmin("A", flow.source_admin.rdkafka),
                   ClusterAdmin("B", flow.target_admin.rdkafka), MemoryLedger(), dict)
    with caplog.at_level(logging.INFO, logger="sparkmirror.control.acl_sync"):
        assert not sync.sync().create
        assert not sync.sync().create
    told = [r for r in caplog.records if r.levelno == logging.INFO]
    assert len(told) == 1 and "no ACL authorizer is configured on cluster 'A'" in told[0].message


def test_a_target_that_refuses_the_ledger_topic_names_it_the_cluster_and_the_grant(secured_clusters, tmp_path,
                                                                                    unique):
    """As `app` (allowed nothing): each step of the ledger that B refuses names the topic, B and what to grant."""
    secured = secured_clusters
    internal = {"bootstrap.servers": secured.target.internal}
    ClusterAdmin("B", internal).create_topics([NewTopicSpec(ACL_LEDGER_TOPIC, 1, 1, {"cleanup.policy": "compact"})])
    writer = InternalTopicWriter("B", internal)  # another flow's record: the topic exists and is not empty
    try:
        writer.write(ACL_LEDGER_TOPIC, [(f"X{unique}->B".encode(), encode_ledger(frozenset()))])
    finally:
        writer.close()
    path = tmp_path / "mm2.properties"
    path.write_text("clusters = A, B\n" + secured.mm2_lines("A", "sasl_ssl", "app")
                    + secured.mm2_lines("B", "sasl_ssl", "app") + "A->B.enabled = true\n" + SINGLE_BROKER)
    flow = load_config(path).flow("A", "B")
    store = TopicAclLedger(lambda: flow, ClusterAdmin("B", flow.target_admin.rdkafka), KafkaClients())
    topic = ACL_LEDGER_TOPIC
    with pytest.raises(AdminOperationError, match=f"^read '{topic}' on cluster 'B' failed: .*AUTHORIZATION_FAILED.*"
                                                  f"Grant READ and DESCRIBE on '{topic}' to the principal used for "
                                                  f"cluster 'B'"):
        store.load()
    with pytest.raises(AdminOperationError, match=f"^create topic '{topic}' on cluster 'B' failed: .*AUTHORIZATION_"
                                                  f"FAILED.*Grant this principal CREATE"):
        store.save(frozenset())

    admin = AdminClient(internal)
    readable = [AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:app", "*", operation,
                           AclPermissionType.ALLOW) for operation in (AclOperation.READ, AclOperation.DESCRIBE)]
    for future in admin.create_acls(readable).values():
        future.result(30)
    try:
        def loads() -> bool:
            try:
                store.load()  # the topic holds a record (of some flow): it is known to exist
            except AdminOperationError:
                return False  # the grant is not applied yet
            return True
        wait_until(loads, SYNC_TIMEOUT_S, "app to read the ledger topic once granted READ and DESCRIBE")
        with pytest.raises(AdminOperationError, match=f"^write to '{topic}' on cluster 'B' failed: .*AUTHORIZATION_"
                                                      f"FAILED.*Grant WRITE on '{topic}' to the principal used for "
                                                      f"cluster 'B'"):
            store.save(frozenset())
    finally:
        store.close()
        for future in admin.delete_acls([AclBindingFilter(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL,
                                                          "User:app", "*", AclOperation.ANY,
                                                          AclPermissionType.ANY)]).values():
            future.result(30)
