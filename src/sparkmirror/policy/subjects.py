"""Pure: the subject a source registry's subject becomes on the target registry, for a flow's replicated topics.

Confluent's serializers name a topic's subjects by TopicNameStrategy, `<topic>-key` and `<topic>-value`; the copy
of a record lives in the remote topic, so its subjects follow the topic's name under the flow's replication policy
(`orders-value` on A is `A.orders-value` on B with the default policy). A subject of another strategy
(RecordNameStrategy's `com.acme.Order`, TopicRecordNameStrategy's `<topic>-com.acme.Order`) names a record type,
not a place: it is kept as it is, as Confluent's Replicator and Schema Linking keep it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

KEY_SUFFIX, VALUE_SUFFIX = "-key", "-value"


@dataclass(frozen=True)
class SubjectTopic:
    """A TopicNameStrategy subject: the topic it belongs to, and whether it is the key's or the value's."""

    topic: str
    is_key: bool

    @property
    def subject(self) -> str:
        return self.topic + (KEY_SUFFIX if self.is_key else VALUE_SUFFIX)


def topic_subject(subject: str, topics: Iterable[str]) -> SubjectTopic | None:
    """The replicated topic `subject` is named after (TopicNameStrategy), or None. `topics` are the flow's source
    topics: a subject `a-b-value` is the value's of topic `a-b` only when `a-b` is one of them."""
    for suffix, is_key in ((KEY_SUFFIX, True), (VALUE_SUFFIX, False)):
        if subject.endswith(suffix):
            topic = subject[: -len(suffix)]
            if topic in set(topics):
                return SubjectTopic(topic, is_key)
    return None


def target_subject(subject: str, topics: Iterable[str], remote_topic: Callable[[str], str]) -> str:
    """`subject`'s name on the target registry: a replicated topic's subjects follow `remote_topic(topic)`, every
    other subject keeps its name."""
    found = topic_subject(subject, topics)
    if found is None:
        return subject
    return SubjectTopic(remote_topic(found.topic), found.is_key).subject


def flow_subjects(subjects: Iterable[str], topics: Iterable[str]) -> list[str]:
    """The source registry's subjects that belong to the flow's topics (TopicNameStrategy), sorted: the ones a subject
    sync copies without being told their names."""
    replicated = set(topics)
    return sorted(s for s in subjects if topic_subject(s, replicated) is not None)


@dataclass(frozen=True)
class SubjectCopy:
    """A source subject of the flow's topics and its name on the target: its versions (oldest first), and those the
    target's subject holds already (by content: the target numbers versions on its own)."""

    source: str
    target: str
    versions: tuple[int, ...]
    on_target: frozenset[int]

    @property
    def missing(self) -> tuple[int, ...]:
        """The versions to register on the target, in order."""
        return tuple(v for v in self.versions if v not in self.on_target)
