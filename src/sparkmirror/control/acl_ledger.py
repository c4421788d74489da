"""The ACL ledger of a flow (the topic ACLs sparkmirror created on its target, the only ones ACL sync deletes),
kept on that target so that a process on a new host, with an empty state dir, continues where the last one stopped.

The topic (`FlowConfig.acl_ledger_topic`) is one compacted partition per target cluster, shared by every flow into
it. A record's key is the flow's name (`A->B`, UTF-8); its value is the JSON of the flow's ledger,
`{"created_acls": [{"pattern_type": ..., "name": ..., "principal": ..., "host": ..., "operation": ...,
"permission": ...}, ...]}` (the entries of the state dir's created-acls.json of earlier versions). The flow's last
record wins; a tombstone (null value) is no ledger.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Collection, Sequence

from sparkmirror.config import keys
from sparkmirror.config.model import FlowConfig
from sparkmirror.control.ports import Clients, FormerAclLedger, LogRecord, LogWriter, TopicAdmin
from sparkmirror.control.topic_sync import create_internal_topic
from sparkmirror.errors import AdminOperationError
from sparkmirror.model import TopicAcl

logger = logging.getLogger(__name__)

_FIELDS = tuple(f.name for f in dataclasses.fields(TopicAcl))


class AclLedgerFormatError(ValueError):
    """A ledger document that is not `{"created_acls": [<TopicAcl's fields>, ...]}`."""


def ledger_key(flow_name: str) -> bytes:
    """The key of a flow's records in the ledger topic: its name, `A->B`."""
    return flow_name.encode("utf-8")


def encode_ledger(acls: Collection[TopicAcl]) -> bytes:
    """The ledger document of `acls`, sorted, as compact JSON."""
    entries = [dataclasses.asdict(acl) for acl in sorted(acls)]
    return json.dumps({"created_acls": entries}, separators=(",", ":")).encode("utf-8")


def decode_ledger(document: str | bytes) -> frozenset[TopicAcl]:
    """The ACLs of a ledger document (a record's value or a created-acls.json); AclLedgerFormatError if it is not."""
    try:
        entries = json.loads(document)["created_acls"]
    except (ValueError, KeyError, TypeError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise AclLedgerFormatError(f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(entries, list):
        raise AclLedgerFormatError("'created_acls' is not a list")
    for entry in entries:
        if not isinstance(entry, dict) or sorted(entry) != sorted(_FIELDS) \
                or not all(isinstance(v, str) for v in entry.values()):
            raise AclLedgerFormatError(f"an entry is not an ACL of string fields {', '.join(_FIELDS)}: {entry!r}")
    return frozenset(TopicAcl(**entry) for entry in entries)


def latest_value(records: Sequence[LogRecord], key: bytes) -> tuple[int, bytes] | None:
    """(offset, value) of the last record of `key` in topic order; None when it has none or its last is a tombstone."""
    last = next((r for r in reversed(records) if r.key == key), None)
    return None if last is None or last.value is None else (last.offset, last.value)


class TopicAclLedger:
    """A flow's AclLedger in the ledger topic of its target, read and written with the target consumer's and
    producer's settings (as the checkpoints topic is).

    `load` reads the topic to its end (a missing topic is an empty ledger); when it holds no record of the flow,
    a former ledger (the state dir's file) is taken over once: written to the topic, then retired. `save` returns
    once the target acknowledged the record. The topic is created by the first save that finds neither a record
    in it nor it among the target's topics. Called from one thread.
    """

    def __init__(self, flow: Callable[[], FlowConfig], target: TopicAdmin, clients: Clients,
                 former: FormerAclLedger | None = None) -> None:
        self._flow = flow
        self._target = target
        self._clients = clients
        self._former = former
        self._topic_exists = False  # known to exist: read records from it, found or created it
        self._writer: LogWriter | None = None

    def load(self) -> frozenset[TopicAcl]:
        flow = self._flow()
        topic = flow.acl_ledger_topic
        records = self._clients.read_all(flow.target, flow.target_consumer.rdkafka, topic)
        self._topic_exists = self._topic_exists or bool(records)
        latest = latest_value(records, ledger_key(flow.name))
        if latest is not None:
            offset, value = latest
            try:
                return decode_ledger(value)
            except AclLedgerFormatError as exc:
                raise AdminOperationError(
                    flow.target, f"read flow {flow.name}'s topic ACL ledger in '{topic}'",
                    f"its record at offset {offset} is not a ledger ({exc})",
                    f"Write a tombstone (key '{flow.name}', null value) to '{topic}' to start it afresh: sparkmirror "
                    f"then deletes none of the topic ACLs it created before") from None
        return frozenset() if self._former is None else self._take_over(flow, self._former)

    def save(self, acls: frozenset[TopicAcl]) -> None:
        flow = self._flow()
        topic = flow.acl_ledger_topic
        if not self._topic_exists:
            if topic not in self._target.topic_partitions():
                create_internal_topic(self._target, topic, flow.checkpoints_topic_replication_factor,
                                      keys.CHECKPOINTS_TOPIC_REPLICATION_FACTOR)
            self._topic_exists = True
        if self._writer is None:
            self._writer = self._clients.writer(flow.target, flow.target_producer.rdkafka)
        self._writer.write(topic, [(ledger_key(flow.name), encode_ledger(acls))])

    def _take_over(self, flow: FlowConfig, former: FormerAclLedger) -> frozenset[TopicAcl]:
        """The former ledger's ACLs, once they are in the topic; empty when there is none."""
        acls = former.load()
        if acls is None:
            return frozenset()
        self.save(acls)
        retired = former.retire()
        logger.info("flow %s: topic ACL ledger (%d ACLs) taken over into topic '%s' on cluster '%s'; %s", flow.name,
                    len(acls), flow.acl_ledger_topic, flow.target, retired)
        return acls

    def close(self) -> None:
        """Flush and close the writer, if one was made."""
        if self._writer is not None:
            self._writer.close()
