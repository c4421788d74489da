"""The ACL ledger in the target's compacted topic, against in-memory clusters: what a load and a save read and
write, the flow's last record winning, flows sharing the topic, the take-over of the state dir's file of earlier
versions, and ACL sync by a process whose state dir is empty."""

from __future__ import annotations

import logging

import pytest
from tests.unit.fakes import FakeClients, FakeCluster, load
from tests.unit.properties_text import A_TO_B_ORDERS as BASE
from tests.unit.properties_text import ROLE_CLIENT_IDS

from sparkmirror.control.acl_ledger import (
    AclLedgerFormatError,
    TopicAclLedger,
    decode_ledger,
    encode_ledger,
    latest_value,
)
from sparkmirror.control.plane import FlowControl
from sparkmirror.errors import AdminOperationError
from sparkmirror.model import TopicAcl

TOPIC = "__sparkmirror-acl-ledger"
REMOTE = {"orders": "A.orders", "orders-eu": "A.orders-eu"}
TWO_SOURCES = (BASE.replace("clusters = A, B", "clusters = A, B, C")
               + "C.bootstrap.servers = c:9092\nC->B.enabled = true\n")


def acl(name: str, operation: str = "READ", principal: str = "User:app") -> TopicAcl:
    return TopicAcl("LITERAL", name, principal, "*", operation, "ALLOW")


class FormerLedger:
    """The state dir's file of earlier versions, in memory: what it holds until it is retired."""

    def __init__(self, acls: frozenset[TopicAcl] | None) -> None:
        self.acls = acls
        self.retired = 0

    def load(self) -> frozenset[TopicAcl] | None:
        return self.acls

    def retire(self) -> str:
        self.acls, self.retired = None, self.retired + 1
        return "created-acls.json renamed to created-acls.json.migrated"


def ledger(text: str = BASE, source: str = "A", b: FakeCluster | None = None, clients: FakeClients | None = None,
           former: FormerLedger | None = None) -> tuple[TopicAclLedger, FakeCluster, FakeClients]:
    """A fresh ledger of flow `source`->B (a new process: nothing in memory), over cluster B."""
    b = b or FakeCluster("B")
    clients = clients or FakeClients(b)
    flow = load(text).flow(source, "B")
    return TopicAclLedger(lambda: flow, b, clients, former), b, clients


def test_the_ledger_codec_round_trips_and_is_the_files_document():
    acls = frozenset({acl("A.orders"), TopicAcl("PREFIXED", "A.ord", "User:ops", "10.0.0.1", "DESCRIBE", "DENY")})
    value = encode_ledger(acls)
    assert decode_ledger(value) == acls
    assert value.startswith(b'{"created_acls":[{"pattern_type":"LITERAL","name":"A.orders","principal":"User:app"')
    assert decode_ledger('{"created_acls": []}') == frozenset()


@pytest.mark.parametrize("document", [b"", b"\xff", b"[]", b'{"acls": []}', b'{"created_acls": {}}',
                                      b'{"created_acls": [{"name": "A.orders"}]}',
                                      b'{"created_acls": [{"pattern_type": "LITERAL", "name": 5, "principal": "p", '
                                      b'"host": "*", "operation": "READ", "permission": "ALLOW"}]}'])
def test_what_is_not_a_ledger_document_is_one_error(document: bytes):
    with pytest.raises(AclLedgerFormatError):
        decode_ledger(document)


def test_a_missing_topic_is_an_empty_ledger_and_a_load_creates_nothing():
    store, b, _ = ledger()
    assert store.load() == frozenset()
    assert b.created == [] and TOPIC not in b.logs


def test_save_creates_the_compacted_topic_once_and_a_new_process_loads_what_was_saved():
    store, b, clients = ledger(BASE + "checkpoints.topic.replication.factor = 1\n")
    first, second = frozenset({acl("A.orders")}), frozenset({acl("A.orders"), acl("A.orders-eu")})
    store.save(first)
    store.save(second)
    [spec] = b.created
    assert (spec.name, spec.partitions, spec.replication_factor, dict(spec.configs)) == (
        TOPIC, 1, 1, {"cleanup.policy": "compact"})
    assert [(r.key, decode_ledger(r.value)) for r in b.logs[TOPIC]] == [(b"A->B", first), (b"A->B", second)]
    assert len(clients.writers) == 1  # one writer for every save
    assert ledger(b=b)[0].load() == second  # the last record of the flow wins


def test_an_existing_topic_is_not_created_again():
    b = FakeCluster("B")
    b.add_topic(TOPIC, 1, {"cleanup.policy": "compact"})  # made by an operator: the admin needs no CREATE
    b.refuse.add(TOPIC)
    store, _, _ = ledger(b=b)
    assert store.load() == frozenset()
    store.save(frozenset({acl("A.orders")}))
    assert b.created == [] and len(b.logs[TOPIC]) == 1


def test_the_ledger_is_read_and_written_with_the_target_consumers_and_producers_settings():
    store, _, clients = ledger(BASE + ROLE_CLIENT_IDS)
    store.save(frozenset({acl("A.orders")}))
    store.load()
    assert [(w.cluster.alias, w.settings["client.id"]) for w in clients.writers] == [("B", "b-producer")]
    assert [(alias, topic, settings["client.id"]) for alias, topic, settings in clients.read_alls] == [
        ("B", TOPIC, "b-consumer")]


