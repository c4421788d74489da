"""Prometheus metrics of a running process, read from `Supervisor.status()` at each scrape.

Nothing is counted here: a scrape turns one immutable status snapshot into metric families, so the record
path pays nothing for metrics nobody reads. MM2's metrics carry the names Strimzi's JMX exporter rules give
MM2's MBeans (`kafka.connect.mirror:type=MirrorSourceConnector,...` -> `kafka_connect_mirror_
mirrorsourceconnector_<metric>`), so MM2 dashboards and alerts keep working; `metric.names.formats = new` (MM2
4.3, KIP-1280) gives the names of the new MBeans (`kafka.connect:type=plugins,connector=...,task=...`) instead,
and `legacy,new` both. sparkmirror's own metrics (lag, RPO, state, jobs, durations) start with `sparkmirror_`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from sparkmirror.runtime.progress import PartitionProgress
from sparkmirror.runtime.status import FlowStatus, Status
from sparkmirror.sampled import Distribution

LEGACY_SOURCE = "kafka_connect_mirror_mirrorsourceconnector_"
LEGACY_CHECKPOINT = "kafka_connect_mirror_mirrorcheckpointconnector_"
NEW_PREFIX = "kafka_connect_plugins_"  # KIP-1280: connector and task tags before MM2's own
SOURCE_CONNECTOR, CHECKPOINT_CONNECTOR, TASK = "MirrorSourceConnector", "MirrorCheckpointConnector", "0"
FLOW_STATES = ("running", "idle", "failed", "standby", "stopped")

PARTITION_LABELS = ["source", "target", "topic", "partition"]
FLOW_LABELS = ["source", "target"]


class _Families:
    """Gauge families by name, created on first use, so that only metrics with samples are exported."""

    def __init__(self) -> None:
        self.families: dict[str, Metric] = {}

    def gauge(self, name: str, doc: str, labels: list[str], values: list[str], value: float) -> None:
        self._add(GaugeMetricFamily, name, doc, labels, values, value)

    def counter(self, name: str, doc: str, labels: list[str], values: list[str], value: float) -> None:
        self._add(CounterMetricFamily, name, doc, labels, values, value)

    def _add(self, kind: type[GaugeMetricFamily] | type[CounterMetricFamily], name: str, doc: str,
             labels: list[str], values: list[str], value: float) -> None:
        family = self.families.get(name)
        if family is None:
            family = self.families[name] = kind(name, doc, labels=labels)
        family.add_metric(values, value)

    def mm2(self, formats: tuple[str, ...], connector: str, metric: str, doc: str, labels: list[str],
            values: list[str], value: float) -> None:
        """One of MM2's metrics, under the names `metric.names.formats` asks for."""
        if "legacy" in formats:
            prefix = LEGACY_SOURCE if connector == SOURCE_CONNECTOR else LEGACY_CHECKPOINT
            self.gauge(prefix + metric, doc, labels, values, value)
        if "new" in formats:
            self.gauge(NEW_PREFIX + metric, doc, ["connector", "task", *labels], [connector, TASK, *values], value)


class StatusCollector(Collector):
    """A prometheus_client collector over a status source (`Supervisor.status`)."""

    def __init__(self, status: Callable[[], Status], clock_ms: Callable[[], int] = lambda: int(time.time() * 1000)):
        self._status = status
        self._clock_ms = clock_ms

    def collect(self) -> Iterator[Metric]:
        status, now_ms = self._status(), self._clock_ms()
        out = _Families()
        histograms = []
        for flow in status.flows:
            _source_metrics(out, flow)
            _checkpoint_metrics(out, flow)
            _lag_metrics(out, flow, now_ms)
            _flow_metrics(out, flow)
            histograms.append(flow)
        for job in status.jobs:
            flow = next((f for f in status.flows if f.flow == job.flow), None)
            if flow is None:
                continue
            labels, values = [*FLOW_LABELS, "job"], [flow.source, flow.target, job.name]
            out.counter("sparkmirror_job_runs", "Runs of a flow's periodic job since the process started.",
                        labels, values, job.runs)
            out.counter("sparkmirror_job_failures", "Failed runs of a flow's periodic job since the process "
                        "started.", labels, values, job.failures)
            out.gauge("sparkmirror_job_failures_in_a_row", "Failed runs of the job since its last success.",
                      labels, values, job.failures_in_a_row)
        _cluster_metrics(out, status)
        _heartbeat_pair_metrics(out, status, now_ms)
        yield from out.families.values()
        yield _durations(histograms)


