"""Topic ACL mapping (MM2's syncTopicAcls rules and sparkmirror's prefixes) and the incremental sync plan."""

from __future__ import annotations

from sparkmirror.control.acls import AclSyncPlan, map_topic_acls, plan_acl_sync
from sparkmirror.model import TopicAcl


def acl(name: str, operation: str = "READ", permission: str = "ALLOW", pattern: str = "LITERAL",
        principal: str = "User:app") -> TopicAcl:
    return TopicAcl(pattern, name, principal, "*", operation, permission)


def mapped(acls, replicated=("orders", "orders-eu", "payments"), rename=lambda t: f"A.{t}"):
    return map_topic_acls(acls, lambda t: t in replicated, rename, replicated)


def test_literal_acls_of_replicated_topics_are_renamed_and_kept_as_they_are():
    result = mapped([acl("orders"), acl("orders", "DESCRIBE"), acl("payments", "READ", "DENY")])
    assert result.remote == {acl("A.orders"), acl("A.orders", "DESCRIBE"), acl("A.payments", "READ", "DENY")}
    assert result.skipped == ()


def test_allow_write_is_never_copied_and_deny_write_is():
    result = mapped([acl("orders", "WRITE"), acl("orders", "WRITE", "DENY")])
    assert result.remote == {acl("A.orders", "WRITE", "DENY")}
    assert [(a, reason.split(":")[0]) for a, reason in result.skipped] == [
        (acl("orders", "WRITE"), "ALLOW WRITE is never copied")]


def test_allow_all_is_downgraded_to_read_and_deny_all_is_kept():
    result = mapped([acl("orders", "ALL"), acl("payments", "ALL", "DENY")])
    assert result.remote == {acl("A.orders", "READ"), acl("A.payments", "ALL", "DENY")}


def test_topics_the_flow_does_not_replicate_and_the_wildcard_are_left_out_with_the_reason():
    result = mapped([acl("secrets"), acl("*")])
    assert result.remote == frozenset()
    assert dict(result.skipped) == {
        acl("secrets"): "the flow does not replicate this topic",
        acl("*"): "the wildcard '*' is not copied: it would grant every topic of the target"}


def test_prefixed_acls_are_copied_with_the_prefix_renamed_when_a_replicated_topic_has_it():
    result = mapped([acl("orders", pattern="PREFIXED"), acl("audit-", pattern="PREFIXED")])
    assert result.remote == {acl("A.orders", pattern="PREFIXED")}
    assert dict(result.skipped) == {acl("audit-", pattern="PREFIXED"): "no topic the flow replicates has this prefix"}


def test_no_prefix_is_copied_when_remote_topics_keep_their_names():
    result = mapped([acl("orders", pattern="PREFIXED"), acl("orders")], rename=lambda t: t)
    assert result.remote == {acl("orders")}
    assert "identity policy" in dict(result.skipped)[acl("orders", pattern="PREFIXED")]


def test_the_plan_creates_what_is_missing_and_deletes_only_what_sparkmirror_created():
    wanted = {acl("A.orders"), acl("A.payments")}
    user_made = acl("A.orders", "DESCRIBE")  # on the target, not wanted, not ours: kept
    ours_gone_at_source = acl("A.refunds")
    on_target = {acl("A.orders"), user_made, ours_gone_at_source}
    plan = plan_acl_sync(wanted, on_target, ledger={ours_gone_at_source, acl("A.orders")})
    assert plan == AclSyncPlan(create=frozenset({acl("A.payments")}), delete=frozenset({ours_gone_at_source}))


def test_a_second_run_changes_nothing():
    wanted = {acl("A.orders")}
    first = plan_acl_sync(wanted, set(), ledger=set())
    ledger = first.ledger_after(set(), set(), created=first.create, deleted=())
    assert ledger == wanted
    assert plan_acl_sync(wanted, wanted, ledger) == AclSyncPlan(frozenset(), frozenset())


def test_the_ledger_keeps_only_ours_that_the_target_still_holds():
    ours, removed_by_someone, failed = acl("A.orders"), acl("A.old"), acl("A.new")
    plan = AclSyncPlan(create=frozenset({acl("A.payments"), failed}), delete=frozenset())
    after = plan.ledger_after({ours, removed_by_someone}, on_target={ours}, created={acl("A.payments")},
                              deleted=())
    assert after == {ours, acl("A.payments")}
