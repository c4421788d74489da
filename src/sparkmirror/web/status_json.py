"""The process's status as JSON for the web view (`/api/status`); pure: a Status and a time in, a dict out."""

from __future__ import annotations

import math

from sparkmirror.runtime.status import FlowStatus, HeartbeatPairStatus, Status


def status_json(status: Status, now_ms: int) -> dict:
    """Clusters (and whether each answers), flows with their partitions and periodic jobs, heartbeat-only pairs;
    unknown numbers are null."""
    return {"time_ms": now_ms, "clusters": list(status.clusters) or _clusters_of(status),
            "process": status.process, "coordinated": status.coordinated,
            "cluster_states": [{"name": c.alias, "state": c.state, "error": c.error, "since_ms": c.since_ms,
                                "checked_ms": c.checked_ms} for c in status.cluster_health],
            "flows": [_flow(f, status, now_ms) for f in status.flows],
            "heartbeat_pairs": [_pair(p, now_ms) for p in status.heartbeat_pairs]}


def _pair(p: HeartbeatPairStatus, now_ms: int) -> dict:
    return {"name": p.name, "source": p.source, "target": p.target, "state": p.state, "interval_s": p.interval_s,
            "beats": p.beats, "failures": p.failures, "failures_in_a_row": p.failures_in_a_row,
            "last_error": p.last_error, "last_beat_ms": p.last_beat_ms, "last_beat_age_s": _number(p.age_s(now_ms))}


def _clusters_of(status: Status) -> list[str]:
    return list(dict.fromkeys(a for f in status.flows for a in (f.source, f.target)))


def _number(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else round(value, 3)


def _flow(f: FlowStatus, status: Status, now_ms: int) -> dict:
    point = f.recovery_point(now_ms)
    condition = status.condition(f, now_ms)
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
        "recent_records_per_s": _number(f.progress.recent_records_per_s),  # the last 5 s: 0 soon after a stop
        "condition": condition.text if condition else None,  # a running flow's trouble: a cluster down, stalled
        "condition_level": condition.level if condition else None,  # bad or warn
        "quiet_s": _number(f.quiet_s),
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