def test_two_flows_into_one_target_share_the_topic_each_with_its_own_record():
    b = FakeCluster("B")
    clients = FakeClients(b)
    from_a, _, _ = ledger(TWO_SOURCES, "A", b, clients)
    from_c, _, _ = ledger(TWO_SOURCES, "C", b, clients)
    from_a.save(frozenset({acl("A.orders")}))
    from_c.save(frozenset({acl("C.orders"), acl("C.payments")}))
    from_a.save(frozenset())
    assert [s.name for s in b.created] == [TOPIC]  # C's ledger found A's topic
    assert [r.key for r in b.logs[TOPIC]] == [b"A->B", b"C->B", b"A->B"]
    assert ledger(TWO_SOURCES, "A", b, clients)[0].load() == frozenset()
    assert ledger(TWO_SOURCES, "C", b, clients)[0].load() == {acl("C.orders"), acl("C.payments")}


def test_a_tombstone_empties_the_ledger_and_another_flows_damaged_record_is_not_read():
    store, b, _ = ledger()
    store.save(frozenset({acl("A.orders")}))
    b.append(TOPIC, b"A->B", None)
    b.append(TOPIC, b"C->B", b"not json")
    assert store.load() == frozenset()
    assert latest_value(b.logs[TOPIC], b"C->B") == (2, b"not json")


def test_a_damaged_record_of_the_flow_names_the_topic_the_offset_and_the_fix():
    store, b, _ = ledger()
    b.append(TOPIC, b"A->B", b'{"created_acls": [{"name": "A.orders"}]}')
    with pytest.raises(AdminOperationError, match=r"read flow A->B's topic ACL ledger in '__sparkmirror-acl-ledger' "
                                                  r"on cluster 'B' failed: its record at offset 0 is not a ledger "
                                                  r".*Write a tombstone \(key 'A->B', null value\)"):
        store.load()


def test_a_refused_write_is_the_targets_error_and_a_retry_writes():
    store, b, _ = ledger()
    b.broken = True
    with pytest.raises(AdminOperationError, match="cluster 'B'"):
        store.save(frozenset({acl("A.orders")}))
    b.broken = False
    store.save(frozenset({acl("A.orders")}))
    assert ledger(b=b)[0].load() == {acl("A.orders")}


def test_the_former_file_is_taken_over_once_then_retired(caplog: pytest.LogCaptureFixture):
    former = FormerLedger(frozenset({acl("A.orders")}))
    store, b, _ = ledger(former=former)
    with caplog.at_level(logging.INFO, logger="sparkmirror.control.acl_ledger"):
        assert store.load() == {acl("A.orders")}
        assert store.load() == {acl("A.orders")}
    assert former.retired == 1
    assert [(r.key, decode_ledger(r.value)) for r in b.logs[TOPIC]] == [(b"A->B", {acl("A.orders")})]
    assert [r.message for r in caplog.records] == [
        "flow A->B: topic ACL ledger (1 ACLs) taken over into topic '__sparkmirror-acl-ledger' on cluster 'B'; "
        "created-acls.json renamed to created-acls.json.migrated"]


def test_a_ledger_in_kafka_wins_over_a_former_file_which_is_left_alone():
    store, b, _ = ledger()
    store.save(frozenset({acl("A.orders-eu")}))
    former = FormerLedger(frozenset({acl("A.orders")}))
    assert ledger(b=b, former=former)[0].load() == {acl("A.orders-eu")}
    assert former.retired == 0 and len(b.logs[TOPIC]) == 1


def test_a_take_over_that_cannot_write_keeps_the_former_file_for_the_next_run():
    former = FormerLedger(frozenset({acl("A.orders")}))
    store, b, _ = ledger(former=former)
    b.refuse.add(TOPIC)
    with pytest.raises(AdminOperationError, match="create topic '__sparkmirror-acl-ledger'"):
        store.load()
    assert former.retired == 0 and former.acls == {acl("A.orders")}
    b.refuse.clear()
    assert store.load() == {acl("A.orders")} and former.retired == 1


def test_acl_sync_with_an_empty_state_dir_still_deletes_what_an_earlier_process_created():
    """Without a ledger the second process would leave A.orders-eu's ACL: it would not know it made it."""
    a = FakeCluster("A", acls={acl("orders"), acl("orders-eu")})
    b = FakeCluster("B", acls={acl("A.orders-eu", "DESCRIBE")})  # someone else's: never deleted
    flow = load(BASE).flow("A", "B")

    def process() -> FlowControl:
        return FlowControl(flow, a, b, FakeClients(a, b), lambda: REMOTE)

    first = process()
    first.acls.sync()
    first.close()
    assert b.acls == {acl("A.orders"), acl("A.orders-eu"), acl("A.orders-eu", "DESCRIBE")}
    a.acls = {acl("orders"), acl("orders-eu", "DESCRIBE")}
    applied = process().acls.sync()
    assert applied.delete == {acl("A.orders-eu")} and not applied.create
    assert b.acls == {acl("A.orders"), acl("A.orders-eu", "DESCRIBE")}
    assert decode_ledger(b.logs[TOPIC][-1].value) == {acl("A.orders")}
