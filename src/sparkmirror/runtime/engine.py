"""The record path's engine as the runtime sees it: a session started once and queries started on it.

`SparkEngine` is the real one (pipeline/); the flow runner and the supervisor only know the `Engine` and
`Query` ports below, so their unit tests run without a JVM. pyspark is imported only when a session or a
query starts (inside the methods), so `validate`, `plan` and the unit tests never load it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from sparkmirror.config.model import FlowConfig
from sparkmirror.errors import PipelineError
from sparkmirror.model import PartitionSummary
from sparkmirror.pipeline import options
from sparkmirror.policy.delivery import EXACTLY_ONCE_MAX_OFFSETS, TRANSACTION_TIMEOUT_MS

logger = logging.getLogger(__name__)

BatchListener = Callable[[int, list[PartitionSummary], float], None]


@dataclass(frozen=True)
class QueryRequest:
    """One query generation of a flow: what it reads from where, and where it writes."""

    flow: FlowConfig
    offsets: Mapping[str, Mapping[int, int]]  # source topic -> partition -> first offset to read
    remote_topics: Mapping[str, str]
    topic_ids: Mapping[str, str]
    message_limits: Mapping[str, int]  # remote topic -> its max.message.bytes
    checkpoint_dir: Path
    channel: str  # unique per generation: the writers' reports of an old query never reach a new one
    on_batch: BatchListener = field(compare=False)
    until_caught_up: bool = False
    other_real_time_slots: int = 0  # task slots the process's other Real-Time Mode queries hold
    exactly_once: bool = False  # write in transactions with the positions (FlowControl decided it can)
    lease_ms: int = 0  # > 0: a lease valid that long from the start, which Query.renew_lease renews; 0: none


def trigger_of(flow: FlowConfig) -> options.TriggerSpec:
    """How the flow's query is triggered (its mode, Real-Time Mode epoch and report interval)."""
    return options.TriggerSpec(flow.trigger_mode, flow.real_time_epoch_ms, flow.report_interval_ms)


class Query(Protocol):
    def status(self) -> tuple[bool, str | None]:
        """(active, the failure that ended it or the report path's error)."""
        ...

    def stop(self) -> None:
        """Stop the writers between records (their reports handed over), then the query."""
        ...

    def renew_lease(self, valid_ms: int) -> None:
        """The process still owns the flow: its writers may write for `valid_ms` from now (on each executor, from
        when it hears of it). Once that passes unrenewed they send nothing until renewed or stopped. No effect on
        a query started without a lease (`QueryRequest.lease_ms` = 0)."""
        ...


class Engine(Protocol):
    def prepare(self, real_time_slots: Callable[[], int]) -> None:
        """Start the session in the background, sized for `real_time_slots()` Real-Time Mode partitions."""
        ...

    def start_query(self, request: QueryRequest) -> Query: ...

    def check_sql_rules(self, flows: Sequence[FlowConfig]) -> list[str]:
        """Spark's verdict on the flows' SQL rules: one problem per expression that does not parse or type-check,
        naming its key (starts the session if needed)."""
        ...

    def take_over_transactions(self, flow: FlowConfig) -> Mapping[tuple[str, int], tuple[int, str]]:
        """Exactly once, before a query: fence the flow's transactional ids on the target; its committed
        positions, (remote topic, partition) -> (next source offset, source topic id or "")."""
        ...

    def lost(self) -> str | None:
        """Why the engine can run no more queries (its Spark driver ended, e.g. out of heap), None while it can:
        a session cannot be started again in this process, so retrying its flows is pointless."""
        ...

    def stop(self) -> None: ...


class SparkQuery:
    def __init__(self, query: object, pump: object, name: str, renewal: Callable[[int], None]) -> None:
        self.query = query
        self.pump = pump
        self.name = name
        self._renewal = renewal  # ReplicationFlow.renew_lease

    def status(self) -> tuple[bool, str | None]:
        from sparkmirror.pipeline.flow import query_status

        active, failure = query_status(self.query)
        return active, failure if failure is not None else self.pump.error  # type: ignore[attr-defined]

    def stop(self) -> None:
        from sparkmirror.pipeline.session import stop_quietly

        self.pump.close()  # type: ignore[attr-defined]
        stop_quietly(self.query, f"flow {self.name}")

    def renew_lease(self, valid_ms: int) -> None:
        self._renewal(valid_ms)


