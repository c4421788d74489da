"""ConsumerGroups: the consumer-group admin calls checkpointing needs, on one cluster alias.

Kept apart from ClusterAdmin (topics, configs) so each façade stays small; errors are built the same way,
naming the operation, the cluster and, where known, the fix. Committed offsets are read by short-lived consumers
of each group, not by the admin client, which librdkafka crashes on (see ConsumerGroups._fetch_committed).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

from confluent_kafka import (
    Consumer,
    ConsumerGroupTopicPartitions,
    ConsumerGroupType,
    KafkaError,
    KafkaException,
    TopicPartition,
)

from sparkmirror.errors import AdminOperationError
from sparkmirror.kafka.connection import ANSWER_BACKSTOP_S, CALL_TIMEOUT_S, AdminConnection
from sparkmirror.kafka.failures import UNREACHABLE_CODES, kafka_error, operation_error

__all__ = ["ConsumerGroups", "GroupState", "GroupOffsets"]

GroupOffsets = dict[tuple[str, int], tuple[int, str]]
"""(topic, partition) -> (committed offset, commit metadata); metadata is "" when none was given."""

# What Kafka 4.3 answers an admin offset commit (no member id, generation -1) for a group with members, for
# classic and consumer-protocol groups alike (GroupMetadataManager only accepts such commits while EMPTY).
_GROUP_HAS_MEMBERS = KafkaError.UNKNOWN_MEMBER_ID
_COORDINATOR_MOVING = frozenset({KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_NOT_AVAILABLE,
                                 KafkaError.COORDINATOR_LOAD_IN_PROGRESS})
_UNSUPPORTED_CODES = frozenset({KafkaError._UNSUPPORTED_FEATURE, KafkaError.UNSUPPORTED_VERSION})
# Share and streams groups have no consumer offsets to mirror.
_CONSUMER_GROUP_TYPES = {ConsumerGroupType.CLASSIC, ConsumerGroupType.CONSUMER}

MAX_CONCURRENT_GROUPS = 8
"""How many groups' committed offsets are read at once (a consumer, so a few librdkafka threads, each)."""
_OFFSET_READER = {"enable.auto.commit": "false", "isolation.level": "read_uncommitted"}
"""What the consumers reading committed offsets are set to, over the cluster's settings (see _fetch_committed)."""
_CLOSE_BACKSTOP_S = 5.0
"""How much longer than the call's deadline to wait for a consumer to close once it has its answer."""


@dataclass(frozen=True)
class GroupState:
    """A group's state as Kafka names it (EMPTY, STABLE, DEAD, ...) and how many members it has."""

    state: str
    members: int

    @property
    def active(self) -> bool:
        """True while consumers are in the group, when Kafka refuses to alter its offsets."""
        return self.members > 0


