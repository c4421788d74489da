"""Pure planning of topic config sync (MM2's `sync.topic.configs`): which remote topic configs to alter.

MM2 sends every filtered source config as an incremental SET or DELETE on each run; we send only those
that would change the target, so a run with nothing to do sends nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from sparkmirror.model import TopicConfigEntry
from sparkmirror.policy.filters import ConfigPropertyFilter


@dataclass(frozen=True, slots=True)
class ConfigAlteration:
    """One incremental config change on a remote topic: SET `name` to `value`, or DELETE it (value None).

    DELETE removes the topic-level override, so the target cluster's own default applies again.
    """

    name: str
    op: Literal["SET", "DELETE"]
    value: str | None = None


def plan_config_alterations(source: Sequence[TopicConfigEntry], target: Sequence[TopicConfigEntry],
                            config_filter: ConfigPropertyFilter) -> tuple[ConfigAlteration, ...]:
    """The alterations that make a remote topic's configs follow its source topic (MM2's targetConfig).

    Every source config the filter lets through is mirrored: one at its default on the source is reset to
    the target's default (DELETE) unless `use.defaults.from = source`, in which case the source default
    is copied (SET) like any other value. Excluded configs are never planned, so their target-side values
    are left alone. An alteration is planned only when it changes the target: a SET when the target value
    differs or is not reported, a DELETE only when the target reports a non-default value.
    """
    current = {e.name: e for e in target}
    out: list[ConfigAlteration] = []
    for entry in sorted(source, key=lambda e: e.name):
        if not config_filter.should_replicate_config_property(entry.name):
            continue
        existing = current.get(entry.name)
        if entry.is_default and not config_filter.should_replicate_source_default(entry.name):
            if existing is not None and not existing.is_default:
                out.append(ConfigAlteration(entry.name, "DELETE"))
        elif existing is None or existing.value != entry.value:
            out.append(ConfigAlteration(entry.name, "SET", entry.value))
    return tuple(out)


def plan_topic_config_sync(source_configs: Mapping[str, Sequence[TopicConfigEntry]],
                           target_configs: Mapping[str, Sequence[TopicConfigEntry]],
                           remote_topics: Mapping[str, str],
                           config_filter: ConfigPropertyFilter) -> dict[str, tuple[ConfigAlteration, ...]]:
    """Alterations per remote topic for a flow; `remote_topics` maps each source topic to its remote topic.

    Topics whose source or remote configs were not observed (e.g. the remote topic does not exist yet)
    are skipped, and so are remote topics that need no change.
    """
    plan: dict[str, tuple[ConfigAlteration, ...]] = {}
    for topic, remote in sorted(remote_topics.items()):
        if topic not in source_configs or remote not in target_configs:
            continue
        alterations = plan_config_alterations(source_configs[topic], target_configs[remote], config_filter)
        if alterations:
            plan[remote] = alterations
    return plan