class SparkEngine:
    """One Spark session per process, built on a thread of its own: its JVM starts while the flows create
    their internal and remote topics, which need no Spark (about a second less before the first record)."""

    def __init__(self, spark_settings: Mapping[str, str]) -> None:
        self._settings = spark_settings
        self._spark = None
        self._starting: Future | None = None
        self._real_time_slots: Callable[[], int] = lambda: 0

    def prepare(self, real_time_slots: Callable[[], int]) -> None:
        self._real_time_slots = real_time_slots  # a session that failed to start is built again with it
        if self._starting is not None or self._spark is not None:
            return
        from sparkmirror.pipeline.session import build_spark_session, check_submitted

        check_submitted()  # at start, not when a first topic appears: spark-submit's arguments cannot change

        future: Future = Future()

        def build() -> None:
            try:
                future.set_result(build_spark_session(self._settings, real_time_slots()))
            except BaseException as exc:  # noqa: BLE001 - handed to whoever waits for the session
                future.set_exception(exc)

        self._starting = future
        threading.Thread(target=build, name="spark-session", daemon=True).start()

    def session(self):  # pyspark's SparkSession, imported lazily
        if self._spark is None:
            if self._starting is None:
                self.prepare(self._real_time_slots)
            assert self._starting is not None
            try:
                self._spark = self._starting.result()
            except Exception:
                self._starting = None  # the next flow to start tries again
                raise
        return self._spark

    def check_sql_rules(self, flows: Sequence[FlowConfig]) -> list[str]:
        from sparkmirror.pipeline.sql_rules import flow_problems

        return flow_problems(self.session(), flows)

    def take_over_transactions(self, flow: FlowConfig) -> Mapping[tuple[str, int], tuple[int, str]]:
        from sparkmirror.pipeline.transactions import take_over

        return take_over(self.session(), flow.target, flow.transactional_id_prefix, flow.positions_group,
                         flow.target_admin)

    def start_query(self, request: QueryRequest) -> SparkQuery:
        from sparkmirror.pipeline.flow import ReplicationFlow, WriterSpec

        flow = request.flow
        trigger = trigger_of(flow)
        spark = self.session()
        tasks = options.flow_tasks(flow.tasks_max)
        if trigger.mode == options.REAL_TIME:
            partitions = sum(len(parts) for parts in request.offsets.values())
            slots = int(spark.sparkContext.defaultParallelism)
            wanted = options.real_time_slots(flow.source_reader, tasks, partitions)
            problem = options.real_time_slots_problem(flow.name, partitions, slots - request.other_real_time_slots,
                                                      spark.sparkContext.master,
                                                      wanted if flow.source_reader == "sparkmirror" else None)
            if problem:
                raise PipelineError(problem)
        producer = options.producer_settings(dict(flow.target_producer), request.message_limits,
                                             flow.target_producer.origin, trigger.mode == options.REAL_TIME)
        if request.exactly_once:  # a task's transaction spans its part of a batch: both are bounded
            producer = {"transaction.timeout.ms": str(TRANSACTION_TIMEOUT_MS), **producer}
        max_offsets = flow.max_offsets_per_trigger or (EXACTLY_ONCE_MAX_OFFSETS if request.exactly_once
                                                       else None)
        source = options.source_options(flow.source_consumer, request.offsets, max_offsets,
                                        flow.source_consumer.origin, trigger.mode == options.REAL_TIME)
        heartbeats = tuple(t for t in request.offsets if flow.policy.is_heartbeats_topic(t))  # MM2's own records
        writer = WriterSpec(request.channel, flow.target, producer, dict(request.remote_topics),
                            (flow.source, flow.target) if flow.provenance_enabled else None, producer_slots=tasks,
                            source_admin=dict(flow.source_admin), source_topic_ids=dict(request.topic_ids),
                            exactly_once={"transactional_id": flow.transactional_id_prefix,
                                          "positions_group": flow.positions_group,
                                          "admin": dict(flow.target_admin)} if request.exactly_once else None,
                            transforms=options.transforms_spec(flow.transforms, flow.errors_tolerance,
                                                               flow.plugin_path, flow.source),
                            message_limits=dict(request.message_limits), sql_rules=flow.sql_rules,
                            sql_exempt_topics=heartbeats,
                            schema_ids=options.schema_ids_spec(flow.schemas, flow.schemas_unknown_ids,
                                                               flow.source_registry, flow.target_registry, heartbeats))
        batching = options.fetch_batching(flow.real_time_batch_fetches, flow.source_consumer,
                                          trigger.mode == options.REAL_TIME)
        source_format = options.source_format(flow.source_reader, tasks, source, flow.consumer_poll_timeout_ms,
                                              batching)
        replication = ReplicationFlow(spark, flow.name, source, writer, request.checkpoint_dir, request.on_batch,
                                      trigger, max_tasks=tasks, lease_ms=request.lease_ms, source_format=source_format)
        return SparkQuery(replication.start(until_caught_up=request.until_caught_up), replication.pump, flow.name,
                          replication.renew_lease)

    def lost(self) -> str | None:
        if self._spark is None:
            return None  # not started, or starting: its failure is the flows' to report
        from sparkmirror.pipeline.session import driver_lost

        return driver_lost(self._spark)

    def stop(self) -> None:
        if self._spark is None and self._starting is not None:
            try:  # a session still starting is stopped too, not left to the interpreter's exit
                self._spark = self._starting.result()
            except Exception as exc:  # noqa: BLE001 - no session to stop; its error was the flows' to report
                logger.debug("Spark session did not start: %s", exc)
        if self._spark is not None:
            from sparkmirror.pipeline.session import stop_quietly

            stop_quietly(self._spark, "Spark session")
            self._spark = None
