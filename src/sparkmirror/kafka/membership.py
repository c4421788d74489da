"""GroupMembership: this process as a member of its file's coordination group (control/coordination.py).

A librdkafka consumer subscribed to the coordination topic with the cooperative-sticky assignor: each partition
(a unit: a flow or a heartbeat-only pair) is held by one member, a new member takes some from the others, and a
member that leaves or stops heartbeating for `session.timeout.ms` gives its partitions to the rest. It never
reads a record (nothing is written to the topic) and never commits: the assignment is all it is for.

Callbacks run inside `poll()`, on the caller's thread (runtime/ownership.py's). `on_revoked` may block until the
units it names have stopped: the partitions reach another member only after it returns, which is what keeps two
processes from running one flow. `on_lost` (the session expired: this process was cut off or paused) must not
wait: the others may already run those units.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

from sparkmirror.errors import AdminOperationError
from sparkmirror.kafka.connection import CALL_TIMEOUT_S
from sparkmirror.kafka.failures import operation_error
from sparkmirror.model import Member

logger = logging.getLogger(__name__)

HEARTBEAT_FRACTION = 10  # heartbeat.interval.ms = session timeout / 10: a lost member is seen within a second
PartitionsCallback = Callable[[set[int]], None]
_GRANT = "grant this process's principal (cluster '{alias}''s admin settings) "
_REFUSALS = {
    KafkaError.GROUP_AUTHORIZATION_FAILED: _GRANT + "READ and DESCRIBE on the group '{group}' (or the prefix "
                                           "__sparkmirror-coordination-)",
    KafkaError.TOPIC_AUTHORIZATION_FAILED: _GRANT + "READ and DESCRIBE on the topic '{group}' (or the prefix "
                                           "__sparkmirror-coordination-)",
}


class GroupMembership:
    """Join `group` (subscribed to the topic of the same name) on cluster `alias`; see the module docstring."""

    def __init__(self, alias: str, settings: Mapping[str, str], group: str, session_timeout_ms: int,
                 client_id: str) -> None:
        self.alias = alias
        self.group = group
        self.client_id = client_id
        self._settings = dict(settings)
        self._session_timeout_ms = session_timeout_ms
        self._consumer: Consumer | None = None
        self._reported: set[int] = set()

    @property
    def heartbeat_interval_ms(self) -> int:
        return max(100, self._session_timeout_ms // HEARTBEAT_FRACTION)

    def join(self, on_assigned: PartitionsCallback, on_revoked: PartitionsCallback,
             on_lost: PartitionsCallback) -> None:
        """Subscribe; the assignment arrives through `on_assigned` during later polls."""
        conf: dict[str, Any] = {
            **self._settings, "group.id": self.group, "client.id": self.client_id,
            "partition.assignment.strategy": "cooperative-sticky",
            "session.timeout.ms": self._session_timeout_ms, "heartbeat.interval.ms": self.heartbeat_interval_ms,
            "enable.auto.commit": False, "enable.auto.offset.store": False, "auto.offset.reset": "latest",
            "enable.partition.eof": False, "fetch.wait.max.ms": 500,
            "error_cb": self._error,
        }
        self._consumer = Consumer(conf)

        def partitions(tps: list[TopicPartition]) -> set[int]:
            return {tp.partition for tp in tps if tp.topic == self.group}

        self._consumer.subscribe(
            [self.group],
            on_assign=lambda _c, tps: on_assigned(partitions(tps)),
            on_revoke=lambda _c, tps: on_revoked(partitions(tps)),
            on_lost=lambda _c, tps: on_lost(partitions(tps)))

    def _error(self, err: KafkaError) -> None:
        """A client or broker error: named once per kind (while it lasts, this process runs no flow), with the fix
        where one is known; transient ones (a broker restarting) only in the debug log."""
        code = err.code()
        if code not in _REFUSALS:
            logger.debug("coordination group %s on cluster '%s': %s", self.group, self.alias, err)
            return
        if code not in self._reported:
            self._reported.add(code)
            logger.error("coordination group %s on cluster '%s': %s; %s", self.group, self.alias, err.str(),
                         _REFUSALS[code].format(group=self.group, alias=self.alias))

    def poll(self, timeout_s: float) -> None:
        """Serve the group's callbacks (and drop any record: nobody should write to the topic)."""
        if self._consumer is not None:
            message = self._consumer.poll(timeout_s)
            if message is not None and message.error() is not None:
                self._error(message.error())

    def member_id(self) -> str:
        if self._consumer is None:
            return ""
        try:
            return self._consumer.memberid() or ""
        except (KafkaException, RuntimeError):
            return ""

    def members(self, timeout_s: float = CALL_TIMEOUT_S) -> list[Member]:
        """The group's members and the partitions each holds, as the coordinator knows them now: asked by a child
        process (kafka/group_describer.py), since librdkafka's describe can abort the process that asks."""
        from sparkmirror.kafka.group_describer import describe_isolated

        return describe_isolated(self.alias, {**self._settings, "client.id": self.client_id}, self.group,
                                 timeout_s)

    def close(self) -> None:
        """Leave the group (its partitions go to the others at once) and release the clients."""
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            consumer.close()


def describe_members(admin: AdminClient, alias: str, group: str, timeout_s: float = CALL_TIMEOUT_S) -> list[Member]:
    """The members of coordination group `group` on cluster `alias` and the partitions of its topic each holds."""
    future = admin.describe_consumer_groups([group], request_timeout=timeout_s)[group]
    try:
        description = future.result(timeout=timeout_s + 1)
    except KafkaException as exc:
        raise operation_error(alias, f"describe coordination group '{group}'", exc) from None
    except TimeoutError:
        raise AdminOperationError(alias, f"describe coordination group '{group}'",
                                  f"no answer within {timeout_s:.0f} s") from None
    out = []
    for member in description.members or ():
        assignment = getattr(member, "assignment", None)
        tps = getattr(assignment, "topic_partitions", None) or ()
        out.append(Member(member.member_id, member.client_id, member.host,
                          tuple(tp.partition for tp in tps if tp.topic == group)))
    return out


def group_members(alias: str, settings: Mapping[str, str], group: str, timeout_s: float = CALL_TIMEOUT_S
                  ) -> list[Member]:
    """describe_members with a client of its own (`sparkmirror status`, which is no member)."""
    return describe_members(AdminClient(dict(settings)), alias, group, timeout_s)
