"""MM2's internal topics (offset syncs, checkpoints, heartbeats) on one cluster, all on partition 0.

InternalTopicWriter writes already-encoded records; InternalTopicReader reads them back to the end, the role of
MM2's KafkaBasedLog, so a restarted task can rebuild its state from the topic.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, TopicPartition

from sparkmirror.errors import AdminOperationError
from sparkmirror.kafka.failures import (
    LEADERSHIP_CODES,
    UNREACHABLE_CODES,
    operation_error,
    unreachable_error,
    unreachable_hint,
)
from sparkmirror.kafka.produce import AcknowledgedProducer, DeliveryFailed, Message

_librdkafka_logger = logging.getLogger("sparkmirror.librdkafka")
FLUSH_TIMEOUT_S = 30.0
READ_TIMEOUT_S = 30.0

Header = tuple[str, bytes | None]
OutgoingRecord = tuple[bytes | None, bytes | None] | tuple[bytes | None, bytes | None, Sequence[Header]]
"""(key, value) or (key, value, headers), as InternalTopicWriter.write takes them."""


class InternalTopicWriter:
    """Acknowledged writes of already-encoded records; `write` returns once all are stored."""

    def __init__(self, alias: str, settings: Mapping[str, str]) -> None:
        self.alias = alias
        self._producer = AcknowledgedProducer(settings, defaults={"linger.ms": "0"})

    def write(self, topic: str, records: Iterable[OutgoingRecord]) -> int:
        """Write (key, value) or (key, value, headers) records to partition 0; returns how many."""
        messages = (Message(0, key, value, rest[0] if rest else None) for key, value, *rest in records)
        try:
            return self._producer.write(topic, messages, FLUSH_TIMEOUT_S)
        except KafkaException as exc:
            raise self._error(topic, exc) from None
        except DeliveryFailed as failed:
            if failed.errors:
                raise self._error(topic, failed.errors[0]) from None
            raise AdminOperationError(self.alias, f"write to '{topic}'", f"{failed.remaining} records not "
                                      f"acknowledged within {FLUSH_TIMEOUT_S:.0f} s") from None

    def _error(self, topic: str, failure: KafkaError | KafkaException) -> AdminOperationError:
        grant = f"Grant WRITE on '{topic}' to the principal used for cluster '{self.alias}'"
        # A principal with WRITE on no topic at all is refused the idempotent producer's id (KIP-679) first.
        return operation_error(self.alias, f"write to '{topic}'", failure, {
            KafkaError.TOPIC_AUTHORIZATION_FAILED: grant,
            KafkaError.CLUSTER_AUTHORIZATION_FAILED: f"{grant} (or IDEMPOTENT_WRITE on the cluster)"})

    def close(self) -> None:
        self._producer.close(FLUSH_TIMEOUT_S)


@dataclass(frozen=True)
class InternalRecord:
    """One record of an internal topic, as read back from partition 0."""

    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]
    timestamp_ms: int


# Partition 0 of a topic that does not exist: librdkafka answers at once from metadata.
_MISSING_TOPIC_CODES = frozenset({KafkaError._UNKNOWN_PARTITION, KafkaError.UNKNOWN_TOPIC_OR_PART,
                                  KafkaError._UNKNOWN_TOPIC})


# librdkafka looks up the coordinator of any group.id, even one never joined; a principal without rights on the
# throwaway group is told so, and still reads the partitions it assigned itself (as Java's consumer does with no
# group.id at all, MM2's KafkaBasedLog readers): so these are not read failures.
_UNUSED_GROUP_CODES = frozenset({KafkaError.GROUP_AUTHORIZATION_FAILED})


class InternalTopicReader:
    """Reads partition 0 of one topic incrementally; each `read_new` returns what was appended since the last.

    It never joins or commits to a group: the throwaway group.id exists only because librdkafka requires one, and
    its principal needs no ACL on it. A topic that does not exist yet reads as empty, and is read from its
    beginning once it appears.
    """

    def __init__(self, alias: str, settings: Mapping[str, str], topic: str) -> None:
        self.alias = alias
        self.topic = topic
        self.bootstrap_servers = settings.get("bootstrap.servers", "")
        self._consumer = Consumer({
            "socket.connection.setup.timeout.ms": "5000", **settings,
            "group.id": f"sparkmirror-internal-reader-{uuid.uuid4().hex}", "enable.auto.commit": "false",
            "enable.auto.offset.store": "false", "enable.partition.eof": "false", "auto.offset.reset": "earliest",
            "logger": _librdkafka_logger})
        self._next: int | None = None  # offset to read next; None until partition 0 is assigned

    def read_new(self, timeout_s: float = READ_TIMEOUT_S) -> list[InternalRecord]:
        """Records from the last call's end (first call: the beginning) to the high watermark seen now."""
        deadline = time.monotonic() + timeout_s
        watermarks = self._watermarks(timeout_s)
        if watermarks is None:
            return []
        start, end = watermarks
        if self._next is None:
            self._consumer.assign([TopicPartition(self.topic, 0, OFFSET_BEGINNING)])
            self._next = 0
        self._next = max(self._next, start)  # what retention deleted is gone: nothing to wait for
        out: list[InternalRecord] = []
        while self._next < end:
            if time.monotonic() > deadline:
                raise AdminOperationError(self.alias, f"read '{self.topic}'",
                                          f"offsets {self._next} to {end} of partition 0 not read within "
                                          f"{timeout_s:.0f} s", unreachable_hint(self.alias, self.bootstrap_servers))
            for msg in self._consumer.consume(num_messages=5000, timeout=0.5):
                if msg.error() and msg.error().code() in _UNUSED_GROUP_CODES:
                    continue
                if msg.error():
                    raise self._error(msg.error())
                out.append(InternalRecord(msg.offset(), msg.key(), msg.value(), tuple(msg.headers() or ()),
                                          msg.timestamp()[1]))
                self._next = msg.offset() + 1
            # The position also moves past what no message shows: compacted gaps, transaction markers.
            position = self._consumer.position([TopicPartition(self.topic, 0)])[0].offset
            self._next = max(self._next, position)
        return out

    def _watermarks(self, timeout_s: float) -> tuple[int, int] | None:
        """(low, high) offsets of partition 0; None when the topic does not exist.

        A topic created a moment ago (the checkpointer creates its own just before reading it) may have no
        leader its broker knows of yet: NOT_LEADER and LEADER_NOT_AVAILABLE are retried until the deadline.
        """
        partition = TopicPartition(self.topic, 0)
        deadline = time.monotonic() + timeout_s
        asked_cluster = False
        while True:
            try:
                return self._consumer.get_watermark_offsets(partition, timeout=max(deadline - time.monotonic(), 0.1))
            except KafkaException as exc:
                err = exc.args[0]
                if err.code() in _MISSING_TOPIC_CODES:
                    # librdkafka may have cached it as missing before it was created: ask the cluster once.
                    if asked_cluster or not self._exists(timeout_s):
                        return None
                    asked_cluster = True
                elif err.code() not in LEADERSHIP_CODES or time.monotonic() > deadline:
                    raise self._error(err) from None
                else:
                    time.sleep(0.1)

    def _exists(self, timeout_s: float) -> bool:
        """Whether partition 0 of the topic exists, asked of the cluster rather than librdkafka's cache.

        A topic the principal may not describe looks missing to librdkafka: that is a failure naming the grant,
        not an empty topic (offset syncs or checkpoints that silently never appear)."""
        metadata = self._consumer.list_topics(self.topic, timeout=timeout_s).topics.get(self.topic)
        if metadata is not None and metadata.error is not None \
                and metadata.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:
            raise self._error(metadata.error)
        return metadata is not None and metadata.error is None and 0 in metadata.partitions

    def _error(self, err: KafkaError) -> Exception:
        if err.code() in UNREACHABLE_CODES:
            return unreachable_error(self.alias, self.bootstrap_servers, err, f"reading '{self.topic}'")
        return operation_error(self.alias, f"read '{self.topic}'", err, {
            KafkaError.TOPIC_AUTHORIZATION_FAILED:
                f"Grant READ and DESCRIBE on '{self.topic}' to the principal used for cluster '{self.alias}'"})

    def close(self) -> None:
        self._consumer.close()  # nothing to commit: auto-commit is off and the group was never joined

    def __enter__(self) -> InternalTopicReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_internal_topic(alias: str, settings: Mapping[str, str], topic: str,
                        timeout_s: float = READ_TIMEOUT_S) -> list[InternalRecord]:
    """Every record of partition 0 of `topic`, in order, up to the end seen at the start; [] if it does not exist."""
    with InternalTopicReader(alias, settings, topic) as reader:
        return reader.read_new(timeout_s)
