"""Which topics and groups a flow replicates: MM2's DefaultTopicFilter and DefaultGroupFilter (include and
exclude regex lists)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field


def _compile(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{p})" for p in patterns))


@dataclass(frozen=True)
class TopicFilter:
    """A topic replicates when it fully matches an include pattern and no exclude pattern."""

    include: tuple[str, ...]
    exclude: tuple[str, ...] = ()
    _include_re: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _exclude_re: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_include_re", _compile(self.include))
        object.__setattr__(self, "_exclude_re", _compile(self.exclude))

    def should_replicate_topic(self, topic: str) -> bool:
        if self._include_re is None or not self._include_re.fullmatch(topic):
            return False
        return not (self._exclude_re is not None and self._exclude_re.fullmatch(topic))


class GroupFilter(TopicFilter):
    """Consumer groups whose offsets are checkpointed: the same full-match rule, on group ids."""

    def should_replicate_group(self, group: str) -> bool:
        return self.should_replicate_topic(group)


@dataclass(frozen=True)
class ConfigPropertyFilter:
    """MM2's DefaultConfigPropertyFilter: which topic configs are copied to remote topics.

    A config is copied unless it fully matches `exclude`; a config at its default value is copied only
    when `use.defaults.from = source` (otherwise the target's own default applies).
    """

    exclude: tuple[str, ...] = ()
    use_defaults_from: str = "target"
    _exclude_re: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_exclude_re", _compile(self.exclude))

    def should_replicate_config_property(self, name: str) -> bool:
        return not (self._exclude_re is not None and self._exclude_re.fullmatch(name))

    def should_replicate_source_default(self, name: str) -> bool:
        return self.use_defaults_from == "source"
