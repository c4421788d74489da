"""ClusterAdmin: a typed façade over confluent-kafka's AdminClient for one cluster alias.

Every call is wrapped so that a failure names the operation and the cluster.
"""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from typing import Protocol

from confluent_kafka import KafkaError, KafkaException, TopicCollection, TopicPartition, Uuid
from confluent_kafka.admin import (
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    ResourceType,
)

from sparkmirror.errors import ClusterUnreachableError
from sparkmirror.kafka.acls import AclAdmin
from sparkmirror.kafka.connection import CALL_TIMEOUT_S
from sparkmirror.kafka.failures import (
    AUTHORIZATION_CODES,
    LEADERSHIP_CODES,
    error_code,
    kafka_error,
    operation_error,
    unreachable_error,
)
from sparkmirror.model import NewTopicSpec, TopicConfigEntry

logger = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 10.0
PROBE_SLICE_S = 0.5


class ConfigAlterationLike(Protocol):
    """What `alter_topic_configs` reads of an alteration (control.configs.ConfigAlteration fits)."""

    @property
    def name(self) -> str: ...
    @property
    def op(self) -> str: ...
    @property
    def value(self) -> str | None: ...


class ClusterAdmin(AclAdmin):
    """Admin operations on one cluster (topic ACLs: kafka/acls.py), identified by its alias in every error."""

    def probe(self, timeout_s: float = PROBE_TIMEOUT_S) -> None:
        """Raise unless a metadata request is answered within the timeout.

        Refused credentials fail at once, a security.protocol the listener does not speak within a second
        or so (SecurityProtocolMismatchError, not "unreachable").
        """
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                metadata = self._admin.list_topics(timeout=min(PROBE_SLICE_S, max(0.01, deadline - time.monotonic())))
                break
            except KafkaException as exc:
                self._raise_if_refused()
                final = time.monotonic() >= deadline
                mismatch = self._protocol_mismatch(inferred=True, final=final)
                if mismatch is not None:
                    raise mismatch from None
                if final:
                    raise unreachable_error(self.alias, self.bootstrap_servers, exc) from None
        if not metadata.brokers:
            raise ClusterUnreachableError(self.alias, self.bootstrap_servers, "no broker in metadata")

    def topic_partitions(self, timeout_s: float = CALL_TIMEOUT_S) -> dict[str, int]:
        """Every topic (internal ones too) with its partition count."""
        try:
            metadata = self._admin.list_topics(timeout=timeout_s)
        except KafkaException as exc:
            raise operation_error(self.alias, "list topics", exc) from None
        return {name: len(t.partitions) for name, t in metadata.topics.items() if t.error is None}

    def create_topics(self, specs: list[NewTopicSpec],
                      replication_factor_key: str = "replication.factor") -> dict[str, Exception | None]:
        """Create topics; per-topic results, an existing topic counting as success.

        `replication_factor_key` is the MM2 setting that chose the specs' replication factor, named in the
        hint when the cluster has fewer brokers.
        """
        if not specs:
            return {}
        new = [NewTopic(s.name, num_partitions=s.partitions, replication_factor=s.replication_factor,
                        config=dict(s.configs)) for s in specs]
        futures = self._admin.create_topics(new, operation_timeout=CALL_TIMEOUT_S, request_timeout=CALL_TIMEOUT_S)
        return self._per_topic(futures, "create topic", ok_codes=(KafkaError.TOPIC_ALREADY_EXISTS,),
                               replication_factor_key=replication_factor_key)

    def topic_config_values(self, topics: list[str], key: str) -> dict[str, str]:
        """One config value (e.g. max.message.bytes) of each topic, as the broker reports it."""
        return {topic: entries[key].value for topic, entries in self._describe_topic_configs(topics).items()
                if key in entries}

    def topic_configs(self, topics: list[str]) -> dict[str, list[TopicConfigEntry]]:
        """Each topic's configs that MM2 would consider copying: not read-only, not sensitive, not static."""
        return {topic: [TopicConfigEntry(e.name, e.value, _source(e) is ConfigSource.DEFAULT_CONFIG)
                        for e in entries.values()
                        if not e.is_read_only and not e.is_sensitive and e.value is not None
                        and _source(e) is not ConfigSource.STATIC_BROKER_CONFIG]
                for topic, entries in self._describe_topic_configs(topics).items()}

    def alter_topic_configs(self, alterations: Mapping[str, Sequence[ConfigAlterationLike]]
                            ) -> dict[str, Exception | None]:
        """Apply incremental SET/DELETE config alterations per topic; per-topic results.

        A topic's alterations succeed or fail together (the broker validates them as one resource).
        """
        resources = [ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
            ConfigEntry(a.name, a.value if a.op == "SET" else None, incremental_operation=_OP_TYPES[a.op])
            for a in ops]) for topic, ops in alterations.items() if ops]
        if not resources:
            return {}
        futures = self._admin.incremental_alter_configs(resources, request_timeout=CALL_TIMEOUT_S)
        return self._per_topic({r.name: f for r, f in futures.items()}, "alter configs of",
                               auth_hint="Grant this principal ALTER_CONFIGS on topic '{topic}', or set "
                                         "'<source>-><target>.sync.topic.configs.enabled = false'")

    def topic_ids(self, topics: list[str]) -> dict[str, str]:
        """The topic id of each topic that exists, as Kafka's tools print it; a re-created topic gets a new one."""
        if not topics:
            return {}
        futures = self._admin.describe_topics(TopicCollection(list(topics)), request_timeout=CALL_TIMEOUT_S)
        ids: dict[str, str] = {}
        for name, future in futures.items():
            try:
                ids[name] = _uuid_string(self._answer(future, CALL_TIMEOUT_S, f"describe topic '{name}'").topic_id)
            except KafkaException as exc:
                if error_code(exc) == KafkaError.UNKNOWN_TOPIC_OR_PART:
                    continue
                raise operation_error(self.alias, f"describe topic '{name}'", exc) from None
        return ids

    def delete_topics(self, names: list[str]) -> dict[str, Exception | None]:
        """Delete topics; per-topic results, a topic that does not exist counting as success."""
        if not names:
            return {}
        futures = self._admin.delete_topics(list(names), operation_timeout=CALL_TIMEOUT_S,
                                            request_timeout=CALL_TIMEOUT_S)
        return self._per_topic(futures, "delete topic", ok_codes=(KafkaError.UNKNOWN_TOPIC_OR_PART,),
                               auth_hint="Grant this principal DELETE on topic '{topic}'")

    def _describe_topic_configs(self, topics: list[str], timeout_s: float = CALL_TIMEOUT_S) -> dict[str, dict]:
        """Configs per topic; a topic created a moment ago is unknown to its broker for a few ms: retried."""
        out: dict[str, dict] = {}
        todo = list(topics)
        deadline = time.monotonic() + timeout_s
        while todo:
            resources = [ConfigResource(ResourceType.TOPIC, t) for t in todo]
            retry = []
            for resource, future in self._admin.describe_configs(resources, request_timeout=CALL_TIMEOUT_S).items():
                try:
                    out[resource.name] = self._answer(future, CALL_TIMEOUT_S, f"describe configs of '{resource.name}'")
                except KafkaException as exc:
                    if not _is_transient(kafka_error(exc)) or time.monotonic() > deadline:
                        raise operation_error(self.alias, f"describe configs of '{resource.name}'", exc) from None
                    retry.append(resource.name)
            todo = retry
            if todo:
                time.sleep(0.1)
        return out

    def create_partitions(self, totals: dict[str, int]) -> dict[str, Exception | None]:
        """Raise topics' partition counts to the given totals; per-topic results."""
        if not totals:
            return {}
        futures = self._admin.create_partitions([NewPartitions(t, n) for t, n in totals.items()],
                                                request_timeout=CALL_TIMEOUT_S)
        return self._per_topic(futures, "add partitions to")

    def _per_topic(self, futures: Mapping[str, Future[None]], operation: str,
                   ok_codes: tuple[int, ...] = (), auth_hint: str = "",
                   replication_factor_key: str = "replication.factor") -> dict[str, Exception | None]:
        """Wait for per-topic futures: None where it worked, an error naming topic and cluster otherwise.

        `auth_hint` (with `{topic}` filled in) replaces the default hint when authorization fails.
        """
        results: dict[str, Exception | None] = {}
        for name, future in futures.items():
            try:
                self._answer(future, CALL_TIMEOUT_S, f"{operation} '{name}'")
                results[name] = None
            except KafkaException as exc:
                ok = error_code(exc) in ok_codes
                results[name] = None if ok else operation_error(
                    self.alias, f"{operation} '{name}'", exc, _topic_hints(name, auth_hint, replication_factor_key))
        return results

    def watermarks(self, topic: str, partitions: int, timeout_s: float = CALL_TIMEOUT_S) -> dict[int, tuple[int, int]]:
        """(low, high) offsets of each partition; retries while leadership is still settling."""
        return self.watermarks_of({topic: partitions}, timeout_s)[topic]

    def watermarks_of(self, partitions: Mapping[str, int],
                      timeout_s: float = CALL_TIMEOUT_S) -> dict[str, dict[int, tuple[int, int]]]:
        """`watermarks` of many topics in two requests (a flow of 100 topics is not 200 round trips)."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                low = self._list_offsets(partitions, OffsetSpec.earliest(), timeout_s)
                high = self._list_offsets(partitions, OffsetSpec.latest(), timeout_s)
                return {t: {p: (low[t, p], high[t, p]) for p in range(n)} for t, n in partitions.items()}
            except KafkaException as exc:
                if not _is_transient(kafka_error(exc)) or time.monotonic() > deadline:
                    raise operation_error(self.alias, f"list offsets of {_names(partitions)}", exc) from None
                time.sleep(0.2)

    def _list_offsets(self, partitions: Mapping[str, int], spec: OffsetSpec,
                      timeout_s: float) -> dict[tuple[str, int], int]:
        request = {TopicPartition(t, p): spec for t, n in partitions.items() for p in range(n)}
        if not request:
            return {}
        futures = self._admin.list_offsets(request, request_timeout=timeout_s)
        operation = f"list offsets of {_names(partitions)}"
        return {(tp.topic, tp.partition): self._answer(f, timeout_s, operation).offset for tp, f in futures.items()}


def _names(partitions: Mapping[str, int]) -> str:
    names = sorted(partitions)
    if len(names) == 1:
        return f"'{names[0]}'"
    return f"{len(names)} topics ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})"


# The leader-epoch codes answer for a few seconds after a broker restarts (seen in the kill trial's broker
# restart); librdkafka does not mark them retriable, Kafka's Java client does.
_TRANSIENT_CODES = LEADERSHIP_CODES | {
    KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError.REQUEST_TIMED_OUT, KafkaError._TRANSPORT, KafkaError._TIMED_OUT,
    KafkaError.UNKNOWN_LEADER_EPOCH, KafkaError.FENCED_LEADER_EPOCH}


_OP_TYPES = {"SET": AlterConfigOpType.SET, "DELETE": AlterConfigOpType.DELETE}


def _uuid_string(uuid: Uuid) -> str:
    """Java's Uuid.toString (URL-safe base64, unpadded); librdkafka's str() uses the standard alphabet."""
    raw = b"".join(bits.to_bytes(8, "big", signed=True)
                   for bits in (uuid.get_most_significant_bits(), uuid.get_least_significant_bits()))
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _source(entry: object) -> ConfigSource:
    source = entry.source  # an int from describe_configs, the enum elsewhere
    return source if isinstance(source, ConfigSource) else ConfigSource(int(source))


def _topic_hints(topic: str, auth_hint: str, replication_factor_key: str) -> dict[int, str]:
    """The fix for each error code of a per-topic call; `auth_hint` (with `{topic}`) is the one for refused
    authorization, else the principal is told to get CREATE."""
    auth = (auth_hint.format(topic=topic) if auth_hint else
            "Grant this principal CREATE on the target cluster, or create the topic beforehand")
    return {KafkaError.INVALID_REPLICATION_FACTOR:
            f"Set '{replication_factor_key}' (or '<source>-><target>.{replication_factor_key}') in the properties "
            f"file to at most the number of brokers of this cluster, or -1 for the broker default",
            **dict.fromkeys(AUTHORIZATION_CODES, auth)}


def _is_transient(err: object) -> bool:
    """Errors seen while a new topic's leadership settles or a broker reconnects."""
    return isinstance(err, KafkaError) and (err.retriable() or err.code() in _TRANSIENT_CODES)
