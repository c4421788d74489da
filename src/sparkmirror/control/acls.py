"""Pure planning of topic ACL sync (MM2's `sync.topic.acls`): which ACLs the target should hold, and what to
create or delete there to get them.

MM2's rules (MirrorSourceConnector.syncTopicAcls): LITERAL topic ACLs of topics the flow replicates, ALLOW
WRITE never copied (only sparkmirror writes remote topics), ALLOW ALL downgraded to ALLOW READ, DENY entries
kept as they are, the resource renamed to the remote topic. MM2 only ever creates.

Beyond MM2, both safe by construction:
- PREFIXED topic ACLs are copied with the prefix renamed (`ord` on A -> `A.ord` on B), when a topic the flow
  replicates has that prefix. A policy that keeps names (identity) would give the prefix to the target's own
  topics too, so there they are not copied.
- The sync is incremental: what is missing is created, and an ACL is deleted from the target only when
  sparkmirror created it (the ledger) and the source no longer grants it.

The LITERAL wildcard `*` (every topic) is not copied: MM2 would create it on a topic literally named `A.*`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, replace

from sparkmirror.model import TopicAcl

LITERAL, PREFIXED = "LITERAL", "PREFIXED"
ALLOW = "ALLOW"


@dataclass(frozen=True)
class AclMapping:
    """The target ACLs a flow's source ACLs map to, and each source ACL left out with the reason."""

    remote: frozenset[TopicAcl]
    skipped: tuple[tuple[TopicAcl, str], ...] = ()


def map_topic_acls(source_acls: Iterable[TopicAcl], replicates: Callable[[str], bool],
                   remote_name: Callable[[str], str], replicated_topics: Collection[str]) -> AclMapping:
    """The target's ACLs for `source_acls`: `replicates(topic)` is the flow's shouldReplicateTopic,
    `remote_name(topic)` its remote topic name, `replicated_topics` the source topics it replicates now."""
    remote: set[TopicAcl] = set()
    skipped: list[tuple[TopicAcl, str]] = []
    for acl in sorted(set(source_acls)):
        reason = _why_not_copied(acl, replicates, remote_name, replicated_topics)
        if reason:
            skipped.append((acl, reason))
            continue
        operation = "READ" if (acl.permission, acl.operation) == (ALLOW, "ALL") else acl.operation
        remote.add(replace(acl, name=remote_name(acl.name), operation=operation))
    return AclMapping(frozenset(remote), tuple(skipped))


def _why_not_copied(acl: TopicAcl, replicates: Callable[[str], bool], remote_name: Callable[[str], str],
                    replicated_topics: Collection[str]) -> str:
    if (acl.permission, acl.operation) == (ALLOW, "WRITE"):
        return "ALLOW WRITE is never copied: only the replication writes remote topics"
    if acl.pattern_type == LITERAL:
        if acl.name == "*":
            return "the wildcard '*' is not copied: it would grant every topic of the target"
        return "" if replicates(acl.name) else "the flow does not replicate this topic"
    if acl.pattern_type == PREFIXED:
        if remote_name(acl.name) == acl.name:
            return ("a prefix is not copied when remote topics keep their names (identity policy): it would "
                    "also grant the target's own topics")
        if not any(topic.startswith(acl.name) for topic in replicated_topics):
            return "no topic the flow replicates has this prefix"
        return ""
    return f"{acl.pattern_type} pattern: only LITERAL and PREFIXED topic ACLs are copied"


@dataclass(frozen=True)
class AclSyncPlan:
    """What one run of ACL sync does on the target: create what is missing, delete what sparkmirror created
    and the source no longer grants."""

    create: frozenset[TopicAcl]
    delete: frozenset[TopicAcl]

    def ledger_after(self, ledger: Collection[TopicAcl], on_target: Collection[TopicAcl],
                     created: Collection[TopicAcl], deleted: Collection[TopicAcl]) -> frozenset[TopicAcl]:
        """The ACLs sparkmirror has created and the target still holds, once `created` and `deleted` (the
        parts of this plan that succeeded) are applied. One removed by someone else leaves the ledger; if it
        is still wanted it is created again, and recorded again."""
        return frozenset((set(ledger) & set(on_target)) - set(deleted) | set(created))


def plan_acl_sync(wanted: Collection[TopicAcl], on_target: Collection[TopicAcl],
                  ledger: Collection[TopicAcl]) -> AclSyncPlan:
    """Create each wanted ACL the target lacks; delete one only if it is in the ledger (sparkmirror created
    it), no longer wanted, and still on the target. ACLs others made on the target are never touched."""
    wanted, on_target = frozenset(wanted), frozenset(on_target)
    return AclSyncPlan(create=wanted - on_target, delete=(frozenset(ledger) - wanted) & on_target)
