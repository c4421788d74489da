"""Topic sync (MM2's refreshTopics and topic creation): observe both clusters, plan, apply.

The plan itself is pure (control/topics.py); this unit reads the clusters through ports and creates what
the target lacks: remote topics with the source's partitions and configs, more partitions for short ones,
and the flow's internal topics.
"""

from __future__ import annotations

import logging

from sparkmirror.config.model import FlowConfig
from sparkmirror.control.ports import TopicAdmin
from sparkmirror.control.topics import TopicPlan, plan_topics
from sparkmirror.errors import AdminOperationError
from sparkmirror.model import NewTopicSpec

logger = logging.getLogger(__name__)


def observe_plan(flow: FlowConfig, source: TopicAdmin, target: TopicAdmin) -> TopicPlan:
    """What a flow replicates and what the target needs first; reads both clusters, changes nothing."""
    source_topics, target_topics = source.topic_partitions(), target.topic_partitions()

    def plan(configs: dict | None = None) -> TopicPlan:
        return plan_topics(source_topics, target_topics, flow.topic_filter, flow.policy, target_alias=flow.target,
                           source_alias=flow.source, replication_factor=flow.replication_factor,
                           source_configs=configs, config_filter=flow.config_filter,
                           heartbeats_replication_enabled=flow.heartbeats_replication_enabled)

    first = plan()
    created = {spec.name for spec in first.create}
    new_sources = [s for s, r in first.remote_topics.items() if r in created]
    return plan(source.topic_configs(new_sources)) if new_sources else first


def apply_plan(flow: FlowConfig, target: TopicAdmin, plan: TopicPlan) -> None:
    """Create missing remote topics (and grow short ones) before any record is written to them."""
    failures = {**target.create_topics(list(plan.create)), **target.create_partitions(dict(plan.add_partitions))}
    errors = [e for e in failures.values() if e is not None]
    if errors:
        raise errors[0] if len(errors) == 1 else AdminOperationError(
            flow.target, "prepare remote topics", "; ".join(str(e) for e in errors))
    for spec in plan.create:
        logger.info("flow %s created remote topic %s partitions=%d configs=%s", flow.name, spec.name,
                    spec.partitions, dict(spec.configs))
    for name, total in plan.add_partitions.items():
        logger.info("flow %s grew remote topic %s to %d partitions", flow.name, name, total)


_COMPACT = {"cleanup.policy": "compact"}


def create_internal_topic(admin: TopicAdmin, name: str, replication_factor: int, rf_key: str) -> None:
    """One of MM2's internal topics (offset syncs, checkpoints, heartbeats): one compacted partition.

    `rf_key` is the setting that chose the replication factor, named when the cluster has fewer brokers.
    """
    spec = NewTopicSpec(name, 1, replication_factor, _COMPACT)
    error = admin.create_topics([spec], replication_factor_key=rf_key).get(spec.name)
    if error is not None:
        raise error