class ConsumerGroups(AdminConnection):
    """List, describe, read and set consumer-group offsets on one cluster, named by alias in every error."""

    def __init__(self, alias: str, settings: Mapping[str, str]) -> None:
        super().__init__(alias, settings)
        self._committers: dict[str, Consumer] = {}  # group -> the consumer that commits its offsets (commit())

    def list_groups(self, timeout_s: float = CALL_TIMEOUT_S) -> list[str]:
        """Ids of every consumer group (classic and consumer protocol) this principal may describe, sorted.

        Share and streams groups are left out where the broker can filter by type (Kafka 3.8 and newer);
        older brokers refuse the filter and have no such groups, so they are asked without it.
        """
        return sorted({listing.group_id for listing in self._listings(timeout_s)})

    def states(self, groups: Sequence[str], timeout_s: float = CALL_TIMEOUT_S) -> dict[str, str]:
        """Each group's state as Kafka names it (EMPTY, STABLE, ...); DEAD for a group the cluster does not have.

        From the listing every broker answers, not DescribeConsumerGroups: librdkafka's coordinator-targeted admin
        calls can abort the process when the coordinator's connection drops during one (see
        kafka/group_describer.py), and a long-running process asks this every group sync, through target restarts.
        """
        wanted = set(groups)
        listed = {listing.group_id: _state_name(listing.state) for listing in self._listings(timeout_s)
                  if listing.group_id in wanted}
        return {group: listed.get(group, "DEAD") for group in groups}

    def workers_state(self, group: str, timeout_s: float = CALL_TIMEOUT_S) -> tuple[str, int]:
        """The state (EMPTY, STABLE, ...; DEAD: no such group) and member count of a Connect cluster's group, such
        as dedicated MM2's workers. Both listings above leave out groups of the `connect` protocol, and describing
        one as a consumer group is refused; librdkafka's older ListGroups and DescribeGroups call returns any."""
        with warnings.catch_warnings():  # deprecated in favour of the consumer-group calls, which cannot do this
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                found = self._admin.list_groups(group=group, timeout=timeout_s)
            except KafkaException as exc:
                raise self._failure(exc, f"describe group '{group}'", group) from None
        for listed in found:
            if listed.id == group and listed.error is None:
                return str(listed.state or "DEAD").upper(), len(listed.members or ())
            if listed.id == group and listed.error.code() != KafkaError.GROUP_ID_NOT_FOUND:
                raise self._error(f"describe group '{group}'", listed.error, group)
        return "DEAD", 0

    def _listings(self, timeout_s: float) -> list[Any]:
        """The listing of every consumer group (see list_groups), with its state."""
        result = self._list(timeout_s, _CONSUMER_GROUP_TYPES)
        if any(e.code() in _UNSUPPORTED_CODES for e in result.errors):
            result = self._list(timeout_s, None)
        if result.errors:
            # A broker that did not answer: a partial list would make its groups look deleted, so fail.
            raise self._error("list consumer groups", result.errors[0])
        return list(result.valid)

    def _list(self, timeout_s: float, types: set[ConsumerGroupType] | None) -> Any:
        kwargs: dict[str, Any] = {"types": types} if types else {}
        future = self._admin.list_consumer_groups(request_timeout=timeout_s, **kwargs)
        return self._wait(future, "list consumer groups", timeout_s)

    def committed(self, groups: Sequence[str], partitions: Collection[tuple[str, int]] | None = None,
                  timeout_s: float = CALL_TIMEOUT_S) -> dict[str, GroupOffsets]:
        """Committed offsets of each group on `partitions`, (topic, partition) pairs; a group without any there
        (or unknown) maps to {}. Only the asked partitions come back; None asks for every partition of every
        topic the cluster lists (one more metadata request).

        One consumer per group, up to `MAX_CONCURRENT_GROUPS` at a time, all within `timeout_s`.
        """
        unique = list(dict.fromkeys(groups))
        if not unique:
            return {}
        deadline = time.monotonic() + timeout_s
        asked = sorted(set(self._all_partitions(timeout_s) if partitions is None else partitions))
        if not asked:
            return {group: {} for group in unique}
        pool = ThreadPoolExecutor(max_workers=min(MAX_CONCURRENT_GROUPS, len(unique)),
                                  thread_name_prefix=f"committed-{self.alias}")
        try:
            futures = {group: pool.submit(self._fetch_committed, group, asked, deadline) for group in unique}
            return {group: self._committed_of(group, future, deadline, timeout_s)
                    for group, future in futures.items()}
        finally:
            # On success every consumer is closed already; after an error the others finish (and close their
            # consumers) on their own, within the deadline, without holding the caller up.
            pool.shutdown(wait=False, cancel_futures=True)

    def _fetch_committed(self, group: str, asked: list[tuple[str, int]], deadline: float) -> list[TopicPartition]:
        """The OffsetFetch answer for `group`, read by a consumer of the group that never joins it.

        Not AdminClient.list_consumer_group_offsets: librdkafka (2.16, still so on master: issue #5040) handles
        an OffsetFetch answer that asks for a new coordinator (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, ...:
        a coordinator moving in a rolling restart) by queueing an op on the handle's consumer group, which an
        admin client has none of: rd_kafka_cgrp_op dereferences NULL and the whole process dies of SIGSEGV. A
        consumer with the group.id has one, so it looks the coordinator up again and retries. It never
        subscribes, so it is no member; read_uncommitted asks for committed offsets without waiting for stable
        ones (as Kafka's Admin listConsumerGroupOffsets does by default, requireStable=false).
        """
        # The admin client's settings (security ones too) and callbacks: config/librdkafka gives the admin role only
        # keys every librdkafka client takes (and security), so a consumer takes them all without a warning.
        consumer = Consumer({**self._conf, "group.id": group, **_OFFSET_READER})
        try:
            while True:
                try:
                    return consumer.committed([TopicPartition(topic, partition) for topic, partition in asked],
                                              timeout=max(0.0, deadline - time.monotonic()))
                except KafkaException as exc:
                    consumer.poll(0)  # serves error_cb and the logger: a refused login, a protocol mismatch
                    err = kafka_error(exc)
                    # A coordinator that moves or is still loading (a new cluster's first group): ask again.
                    if err is None or err.code() not in _COORDINATOR_MOVING or time.monotonic() + 0.2 > deadline:
                        raise
                    time.sleep(0.2)
        finally:
            consumer.close()

    def _committed_of(self, group: str, future: Future[list[TopicPartition]], deadline: float,
                      timeout_s: float) -> GroupOffsets:
        operation = f"read committed offsets of group '{group}'"
        try:
            answer = future.result(timeout=max(0.0, deadline - time.monotonic()) + ANSWER_BACKSTOP_S
                                   + _CLOSE_BACKSTOP_S)
        except FutureTimeout:
            raise self._no_answer(operation, timeout_s) from None
        except KafkaException as exc:
            raise self._failure(exc, operation, group) from None
        offsets: GroupOffsets = {}
        for tp in answer:
            if tp.error is not None:
                raise self._error(f"{operation} for {tp.topic}-{tp.partition}", tp.error, group)
            if tp.offset >= 0:
                offsets[(tp.topic, tp.partition)] = (tp.offset, _metadata(tp))
        return offsets

    def _all_partitions(self, timeout_s: float) -> list[tuple[str, int]]:
        """Every partition of every topic the cluster's metadata lists (internal topics too)."""
        try:
            metadata = self._admin.list_topics(timeout=timeout_s)
        except KafkaException as exc:
            raise self._failure(exc, "list topics") from None
        return [(name, partition) for name, topic in metadata.topics.items() if topic.error is None
                for partition in topic.partitions]

    def describe(self, groups: list[str], timeout_s: float = CALL_TIMEOUT_S) -> dict[str, GroupState]:
        """State and member count of each group; a group that does not exist is DEAD with 0 members."""
        if not groups:
            return {}
        futures = self._admin.describe_consumer_groups(list(dict.fromkeys(groups)), request_timeout=timeout_s)
        deadline = time.monotonic() + timeout_s
        out: dict[str, GroupState] = {}
        for group, future in futures.items():
            # librdkafka 2.16 reports an unknown group as DEAD itself; a broker answering DescribeGroups v6
            # says GROUP_ID_NOT_FOUND instead, which means the same.
            description = self._wait(future, f"describe group '{group}'", max(0.0, deadline - time.monotonic()),
                                     group, ok_codes=(KafkaError.GROUP_ID_NOT_FOUND,))
            out[group] = (GroupState("DEAD", 0) if description is None
                          else GroupState(_state_name(description.state), len(description.members or ())))
        return out

    def alter_offsets(self, group: str, offsets: Mapping[tuple[str, int], tuple[int, str]],
                      timeout_s: float = CALL_TIMEOUT_S) -> None:
        """Set a group's committed offsets (creating the group if needed); the group must have no members."""
        if not offsets:
            return
        request = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, partition, offset, metadata=metadata)
                                                       for (topic, partition), (offset, metadata) in offsets.items()])
        operation = f"alter offsets of group '{group}'"
        future = self._admin.alter_consumer_group_offsets([request], request_timeout=timeout_s)[group]
        result = self._wait(future, operation, timeout_s, group)
        # The broker answers per partition; the future itself succeeds even when every partition was refused.
        for tp in result.topic_partitions or ():
            if tp.error is not None and tp.error.code() == _GROUP_HAS_MEMBERS:
                raise AdminOperationError(
                    self.alias, operation,
                    f"group '{group}' has active members on cluster '{self.alias}' ({tp.error.str()}, "
                    f"{tp.error.name()})",
                    "The group must be stopped first: Kafka only accepts offsets for a group without members, "
                    "so stop its consumers and retry")
            if tp.error is not None:
                raise self._error(f"{operation} for {tp.topic}-{tp.partition}", tp.error, group)

    def commit(self, group: str, offsets: Mapping[tuple[str, int], tuple[int, str]],
               timeout_s: float = CALL_TIMEOUT_S, keep: bool = True) -> None:
        """Commit offsets (with metadata) of a group without members, as a consumer of the group that never joins;
        Kafka refuses it while the group has members (UNKNOWN_MEMBER_ID), as it refuses altering its offsets.
        `keep`: keep the consumer for the group's next commit (a flow's positions); else it is closed after this one.

        Not AdminClient.alter_consumer_group_offsets, called often (every report of a flow): an answer asking for
        another coordinator (a broker restarting) makes librdkafka queue an op on the handle's consumer group, which
        an admin client has none of (see _fetch_committed); a consumer has one, so it finds the new coordinator. And
        no coordinator-targeted admin call, which can abort the process (kafka/group_describer.py).
        """
        if not offsets:
            return
        consumer = self._committers.get(group)
        if consumer is None:
            consumer = Consumer({**self._conf, "group.id": group, **_OFFSET_READER})
            if keep:
                self._committers[group] = consumer
        try:
            self._commit(consumer, group, offsets)
        finally:
            if not keep and self._committers.get(group) is not consumer:
                consumer.close()

    def _commit(self, consumer: Consumer, group: str, offsets: Mapping[tuple[str, int], tuple[int, str]]) -> None:
        operation = f"commit offsets of group '{group}'"
        try:
            answer = consumer.commit(offsets=[TopicPartition(topic, partition, offset, metadata=metadata)
                                              for (topic, partition), (offset, metadata) in offsets.items()],
                                     asynchronous=False)
        except KafkaException as exc:
            consumer.poll(0)
            raise self._failure(exc, operation, group) from None
        for tp in answer or ():
            if tp.error is not None:
                raise self._error(f"{operation} for {tp.topic}-{tp.partition}", tp.error, group)

    def close(self) -> None:
        """Close the consumers that committed offsets."""
        committers, self._committers = self._committers, {}
        for consumer in committers.values():
            consumer.close()

    def _wait(self, future: Future[Any], operation: str, timeout_s: float, group: str = "",
              ok_codes: tuple[int, ...] = ()) -> Any:
        """The future's result; None for an error in `ok_codes`; an AdminOperationError for any other."""
        try:
            return self._answer(future, timeout_s, operation)
        except KafkaException as exc:
            err = kafka_error(exc)
            if err is not None and err.code() in ok_codes:
                return None
            raise self._failure(exc, operation, group) from None

    def _failure(self, exc: KafkaException, operation: str, group: str = "") -> AdminOperationError:
        """The AdminOperationError for a failed call; for an unreachable cluster, raises the refused login or the
        protocol mismatch instead when that is why."""
        err = kafka_error(exc)
        if err is None:
            return operation_error(self.alias, operation, exc)
        if err.code() in UNREACHABLE_CODES:
            self._raise_if_refused()
        return self._error(operation, err, group)

    def _error(self, operation: str, err: KafkaError, group: str = "") -> AdminOperationError:
        """An AdminOperationError for a broker or client error code, with the fix when one is known."""
        return operation_error(self.alias, operation, err, {
            **dict.fromkeys(UNREACHABLE_CODES, self._unreachable_hint()),
            KafkaError.GROUP_AUTHORIZATION_FAILED:
                f"Grant this principal DESCRIBE and READ on group '{group}' of cluster '{self.alias}'"
                if group else f"Grant this principal DESCRIBE on the groups of cluster '{self.alias}'",
            KafkaError.TOPIC_AUTHORIZATION_FAILED:
                f"Grant this principal READ on the group's topics of cluster '{self.alias}'",
            KafkaError.UNKNOWN_TOPIC_OR_PART:
                f"Create the topic on cluster '{self.alias}' first, or leave its partitions out",
        })


def _state_name(state: object) -> str:
    """ConsumerGroupState enum (or whatever librdkafka passed through) as Kafka's upper-case name."""
    name = getattr(state, "name", None)
    return str(name if name is not None else state).upper()


def _metadata(tp: object) -> str:
    """A committed offset's metadata. confluent-kafka 2.16 fails to decode the metadata that a Java producer
    committed in a transaction (seen with exactly once's positions group, whose metadata is a topic id that
    Kafka's Java admin reads back intact): such metadata is read as none rather than failing the whole read."""
    try:
        return getattr(tp, "metadata", None) or ""
    except UnicodeDecodeError:
        return ""