def _source_metrics(out: _Families, flow: FlowStatus) -> None:
    formats = flow.metric_names
    partitions = dict.fromkeys(flow.positions)
    partitions.update(dict.fromkeys(flow.progress.partitions))
    for topic, partition in partitions:
        p = flow.progress.partitions.get((topic, partition)) or _NOTHING_YET
        values = [flow.source, flow.target, flow.remote(topic), str(partition)]

        def mm2(metric: str, doc: str, value: float, values: list[str] = values) -> None:
            out.mm2(formats, SOURCE_CONNECTOR, metric, doc, PARTITION_LABELS, values, value)

        mm2("record_count", "Records replicated and acknowledged by the target since the process started.",
            p.records)
        mm2("record_rate", "Records replicated per second (over the last 60 s).", p.records_per_s)
        mm2("byte_count", "Value bytes replicated since the process started (keys and headers not counted, as "
            "in MM2).", p.value_bytes)
        mm2("byte_rate", "Value bytes replicated per second (over the last 60 s).", p.value_bytes_per_s)
        _distribution(mm2, "record_age_ms", "Age of a record when the record path read it: send time minus "
                      "its source timestamp.", p.record_age_ms)
        _distribution(mm2, "replication_latency_ms", "Time from a record's source timestamp to the target's "
                      "acknowledgement of its copy.", p.replication_latency_ms)
        out.counter("sparkmirror_records_dropped", "Records a transform or filter dropped: not written, their "
                    "offsets passed.", PARTITION_LABELS, values, p.dropped)
        out.counter("sparkmirror_records_failed", "Records skipped because a transform failed on them "
                    "(errors.tolerance = all; Connect's total-records-skipped).", PARTITION_LABELS, values, p.failed)


_NOTHING_YET = PartitionProgress(0, 0, 0.0, 0.0, None, None)


def _distribution(emit: Callable[..., None], metric: str, doc: str, d: Distribution | None) -> None:
    """MM2's last value, min, max and avg of one measure (NaN while there is no sample, as Kafka's stats)."""
    if d is None:
        d = Distribution(math.nan, None, None, None)
    emit(metric, doc + " Last value.", d.last)
    for suffix, value in (("min", d.min), ("max", d.max), ("avg", d.avg)):
        emit(f"{metric}_{suffix}", f"{doc} {suffix.capitalize()} over the last 60 s.",
             math.nan if value is None else value)


def _checkpoint_metrics(out: _Families, flow: FlowStatus) -> None:
    if flow.checkpoints is None:
        return
    labels = ["source", "target", "group", "topic", "partition"]
    for (group, topic, partition), d in sorted(flow.checkpoints.latency_ms.items()):
        values = [flow.source, flow.target, group, topic, str(partition)]

        def mm2(metric: str, doc: str, value: float, values: list[str] = values) -> None:
            out.mm2(flow.metric_names, CHECKPOINT_CONNECTOR, metric, doc, labels, values, value)

        _distribution(mm2, "checkpoint_latency_ms", "Time from planning a group's checkpoint to the target's "
                      "acknowledgement of its write.", d)
    for group, lag in sorted(flow.checkpoints.group_lag.items()):
        out.gauge("sparkmirror_checkpoint_lag_records", "Committed source offsets of a group beyond its latest "
                  "checkpoints, summed over its partitions.", [*FLOW_LABELS, "group"],
                  [flow.source, flow.target, group], lag)


