"""FlowControl: the control plane of one flow, every periodic job of it except the query's own refresh.

It owns the flow's internal topics and the clients its jobs use, all obtained from one `Clients` port:
the offset-syncs writer (fed by the record path's reports), heartbeats, topic config and ACL sync (with its
ledger on the target, control/acl_ledger.py), checkpoints and group offset sync. A new control job is a method
here plus a row in `jobs()`; its pure decision goes beside the others in control/ or offsets/.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from sparkmirror.config import keys
from sparkmirror.config.flow_settings import Schedule
from sparkmirror.config.model import FlowConfig
from sparkmirror.control.acl_ledger import TopicAclLedger
from sparkmirror.control.acl_sync import AclSync
from sparkmirror.control.checkpointer import Checkpointer
from sparkmirror.control.config_sync import sync_topic_configs
from sparkmirror.control.heartbeats import HeartbeatEmitter
from sparkmirror.control.lag_meter import LagMeter, Positions
from sparkmirror.control.ports import (
    AclLedger,
    Clients,
    FormerAclLedger,
    GroupAdmin,
    GroupOffsets,
    LogWriter,
    TopicAdmin,
)
from sparkmirror.control.topic_sync import create_internal_topic
from sparkmirror.errors import AdminOperationError
from sparkmirror.model import PartitionSummary
from sparkmirror.offsets.syncs import sync_records

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Job:
    """A periodic job of a flow, named as MM2 names the task (`emit checkpoints`, ...)."""

    name: str
    schedule: Schedule
    run: Callable[[], object]
    side_loop: bool = False  # reads the source only: runs beside the jobs a down target can block
    at_start: bool = False  # first run at once (as MM2 schedules it), not one interval after the start


class FlowControl:
    """Its jobs run on the flow's loops (runtime/flow_loops.py: `side_loop` ones beside the others), `start` on the
    supervisor's control loop while no job runs, `write_offset_syncs` on the record path's report thread.

    ACL sync's ledger is `acl_ledger` if given (tests), else the target's ledger topic, which takes over
    `former_acl_ledger` (the state dir's file of earlier versions) once.
    """

    def __init__(self, flow: FlowConfig, source: TopicAdmin, target: TopicAdmin, clients: Clients,
                 remote_topics: Callable[[], Mapping[str, str]], positions: Positions = lambda: ({}, {}),
                 clock: Callable[[], float] = time.time, acl_ledger: AclLedger | None = None,
                 former_acl_ledger: FormerAclLedger | None = None) -> None:
        self.flow = flow
        self.source = source
        self.target = target
        self._clients = clients
        self._remote_topics = remote_topics
        self._syncs_writer: LogWriter | None = None
        self.heartbeats = HeartbeatEmitter(flow, target, clients, clock)
        self.checkpointer: Checkpointer | None = None
        self.exactly_once = False  # decided by start(): transactions asked for and possible on the target
        self._positions_groups: GroupAdmin | None = None
        self._acl_ledger = TopicAclLedger(lambda: self.flow, target, clients, former_acl_ledger)
        self.acls = AclSync(lambda: self.flow, source, target, acl_ledger or self._acl_ledger, remote_topics)
        # An admin client of its own: the lag meter runs on another thread than the other jobs' clients.
        self.lag = LagMeter(flow, clients.admin(flow.source, {**flow.source_admin.rdkafka,
                                                               "client.id": "sparkmirror-lag"}), clients, positions)

    def start(self) -> None:
        """Create the internal topics and their clients; idempotent, so a retry repeats it safely.

        The checkpointer starts here too, before any query: a flow that cannot checkpoint does not start.
        """
        flow = self.flow
        self.exactly_once = self._exactly_once()
        if flow.emit_offset_syncs_enabled:
            admin = self.source if flow.offset_syncs_cluster == flow.source else self.target
            create_internal_topic(admin, flow.offset_syncs_topic, flow.offset_syncs_topic_replication_factor,
                                  keys.OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR)
            self._syncs_writer = self._syncs_writer or self._clients.writer(
                flow.offset_syncs_cluster, flow.offset_syncs_producer.rdkafka)
        if flow.emit_heartbeats.enabled:
            self.heartbeats.start()
        self._ensure_checkpointer()

    def _exactly_once(self) -> bool:
        """Whether the record path writes in transactions: asked for, and the target can. `required` that cannot
        stops the start; MM2's switch (`<target>.exactly.once.source.support = enabled`) falls back to at least
        once with a warning, as MM2 runs a connector that cannot do exactly once when it is only requested."""
        flow = self.flow
        if not flow.exactly_once:
            return False
        required = flow.exactly_once_support == "required"
        asked = (f"{keys.EXACTLY_ONCE_SUPPORT} = required" if required
                 else f"{flow.target}.{keys.EXACTLY_ONCE_SOURCE_SUPPORT} = enabled")
        if flow.trigger_mode == keys.TRIGGER_MODES[1]:  # `required` with it is refused when the file is loaded
            logger.warning("flow %s: %s, but its trigger mode is real-time, whose tasks never end (and so would "
                           "their transactions): replicating at least once", flow.name, asked)
            return False
        problem = self._clients.transactions_problem(flow.target, flow.target_producer.rdkafka,
                                                     f"{flow.transactional_id_prefix}-probe")
        if problem is None:
            return True
        if required:
            raise AdminOperationError(flow.target, f"flow {flow.name} with {asked}: a transaction", problem)
        logger.warning("flow %s: %s, but %s; replicating at least once", flow.name, asked, problem)
        return False

    def jobs(self) -> list[Job]:
        flow = self.flow
        return [Job("sync topic configs", flow.sync_topic_configs, self.sync_configs),
                Job("sync topic ACLs", flow.sync_topic_acls, self.acls.sync, at_start=True),
                Job("emit heartbeats", flow.emit_heartbeats, self.emit_heartbeat),
                Job("emit checkpoints", flow.emit_checkpoints, self.emit_checkpoints),
                Job("sync group offsets", flow.sync_group_offsets, self.sync_group_offsets),
                Job("measure lag", flow.measure_lag, self.lag.measure, side_loop=True)]

    # -- the record path's reports ---------------------------------------------------------------------
    @property
    def writes_offset_syncs(self) -> bool:
        return self._syncs_writer is not None

    def write_offset_syncs(self, summaries: list[PartitionSummary]) -> None:
        """Every pair the writer reported is exact; MM2's sync topic keys them by source topic-partition, and
        a header says what lies between one and the next (offsets/syncs.SyncLink)."""
        if self._syncs_writer is not None:
            self._syncs_writer.write(self.flow.offset_syncs_topic, sync_records(summaries))

    # -- the flow's positions, kept on the target -----------------------------------------------------------
    def _groups(self) -> GroupAdmin:
        if self._positions_groups is None:
            self._positions_groups = self._clients.groups(self.flow.target, self.flow.target_admin.rdkafka)
        return self._positions_groups

    def committed_positions(self, remote_partitions: Mapping[str, int]) -> GroupOffsets:
        """The positions committed in the flow's positions group for these remote topics (topic -> partitions)."""
        group = self.flow.positions_group
        asked = [(topic, p) for topic, count in sorted(remote_partitions.items()) for p in range(count)]
        return self._groups().committed([group], asked).get(group, {}) if asked else {}

    def commit_positions(self, offsets: Mapping[tuple[str, int], tuple[int, str]]) -> None:
        """Commit (remote topic, partition) -> (next source offset, source topic id) in the positions group."""
        if offsets:
            self._groups().commit(self.flow.positions_group, offsets)

    # -- periodic jobs ---------------------------------------------------------------------------------
    def emit_heartbeat(self) -> None:
        self.heartbeats.emit()  # the topic and writer are made here when heartbeats were turned on live

    def sync_configs(self) -> None:
        remote = self._remote_topics()
        if remote:
            sync_topic_configs(self.source, self.target, remote, self.flow.config_filter)

    def emit_checkpoints(self) -> None:
        checkpointer = self._ensure_checkpointer()
        if checkpointer is not None:
            checkpointer.emit()

    def sync_group_offsets(self) -> None:
        checkpointer = self._ensure_checkpointer()
        if checkpointer is not None:
            checkpointer.sync_group_offsets()

    def _ensure_checkpointer(self) -> Checkpointer | None:
        """The flow's checkpointer, created when checkpoints are on (at start, or by a live config change).

        Each client has its role's settings, as MM2's checkpoint task has: the groups' admins, the offset-syncs
        reader with the consumer settings of the cluster holding them, the checkpoints reader with the target's
        consumer settings (CheckpointStore) and the writer with the target producer's (Connect's worker producer).
        """
        flow = self.flow
        if self.checkpointer is None and flow.checkpoints_enabled:
            create_internal_topic(self.target, flow.checkpoints_topic, flow.checkpoints_topic_replication_factor,
                                  keys.CHECKPOINTS_TOPIC_REPLICATION_FACTOR)
            clients = self._clients
            checkpointer = Checkpointer(
                flow, clients.groups(flow.source, flow.source_admin.rdkafka),
                clients.groups(flow.target, flow.target_admin.rdkafka),
                clients.reader(flow.offset_syncs_cluster, flow.offset_syncs_consumer.rdkafka, flow.offset_syncs_topic),
                clients.writer(flow.target, flow.target_producer.rdkafka),
                lambda: clients.read_all(flow.target, flow.target_consumer.rdkafka, flow.checkpoints_topic),
                self._remote_topics, self.source.topic_partitions)
            checkpointer.load()
            self.checkpointer = checkpointer
        return self.checkpointer

    def close(self) -> None:
        """Flush and close the clients (offset syncs, heartbeats, checkpoints, the ACL ledger)."""
        for writer in (self._syncs_writer, self.heartbeats, self.checkpointer, self._acl_ledger,
                       self._positions_groups):
            if writer is not None:
                writer.close()
