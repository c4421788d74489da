"""The process's status as JSON for the web view (`/api/status`); pure: a Status and a time in, a dict out."""

from __future__ import annotations

import math

from sparkmirror.runtime.status import FlowStatus, Status


def status_json(status: Status, now_ms: int) -> dict:
    """Clusters, flows with their partitions and periodic jobs; unknown numbers are null."""
    return {"time_ms": now_ms, "clusters": list(status.clusters) or _clusters_of(status),
            "process": status.process, "coordinated": status.coordinated,
            "flows": [_flow(f, status, now_ms) for f in status.flows]}


def _clusters_of(status: Status) -> list[str]:
    return list(dict.fromkeys(a for f in status.flows for a in (f.source, f.target)))


def _number(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else round(value, 3)


def _flow(f: FlowStatus, status: Status, now_ms: int) -> dict:
    point = f.recovery_point(now_ms)
    lags = {(lag.topic, lag.partition): lag for lag in f.lag or ()}
    keys = list(dict.fromkeys([*f.positions, *f.progress.partitions, *lags, *f.progress.removed]))
    partitions = []
    for topic, partition in sorted(keys):
        p = f.progress.partitions.get((topic, partition))
        lag = lags.get((topic, partition))
        partitions.append({
            "topic": topic, "remote_topic": f.remote(topic), "partition": partition,
            "records": p.records if p else 0, "records_per_s": _number(p.records_per_s) if p else 0.0,
            "position": f.positions.get((topic, partition)),
            "removed_before_copy": f.progress.removed.get((topic, partition), 0),
            "end_offset": lag.end_offset if lag else None,
            "lag_records": lag.records if lag else None,
            "lag_seconds": _number(lag.seconds(now_ms)) if lag else None,
            "record_age_ms_avg": _number(p.record_age_ms.avg) if p and p.record_age_ms else None,
            "replication_latency_ms_avg": (_number(p.replication_latency_ms.avg)
                                           if p and p.replication_latency_ms else None)})
    return {
        "name": f.flow, "source": f.source, "target": f.target, "state": f.state, "failure": f.failure,
        "owner": f.owner,
        "records": f.progress.records, "bytes": f.progress.bytes,
        "records_per_s": _number(f.progress.window_records_per_s),
        "bytes_per_s": _number(f.progress.window_value_bytes_per_s),
        "lag_records": point.records if point else None,
        "lag_seconds": _number(point.seconds) if point else None,
        "rpo_records": point.records if point else None,
        "rpo_seconds": _number(point.seconds) if point else None,
        "restarts": f.restarts, "retries": f.progress.retries, "written_again": f.progress.written_again,
        "removed_before_copy": f.progress.removed_records,
        "partitions": partitions,
        "jobs": [{"name": j.name, "runs": j.runs, "failures": j.failures, "failures_in_a_row": j.failures_in_a_row,
                  "last_error": j.last_error} for j in status.flow_jobs(f.flow)],
    }
