"""FlowRunner: one `source->target` flow's query: which partitions it reads, from where, and its positions.

The query reads an explicit set of partitions from explicit offsets (the flow's own positions). When the
set changes (a new topic, new partitions, a deleted or re-created topic, a wider filter), the runner
finishes the batch in progress, stops the query and starts a new one on the new set: every partition
continues at its stored position, so other topics see only a short pause and nothing is lost. The flow's
other periodic jobs are its control plane's (control/plane.FlowControl).
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sparkmirror.config import keys
from sparkmirror.config.model import FlowConfig
from sparkmirror.control import positions as pos
from sparkmirror.control.plane import FlowControl
from sparkmirror.control.ports import Clients, TopicAdmin
from sparkmirror.control.topic_sync import apply_plan, observe_plan
from sparkmirror.control.topics import TopicPlan
from sparkmirror.errors import PipelineError, SparkmirrorError
from sparkmirror.model import PartitionSummary
from sparkmirror.pipeline import options
from sparkmirror.runtime.engine import Engine, Query, QueryRequest, trigger_of
from sparkmirror.runtime.progress import FlowProgress
from sparkmirror.runtime.state import ACL_LEDGER_FILE, POSITIONS_FILE, AclLedgerFile, read_positions, write_positions
from sparkmirror.runtime.status import STALL_AFTER_S, FlowStatus

logger = logging.getLogger(__name__)

FULL_COMMIT_INTERVAL_S = 3600.0


@dataclass(frozen=True)
class Restart:
    """One change of a running flow's partition set, for the log and for measurements."""

    reason: str
    stopped_s: float  # finishing the batch in progress and stopping the old query
    started_s: float  # positions, watermarks and the new query's start


