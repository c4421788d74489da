"""One flow's topic ACL sync (MM2's syncTopicAcls, made incremental): observe both clusters, plan, apply,
and record in the ledger what sparkmirror created. The rules are control/acls.py's."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from sparkmirror.config import keys
from sparkmirror.config.model import FlowConfig
from sparkmirror.control.acls import AclMapping, AclSyncPlan, map_topic_acls, plan_acl_sync
from sparkmirror.control.ports import AclLedger, TopicAdmin
from sparkmirror.errors import AdminOperationError
from sparkmirror.model import TopicAcl
from sparkmirror.policy.replication import should_replicate_topic

logger = logging.getLogger(__name__)


class MemoryLedger:
    """An AclLedger that lasts as long as the process (`plan`, unit tests)."""

    def __init__(self, acls: frozenset[TopicAcl] = frozenset()) -> None:
        self.acls = acls

    def load(self) -> frozenset[TopicAcl]:
        return self.acls

    def save(self, acls: frozenset[TopicAcl]) -> None:
        self.acls = acls


@dataclass(frozen=True)
class AclPreview:
    """What a run would do: the mapping of the source's ACLs and the plan against the target. `source_authorizer`
    and `target_authorizer` say whether each cluster has one (without, there is nothing to list or create)."""

    mapping: AclMapping
    plan: AclSyncPlan
    source_authorizer: bool = True
    target_authorizer: bool = True
    on_target: frozenset[TopicAcl] = frozenset()  # the target's topic ACLs when observed
    ledger: frozenset[TopicAcl] = frozenset()  # what sparkmirror had created, as the plan read it


NO_AUTHORIZER = AclPreview(AclMapping(frozenset()), AclSyncPlan(frozenset(), frozenset()), False, False)


class AclSync:
    """Keeps the topic ACLs of a flow's remote topics in step with the source's. Called from one thread.

    `flow` is read on each run, so a live change of the topic filter applies to the next one.
    """

    def __init__(self, flow: Callable[[], FlowConfig], source: TopicAdmin, target: TopicAdmin, ledger: AclLedger,
                 remote_topics: Callable[[], Mapping[str, str]]) -> None:
        self._flow = flow
        self.source = source
        self.target = target
        self.ledger = ledger
        self._remote_topics = remote_topics
        self._told: set[str] = set()  # clusters whose missing authorizer was already logged

    def preview(self) -> AclPreview:
        """Observe both clusters and plan; changes nothing (the `plan` command shows this)."""
        return self._observe()

    def sync(self) -> AclSyncPlan:
        """One run: create what the target lacks, delete what sparkmirror created and the source no longer
        grants; returns what was applied. Failures are raised together once the rest is done and recorded."""
        preview = self._observe()
        name = self._flow().name
        if not preview.source_authorizer:
            self._tell_once(self.source.alias, f"no ACL authorizer is configured on cluster '{self.source.alias}', "
                            f"so flow {name} syncs no topic ACLs; set '{name}."
                            f"{keys.SYNC_TOPIC_ACLS}.enabled = false' to stop checking")
            return preview.plan
        if not preview.target_authorizer:
            if preview.mapping.remote:
                self._tell_once(self.target.alias, f"cluster '{self.target.alias}' has no ACL authorizer: "
                                f"{len(preview.mapping.remote)} topic ACLs of '{self.source.alias}' are not synced "
                                f"by flow {name}", level=logging.WARNING)
            return preview.plan
        plan = preview.plan
        created = self.target.create_acls(plan.create)
        deleted = self.target.delete_acls(plan.delete)
        done_create = {a for a, error in created.items() if error is None}
        done_delete = {a for a, error in deleted.items() if error is None}
        after = plan.ledger_after(preview.ledger, preview.on_target, done_create, done_delete)
        if after != preview.ledger:
            self.ledger.save(after)
        for acl in sorted(done_create):
            logger.info("created topic ACL flow=%s target=%s acl=%s", name, self.target.alias, acl)
        for acl in sorted(done_delete):
            logger.info("deleted topic ACL flow=%s target=%s acl=%s (the source no longer grants it)",
                        name, self.target.alias, acl)
        failures = [str(e) for e in (*created.values(), *deleted.values()) if e is not None]
        if failures:
            raise AdminOperationError(self.target.alias, f"sync topic ACLs from '{self.source.alias}' "
                                      f"({len(failures)} of {len(plan.create) + len(plan.delete)} changes)",
                                      "; ".join(failures))
        return AclSyncPlan(frozenset(done_create), frozenset(done_delete))

    def _observe(self) -> AclPreview:
        flow = self._flow()
        source_acls = self.source.topic_acls()
        if source_acls is None:
            return NO_AUTHORIZER
        policy = flow.policy
        mapping = map_topic_acls(
            source_acls,
            lambda topic: should_replicate_topic(topic, flow.topic_filter, policy, flow.target,
                                                 flow.heartbeats_replication_enabled),
            lambda topic: policy.format_remote_topic(flow.source, topic), self._remote_topics().keys())
        on_target = self.target.topic_acls()
        if on_target is None:
            return AclPreview(mapping, AclSyncPlan(frozenset(), frozenset()), target_authorizer=False)
        ledger = self.ledger.load()
        return AclPreview(mapping, plan_acl_sync(mapping.remote, on_target, ledger), on_target=on_target, ledger=ledger)

    def _tell_once(self, alias: str, message: str, level: int = logging.INFO) -> None:
        if alias not in self._told:
            self._told.add(alias)
            logger.log(level, message)
        else:
            logger.debug(message)