def _lag_metrics(out: _Families, flow: FlowStatus, now_ms: int) -> None:
    if flow.lag is None:
        return
    for lag in flow.lag:
        values = [flow.source, flow.target, flow.remote(lag.topic), str(lag.partition)]
        out.gauge("sparkmirror_replication_lag_records", "Source records not replicated yet: end offset minus "
                  "replicated position (transaction markers not counted).", PARTITION_LABELS, values, lag.records)
        seconds = lag.seconds(now_ms)
        out.gauge("sparkmirror_replication_lag_seconds", "Age of the oldest source record not replicated yet "
                  "(0 when caught up).", PARTITION_LABELS, values, math.nan if seconds is None else seconds)
    point = flow.recovery_point(now_ms)
    assert point is not None
    values = [flow.source, flow.target]
    seconds = math.nan if point.seconds is None else point.seconds
    for name, value, doc in (
            ("sparkmirror_flow_replication_lag_records", point.records, "Records not replicated yet, all "
             "partitions of the flow."),
            ("sparkmirror_flow_replication_lag_seconds", seconds, "Age of the flow's oldest record not "
             "replicated yet."),
            ("sparkmirror_flow_rpo_records", point.records, "Recovery point estimate: records lost if the source "
             "cluster died now."),
            ("sparkmirror_flow_rpo_seconds", seconds, "Recovery point estimate: seconds of source writes lost if "
             "the source cluster died now.")):
        out.gauge(name, doc, FLOW_LABELS, values, value)


def _flow_metrics(out: _Families, flow: FlowStatus) -> None:
    values = [flow.source, flow.target]
    for state in FLOW_STATES:
        out.gauge("sparkmirror_flow_state", "1 for the flow's current state (running, idle, failed, standby, stopped).",
                  [*FLOW_LABELS, "state"], [*values, state], 1.0 if flow.state == state else 0.0)
    out.gauge("sparkmirror_flow_recent_record_rate", "Records replicated per second over the last 5 s (0 soon "
              "after the copy stops).", FLOW_LABELS, values, flow.progress.recent_records_per_s)
    out.counter("sparkmirror_flow_restarts", "Starts of the flow's query (the first, topic-set changes, "
                "retries).", FLOW_LABELS, values, flow.restarts)
    out.counter("sparkmirror_flow_retries", "Starts of the flow again after a failure, with back-off.",
                FLOW_LABELS, values, flow.progress.retries)
    out.counter("sparkmirror_records_written_again", "Records written to the target a second time (at least "
                "once: a retried task, e.g. after an executor was lost).", FLOW_LABELS, values,
                flow.progress.written_again)
    for (topic, partition), records in sorted(flow.progress.removed.items()):
        out.counter("sparkmirror_records_removed_before_copy", "Source records removed (retention, DeleteRecords) "
                    "before the flow copied them: the target never gets them.", PARTITION_LABELS,
                    [flow.source, flow.target, flow.remote(topic), str(partition)], records)


def _cluster_metrics(out: _Families, status: Status) -> None:
    for c in status.cluster_health:
        if c.state != "unknown":
            out.gauge("sparkmirror_cluster_up", "1 while the cluster answers its probe (every 2 s, 2 s timeout), "
                      "0 while it does not.", ["cluster"], [c.alias], 1.0 if c.state == "up" else 0.0)


def _heartbeat_pair_metrics(out: _Families, status: Status, now_ms: int) -> None:
    for p in status.heartbeat_pairs:
        values = [p.source, p.target]
        out.counter("sparkmirror_heartbeat_pair_beats", "Heartbeats written for a heartbeat-only pair (MM2's "
                    "clusterPairs) since the process started.", FLOW_LABELS, values, p.beats)
        out.counter("sparkmirror_heartbeat_pair_failures", "Heartbeats of a heartbeat-only pair that could not be "
                    "written since the process started.", FLOW_LABELS, values, p.failures)
        age = p.age_s(now_ms)
        out.gauge("sparkmirror_heartbeat_pair_last_beat_age_seconds", "Seconds since the last heartbeat of a "
                  "heartbeat-only pair was written (NaN before the first).", FLOW_LABELS, values,
                  math.nan if age is None else age)


def _durations(flows: list[FlowStatus]) -> Metric:
    family = HistogramMetricFamily("sparkmirror_batch_duration_seconds", "Duration of a micro-batch, or of a "
                                   "Real-Time Mode report interval, from its start to its report.",
                                   labels=FLOW_LABELS)
    for flow in flows:
        d = flow.progress.durations
        if d is None:
            continue
        buckets = [(repr(bound), count) for bound, count in d.buckets] + [("+Inf", d.count)]
        family.add_metric([flow.source, flow.target], buckets, d.sum_s)
    return family
