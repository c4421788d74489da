"""ACL sync as FlowControl runs it, against in-memory clusters: what it creates, what it deletes, what it
leaves alone, and what it says when a cluster has no authorizer."""

from __future__ import annotations

import logging

import pytest
from tests.unit.fakes import FakeClients, FakeCluster, load
from tests.unit.properties_text import A_TO_B_ORDERS as BASE

from sparkmirror.control.acl_sync import MemoryLedger
from sparkmirror.control.plane import FlowControl
from sparkmirror.errors import AdminOperationError
from sparkmirror.model import TopicAcl

REMOTE = {"orders": "A.orders", "orders-eu": "A.orders-eu"}


def acl(name: str, operation: str = "READ", permission: str = "ALLOW", pattern: str = "LITERAL",
        principal: str = "User:app") -> TopicAcl:
    return TopicAcl(pattern, name, principal, "*", operation, permission)


def control(extra: str = "", source_acls=(), target_acls=(), ledger: MemoryLedger | None = None):
    flow = load(BASE + extra).flow("A", "B")
    a, b = FakeCluster("A", acls=set(source_acls)), FakeCluster("B", acls=set(target_acls))
    plane = FlowControl(flow, a, b, FakeClients(a, b), lambda: REMOTE, acl_ledger=ledger or MemoryLedger())
    return plane, a, b


def run_acl_job(plane: FlowControl) -> None:
    (job,) = [j for j in plane.jobs() if j.name == "sync topic ACLs"]
    assert job.schedule.enabled and job.schedule.interval_s == 600  # MM2's default
    job.run()


def test_the_job_copies_acls_by_mm2s_rules_and_a_second_run_changes_nothing():
    plane, _, b = control(source_acls=[acl("orders", "ALL"), acl("orders", "WRITE"), acl("orders-eu", "READ", "DENY"),
                                       acl("orders", pattern="PREFIXED"), acl("payments")])
    run_acl_job(plane)
    wanted = {acl("A.orders"), acl("A.orders-eu", "READ", "DENY"), acl("A.orders", pattern="PREFIXED")}
    assert b.acls == wanted
    assert plane.acls.ledger.load() == wanted
    assert plane.acls.sync().create == frozenset() and b.acls == wanted


def test_an_acl_removed_at_the_source_goes_from_the_target_only_where_sparkmirror_made_it():
    user_made = acl("A.orders", "DESCRIBE")
    plane, a, b = control(source_acls=[acl("orders"), acl("orders", "DESCRIBE"), acl("orders-eu")],
                          target_acls=[user_made])
    run_acl_job(plane)
    assert plane.acls.ledger.load() == {acl("A.orders"), acl("A.orders-eu")}  # the DESCRIBE one existed already
    a.acls = {acl("orders-eu")}
    run_acl_job(plane)
    assert b.acls == {user_made, acl("A.orders-eu")}
    assert plane.acls.ledger.load() == {acl("A.orders-eu")}


def test_a_disabled_sync_is_not_a_job_that_runs():
    plane, _, _ = control("A->B.sync.topic.acls.enabled = false\n", source_acls=[acl("orders")])
    (job,) = [j for j in plane.jobs() if j.name == "sync topic ACLs"]
    assert not job.schedule.enabled


def test_a_source_without_authorizer_is_one_info_line_not_an_error(caplog: pytest.LogCaptureFixture):
    plane, a, b = control(target_acls=[])
    a.acls = None
    with caplog.at_level(logging.DEBUG, logger="sparkmirror.control.acl_sync"):
        run_acl_job(plane)
        run_acl_job(plane)
    infos = [r for r in caplog.records if r.levelno == logging.INFO]
    assert len(infos) == 1 and "no ACL authorizer is configured on cluster 'A'" in infos[0].message
    assert "A->B.sync.topic.acls.enabled = false" in infos[0].message
    assert b.acls == set()


def test_a_target_without_authorizer_is_one_warning(caplog: pytest.LogCaptureFixture):
    plane, _, b = control(source_acls=[acl("orders")])
    b.acls = None
    with caplog.at_level(logging.INFO, logger="sparkmirror.control.acl_sync"):
        run_acl_job(plane)
        run_acl_job(plane)
    warnings = [r.message for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["cluster 'B' has no ACL authorizer: 1 topic ACLs of 'A' are not synced by flow A->B"]


def test_a_refused_acl_fails_the_run_naming_it_after_the_others_are_created_and_recorded():
    plane, _, b = control(source_acls=[acl("orders"), acl("orders-eu")])
    b.refuse_acls.add(acl("A.orders-eu"))
    with pytest.raises(AdminOperationError, match=r"1 of 2 changes.*User:app READ on topic 'A.orders-eu'"):
        run_acl_job(plane)
    assert b.acls == {acl("A.orders")} and plane.acls.ledger.load() == {acl("A.orders")}


def test_a_live_change_of_the_topic_filter_applies_to_the_next_run():
    plane, _, b = control(source_acls=[acl("orders"), acl("payments")])
    run_acl_job(plane)
    assert b.acls == {acl("A.orders")}
    plane.flow = load(BASE.replace("A->B.topics = orders.*", "A->B.topics = orders.*, payments")).flow("A", "B")
    run_acl_job(plane)
    assert b.acls == {acl("A.orders"), acl("A.payments")}
