"""`plan`'s view of ACL sync: each ACL the target would get, marked create or exists, and what is left out."""

from __future__ import annotations

from tests.unit.fakes import load
from tests.unit.properties_text import A_TO_B_ORDERS

from sparkmirror.cli.render import acl_plan
from sparkmirror.control.acl_sync import NO_AUTHORIZER, AclPreview
from sparkmirror.control.acls import AclMapping, AclSyncPlan
from sparkmirror.model import TopicAcl

FLOW = load(A_TO_B_ORDERS).flow("A", "B")
READ = TopicAcl("LITERAL", "A.orders", "User:app", "*", "READ", "ALLOW")
DENY = TopicAcl("PREFIXED", "A.orders", "User:guest", "*", "ALL", "DENY")
WRITE = TopicAcl("LITERAL", "orders", "User:app", "*", "WRITE", "ALLOW")


def test_each_acl_is_marked_create_or_exists_and_what_is_left_out_says_why():
    preview = AclPreview(AclMapping(frozenset({READ, DENY}), ((WRITE, "ALLOW WRITE is never copied"),)),
                         AclSyncPlan(create=frozenset({DENY}), delete=frozenset()))
    assert acl_plan(FLOW, preview) == [
        "flow A->B: topic ACLs: 2 on B for A's",
        "  ALLOW User:app READ on topic 'A.orders' from host *  [exists]",
        "  DENY User:guest ALL on topics prefixed 'A.orders' from host *  [create]",
        "  not copied: ALLOW User:app WRITE on topic 'orders' from host *: ALLOW WRITE is never copied"]


def test_a_cluster_without_authorizer_is_named():
    assert acl_plan(FLOW, NO_AUTHORIZER) == ["flow A->B: topic ACLs: none synced, cluster A has no ACL authorizer"]
    preview = AclPreview(AclMapping(frozenset({READ})), AclSyncPlan(frozenset(), frozenset()), target_authorizer=False)
    assert acl_plan(FLOW, preview)[0] == ("flow A->B: topic ACLs: 1 on B for A's (not created: cluster B has no "
                                          "ACL authorizer)")
