"""One run of topic config sync (MM2's syncTopicConfigs): observe both clusters, plan, apply."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping

from sparkmirror.control.configs import ConfigAlteration, plan_topic_config_sync
from sparkmirror.control.ports import TopicAdmin
from sparkmirror.errors import AdminOperationError
from sparkmirror.policy.filters import ConfigPropertyFilter

logger = logging.getLogger(__name__)


def sync_topic_configs(source: TopicAdmin, target: TopicAdmin, remote_topics: Mapping[str, str],
                       config_filter: ConfigPropertyFilter) -> dict[str, tuple[ConfigAlteration, ...]]:
    """Make each existing remote topic's configs follow its source topic; returns what was applied.

    `remote_topics` maps source topics to remote topics. Topics missing on either side are skipped (topic
    sync creates them). Every topic is attempted; if any failed, AdminOperationError lists all of them.
    """
    started = time.monotonic()
    source_existing = source.topic_partitions()
    target_existing = target.topic_partitions()
    pairs = {t: r for t, r in remote_topics.items() if t in source_existing and r in target_existing}
    source_configs = source.topic_configs(sorted(pairs))
    target_configs = target.topic_configs(sorted(pairs.values()))
    plan = plan_topic_config_sync(source_configs, target_configs, pairs, config_filter)
    results = target.alter_topic_configs(plan)
    failures = {topic: error for topic, error in results.items() if error is not None}
    applied = {topic: ops for topic, ops in plan.items() if topic not in failures}
    for topic, ops in applied.items():
        logger.info("altered topic configs topic=%s target=%s changes=%s", topic, target.alias,
                    ", ".join(f"{a.op} {a.name}" + (f"={a.value}" if a.op == "SET" else "") for a in ops))
    for topic, error in failures.items():
        logger.warning("could not alter topic configs topic=%s target=%s: %s", topic, target.alias, error)
    logger.debug("synced topic configs source=%s target=%s topics=%d altered=%d failed=%d took_ms=%d",
                 source.alias, target.alias, len(pairs), len(applied), len(failures),
                 (time.monotonic() - started) * 1000)
    if failures:
        raise AdminOperationError(
            target.alias, f"sync topic configs from '{source.alias}' ({len(failures)} of {len(plan)} topics)",
            "; ".join(str(error) for _, error in sorted(failures.items())))
    return applied