class FlowRunner:
    """Runs one flow. `refresh` runs on the flow's loop (runtime/flow_loops.py) or, at a start, a retry or a
    failed query's check, on the control loop; one at a time (`_change`): the control loop's `check` skips a
    turn rather than wait for a refresh blocked on a cluster that is down. `stop_replication` may come from any
    thread and never waits for a refresh: nothing starts a query once it was called. `_on_batch` is the report
    thread's; `status()` may be called from any thread."""

    def __init__(self, flow: FlowConfig, source: TopicAdmin, target: TopicAdmin, state_dir: Path,
                 engine: Engine, clients: Clients, until_caught_up: bool = False,
                 slots_in_use: Callable[[FlowRunner], int] = lambda _runner: 0) -> None:
        self.source = source
        self.target = target
        self.dir = state_dir
        self._engine = engine
        self._clients = clients
        self.until_caught_up = until_caught_up
        self.slots_in_use = slots_in_use  # Real-Time Mode task slots held by the process's other flows
        self.control = FlowControl(flow, source, target, clients,
                                   lambda: dict(self.plan.remote_topics) if self.plan is not None else {},
                                   self._read_positions, former_acl_ledger=AclLedgerFile(state_dir / ACL_LEDGER_FILE))
        self._flow = flow
        self.progress = FlowProgress(flow.name)
        self.plan: TopicPlan | None = None
        self.assignment: dict[str, int] = {}  # source topic -> partitions the running query reads
        self.topic_ids: dict[str, str | None] = {}
        self.query: Query | None = None
        self.failure: str | None = None
        self.restarts: list[Restart] = []
        self._catch_up: dict[tuple[str, int], int] = {}
        self._last_report = 0.0  # time.monotonic() of the last report handed to _on_batch
        self._started_at = 0.0  # time.monotonic() when the running query started
        self._generation = 0
        self._idle_logged = False
        self._stopped = False  # set by stop(): nothing may start a query afterwards
        self._change = threading.Lock()  # held by a refresh (and the restart it makes), and by check()
        self._query_lock = threading.Lock()  # hands the running query over to whoever stops it, once
        self._lock = threading.Lock()  # positions: written by the report thread, read at restarts and status
        self._positions: dict[str, pos.TopicPosition] | None = read_positions(self._positions_file)
        # Set by the supervisor: whether this process runs the flow (else it stands by for another that does), and
        # the lease the writers of its queries get (0: none; see runtime/ownership.py).
        self.owned = True
        self.lease_ms = 0
        self._full_commit_at = 0.0  # time.monotonic() of the last commit of every position (not only the moved)

    @property
    def flow(self) -> FlowConfig:
        return self._flow

    @flow.setter
    def flow(self, flow: FlowConfig) -> None:
        """A live configuration change (filters, schedules): the query and the control jobs read it anew."""
        self._flow = flow
        self.control.flow = flow

    @property
    def _positions_file(self) -> Path:
        return self.dir / POSITIONS_FILE

    # -- lifecycle -----------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.query is not None and self.failure is None

    def start(self) -> None:
        """Create the flow's internal topics and control clients, then its remote topics, then replicate."""
        self.control.start()  # before the query: a flow that cannot checkpoint does not start
        self.refresh()

    def retry(self) -> None:
        """Start again after a failure (a retry with back-off by the supervisor): from the saved positions."""
        self.failure = None
        self.progress.record_retry()
        self.start()  # every step is idempotent: topics that exist, clients that exist, the same positions

    @property
    def busy(self) -> bool:
        """A refresh (maybe blocked on a cluster that is down) is under way."""
        return self._change.locked()

    def refresh(self) -> bool:
        """Re-read the source's topics; on any change of the replicated partition set, restart the query.

        Returns whether the query was (re)started. A failed flow is left to its retry, a stopped one alone.
        """
        with self._change:
            if self.failure is not None:
                return False
            return self._refresh()

    def _refresh(self) -> bool:
        if self._stopped:
            return False
        plan = observe_plan(self.flow, self.source, self.target)
        ids = self.source.topic_ids(list(plan.source_partitions))
        apply_plan(self.flow, self.target, plan)
        self.plan = plan
        # A topic deleted between the two calls has no id: it is left out until the next refresh.
        wanted = {t: n for t, n in plan.source_partitions.items() if t in ids}
        changed_ids = [t for t in wanted if t in self.topic_ids and self.topic_ids[t] != ids.get(t)]
        if wanted == self.assignment and not changed_ids and self.query is not None and self.failure is None:
            return False
        if not wanted:
            if not self._idle_logged:
                self._idle_logged = True
                logger.warning("flow %s: no topic on '%s' matches topics=%s; checking again every %d s",
                               self.flow.name, self.flow.source, ",".join(self.flow.topics),
                               self.flow.refresh_topics.interval_s)
            self._stop_query()
            self.assignment, self.topic_ids = {}, {}
            return False
        self._idle_logged = False
        self._restart(wanted, ids, _describe_change(self.assignment, wanted, changed_ids))
        return True

    def _restart(self, wanted: dict[str, int], ids: dict[str, str | None], reason: str) -> None:
        began = time.monotonic()
        self._stop_query()
        if self._stopped:
            return
        stopped = time.monotonic()
        watermarks = self.source.watermarks_of(wanted)
        assert self.plan is not None
        # The positions committed on the target win over the state dir's, a cache that may be old or gone (a new
        # host). Exactly once: no task of an earlier query can commit from now on, and its commits are the positions.
        committed = (self._engine.take_over_transactions(self.flow) if self.control.exactly_once else
                     self.control.committed_positions({self.plan.remote_topics[t]: n for t, n in wanted.items()}))
        with self._lock:
            stored, taken_over = pos.with_committed(self._positions, committed, self.plan.remote_topics, ids,
                                                    self.flow.name, self.flow.positions_group)
            start = pos.plan_start(wanted, ids, watermarks, stored, self.flow.reset_policy, self.flow.name)
            if start.removed and self.flow.on_records_removed == "stop":  # before any position moves past them
                # failed (not idle) also when a refresh found them: the control loop retries it with back-off
                self.failure = _removed_text(self.flow.name, start)
                raise PipelineError(self.failure)
            positions = {**(self._positions or {}), **start.positions(ids)}
            write_positions(self._positions_file, positions)  # atomic: fsync, then os.replace
            self._positions = positions
        if not self.control.exactly_once:  # where this query starts is where the next owner would start
            self._commit_positions(start.positions(ids))
        for (topic, partition), (first, last) in start.removed.items():
            self.progress.record_removed(topic, partition, last - first + 1)
        for line in start.warnings:
            logger.warning("%s", line)
        for line in (*taken_over, *start.notes):
            logger.info("%s", line)
        self.assignment, self.topic_ids, self.failure = wanted, ids, None
        # Where "caught up" is, for a Real-Time Mode query (micro-batch uses Spark's availableNow).
        self._catch_up = {(t, p): high for t, marks in watermarks.items() for p, (_low, high) in marks.items()}
        self._last_report = time.monotonic()
        if self._stopped:  # stopped from another thread (a bounded stop) while this restart read the clusters
            return
        query = self._engine.start_query(self._request(start.offsets))
        with self._query_lock:
            self.query = query
        if self._stopped:  # the stop came while it started: it found no query to stop
            self._stop_query()
            return
        self._started_at = time.monotonic()
        restart = Restart(reason, stopped - began, time.monotonic() - stopped)
        self.restarts.append(restart)
        logger.info("flow %s replicating %d topic(s) (%s): %s; stop %.2f s, start %.2f s", self.flow.name,
                    len(wanted), reason, ", ".join(f"{s}->{self.plan.remote_topics[s]}" for s in sorted(wanted)),
                    restart.stopped_s, restart.started_s)

    def _request(self, offsets: dict[str, dict[int, int]]) -> QueryRequest:
        assert self.plan is not None
        remote = {s: self.plan.remote_topics[s] for s in offsets}
        limits = self.target.topic_config_values(sorted(remote.values()), "max.message.bytes")
        self._generation += 1
        checkpoints = self.dir / "checkpoints"
        shutil.rmtree(checkpoints, ignore_errors=True)  # positions live in positions.json, not here
        checkpoint = checkpoints / str(self._generation)
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        return QueryRequest(self.flow, offsets, remote, {t: i for t, i in self.topic_ids.items() if t in remote and i},
                            {t: int(v) for t, v in limits.items()}, checkpoint,
                            f"{self.flow.name}#{id(self)}#{self._generation}", self._on_batch, self.until_caught_up,
                            self.slots_in_use(self), self.control.exactly_once, lease_ms=self.lease_ms)

    def trigger(self) -> options.TriggerSpec:
        return trigger_of(self.flow)

    def healthy_for(self, seconds: float) -> bool:
        """True when the query has run without a failure for at least `seconds` (a retry worked)."""
        return self.running and time.monotonic() - self._started_at >= seconds

    @property
    def real_time_slots(self) -> int:
        """Task slots this flow's running query holds for good (Real-Time Mode), else 0."""
        if self.query is None or self.trigger().mode != options.REAL_TIME:
            return 0
        return options.real_time_slots(self.flow.source_reader, options.flow_tasks(self.flow.tasks_max),
                                       sum(self.assignment.values()))

    def _stop_query(self) -> None:
        """Stop the writers between records (what they wrote is reported, its positions saved), then the query."""
        with self._query_lock:
            query, self.query = self.query, None
        if query is not None:
            query.stop()

    def stop(self) -> None:
        self.stop_replication()
        self.close_clients()

    def stop_replication(self) -> None:
        """Stop the query for good (its acknowledged records' positions saved); nothing starts one afterwards.

        Never waits for a refresh in progress: a restart it makes checks the stop before and after starting its
        query."""
        self._stopped = True
        self._stop_query()

    def close_clients(self) -> None:
        """Flush and close the control-plane clients (offset syncs, heartbeats, checkpoints)."""
        self.control.close()

    def _real_time_caught_up(self) -> bool:
        """A Real-Time Mode query never ends by itself: with until_caught_up it is stopped once every
        partition's position reached the end offset it had when the query started, or only offsets that
        hold no record (trailing transaction markers) are left, and no report came for two intervals."""
        if self.trigger().mode != options.REAL_TIME:
            return False
        with self._lock:
            positions = self._positions or {}
        behind = [(t, p, start, end) for (t, p), end in self._catch_up.items()
                  if (start := positions.get(t, pos.TopicPosition(None)).next_offsets.get(p, 0)) < end]
        if not behind:
            return True
        if time.monotonic() - self._last_report < 2 * self.flow.report_interval_ms / 1000:
            return False
        settings = self.flow.source_consumer.rdkafka
        return not any(self._clients.has_records(settings, t, p, start, end) for t, p, start, end in behind)

    # -- the report thread's callback ------------------------------------------------------------------
    def _on_batch(self, batch_id: int, summaries: list[PartitionSummary], started: float) -> None:
        self._last_report = started
        self.progress.record(batch_id, summaries, started)
        if not summaries:
            return
        # Syncs first: after a crash between the two, the batch is replicated again and its newer syncs
        # supersede these (translation keeps the newer mapping), whereas positions saved without syncs
        # would leave records on the target that no sync accounts for.
        self.control.write_offset_syncs(summaries)
        with self._lock:
            again = pos.written_again(self._positions or {}, summaries)
            self._positions = pos.advance(self._positions or {}, summaries)
            write_positions(self._positions_file, self._positions)
            positions = self._positions
        if not self.control.exactly_once:  # exactly once commits them in the records' transactions
            full = time.monotonic() - self._full_commit_at >= FULL_COMMIT_INTERVAL_S
            self._commit_positions(positions, None if full else {(s.topic, s.partition) for s in summaries})
        logger.info("flow %s batch %d: %d records, %d skipped, %d bytes, %d partitions, %.2f s", self.flow.name,
                    batch_id, sum(s.records for s in summaries), sum(s.skipped for s in summaries),
                    sum(s.bytes for s in summaries), len(summaries), time.monotonic() - started)
        if again:
            self.progress.record_written_again(again)
            logger.warning("flow %s: %d records were written to %s a second time (a task retried, e.g. after an "
                           "executor was lost); delivery is at least once, so consumers of the remote topics may "
                           "see them twice", self.flow.name, again, self.flow.target)

    def _commit_positions(self, positions: dict[str, pos.TopicPosition],
                          only: set[tuple[str, int]] | None = None) -> None:
        """Commit positions (all of `positions`, or `only` those partitions) as offsets of the flow's positions
        group on the target, keyed by remote topic, the source topic's id as metadata (as exactly once does).

        The state that survives this host: a process elsewhere continues from them. Kafka expires the offsets of
        a group without members `offsets.retention.minutes` after their commit, so every position is committed
        again each FULL_COMMIT_INTERVAL_S, idle partitions' too.
        """
        plan = self.plan
        if plan is None:
            return
        offsets = {(plan.remote_topics[topic], partition): (offset, position.topic_id or "")
                   for topic, position in positions.items() if topic in plan.remote_topics
                   for partition, offset in position.next_offsets.items()
                   if only is None or (topic, partition) in only}
        if only is None:
            self._full_commit_at = time.monotonic()
        self.control.commit_positions(offsets)

    def renew_lease(self, valid_ms: int) -> None:
        """Let the running query's writers go on for `valid_ms` more (runtime/ownership.py)."""
        query = self.query
        if query is not None and self.lease_ms:
            query.renew_lease(valid_ms)

    def check(self) -> bool:
        """True while the query is active. A failed query caused by a topic-set change (a topic deleted
        under it) is restarted on the new set; any other failure marks the flow failed.

        While a refresh runs (on the flow's loop), does nothing and returns True: checked at the next turn.
        """
        if not self._change.acquire(blocking=False):
            return True
        try:
            return self._check()
        finally:
            self._change.release()

    def _check(self) -> bool:
        query = self.query  # a stop from another thread may take it away meanwhile
        if query is None:
            return False
        active, failure = query.status()
        if failure is None and active and self.until_caught_up and self._real_time_caught_up():
            self._stop_query()
            return False
        if failure is None:
            if not active and not self.until_caught_up and self.failure is None:
                self.failure = "stopped without an error; see the Spark log"
            return active
        try:
            restarted = self._refresh() if not self.until_caught_up else False
        except SparkmirrorError as exc:
            logger.warning("flow %s: could not re-plan after a failure: %s", self.flow.name, exc)
            restarted = False
        if restarted:
            logger.info("flow %s: query stopped after its topics changed (%s); restarted on the new set",
                        self.flow.name, failure.splitlines()[0])
            return True
        self.failure = failure
        self._stop_query()
        return False

    # -- what the flow is doing, for the CLI, logs and metrics -----------------------------------------
    def _read_positions(self) -> tuple[dict[str, int], dict[tuple[str, int], int]]:
        """The partitions the query reads and their positions (for the lag meter); safe from any thread."""
        assignment = dict(self.assignment)
        with self._lock:
            positions = {(t, p): o for t, tp in (self._positions or {}).items() for p, o in tp.next_offsets.items()
                         if t in assignment}
        return assignment, positions

    @property
    def stopped(self) -> bool:
        """Stopped for good (stop() or stop_replication()): a flow run again needs a new runner."""
        return self._stopped

    def status(self, owner: str | None = None) -> FlowStatus:
        """An immutable snapshot; safe from any thread (positions under their lock, the rest are replaced
        whole, never mutated in place). `owner`: the process that runs the flow, as far as this one knows."""
        assignment, positions = self._read_positions()
        failure, query, restarts, plan = self.failure, self.query, list(self.restarts), self.plan
        state = ("stopped" if self._stopped else "standby" if not self.owned else "failed" if failure is not None
                 else "running" if query is not None else "idle")
        checkpointer = self.control.checkpointer
        flow = self.flow
        progress = self.progress.snapshot()
        quiet = None
        if state == "running":  # since it last wrote, or since its query started (whichever came later)
            since_start = time.monotonic() - self._started_at
            quiet = since_start if progress.since_last_write_s is None else min(since_start,
                                                                                 progress.since_last_write_s)
        return FlowStatus(flow.name, state, failure, assignment, positions, progress,
                          len(restarts), restarts[-1].reason if restarts else None, flow.source, flow.target,
                          dict(plan.remote_topics) if plan is not None else {}, self.control.lag.latest,
                          checkpointer.metrics() if checkpointer is not None else None,
                          tuple(f.strip() for f in flow.metric_names_formats.split(",")), owner, quiet,
                          max(STALL_AFTER_S, 2 * flow.report_interval_ms / 1000))


def _describe_change(before: dict[str, int], after: dict[str, int], recreated: list[str]) -> str:
    if not before:
        return "start"
    parts = []
    added, removed = sorted(set(after) - set(before)), sorted(set(before) - set(after))
    grown = sorted(t for t in after if t in before and after[t] != before[t])
    for label, topics in (("new topics", added), ("topics gone", removed), ("partitions added", grown),
                          ("re-created", recreated)):
        if topics:
            parts.append(f"{label}: {', '.join(topics)}")
    return "; ".join(parts) or "restart"


def _removed_text(flow: str, start: pos.StartPlan) -> str:
    where = ", ".join(f"{t}-{p} (offsets {first} to {last})" for (t, p), (first, last) in sorted(start.removed.items()))
    return (f"flow {flow}: {start.removed_records()} records were removed at the source before they were copied: "
            f"{where}. With {keys.ON_RECORDS_REMOVED} = stop the flow stays stopped; copy them from elsewhere, or "
            f"set it to continue to go on from each partition's log start without them")
