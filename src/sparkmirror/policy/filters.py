"""Which topics a flow replicates: MM2's DefaultTopicFilter (include and exclude regex lists)."""

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
