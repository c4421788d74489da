"""`sparkmirror status`: the lag of a flow whose sparkmirror is stopped, read from the clusters alone."""

from __future__ import annotations

import json
import signal
import subprocess
import time

from sparkmirror import client
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord, NewTopicSpec
from sparkmirror.testing.kafka_cluster import free_port
from sparkmirror.testing.records import commit_offsets, produce

from .conftest import cli_command
from .test_run_cli import wait_for, write_config

PER_PARTITION = 10  # records in each of the 2 partitions before the stop
MORE = 4  # records produced to partition 1 while sparkmirror is stopped
GROUP_OFFSET = 5
REPLICATION_S = 180
STATUS_S = 60
ACTIVE_WINDOW_S = 60  # offsets/flow_report.ACTIVE_WINDOW_MS: a sync this recent means "replicating"
CHECKPOINTS_FAST = "emit.checkpoints.interval.seconds = 1\nrefresh.groups.interval.seconds = 1\n"


def synced_to(config: str, topic: str) -> dict[int, int]:
    """The highest upstream offset of the offset syncs written for each partition of `topic`."""
    out: dict[int, int] = {}
    for sync in client.read_offset_syncs(config, "A", "B"):
        if sync.topic == topic:
            out[sync.partition] = max(out.get(sync.partition, -1), sync.upstream_offset)
    return out


def status(config: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(cli_command("status", "--config", config, *extra), capture_output=True, text=True,
                          timeout=STATUS_S)


def expected_state(age_s: float) -> str:
    return "replicating" if age_s < ACTIVE_WINDOW_S else "stalled"


def test_status_reports_the_lag_of_a_stopped_flow(clusters, start_cli, tmp_path, unique):
    topic, group = f"status-{unique}", f"status-group-{unique}"
    assert ClusterAdmin("A", {"bootstrap.servers": clusters.source}).create_topics(
        [NewTopicSpec(topic, 2, 1)])[topic] is None
    now_ms = int(time.time() * 1000)
    produce(clusters.source, topic, (KafkaRecord(i % 2, -1, str(i).encode(), b"v", (), 0, now_ms)
                                     for i in range(2 * PER_PARTITION)))
    commit_offsets(clusters.source, group, {(topic, p): GROUP_OFFSET for p in (0, 1)})
    config = write_config(tmp_path / "mm2.properties", clusters.source, clusters.target, topic, CHECKPOINTS_FAST)

    run = start_cli("run", "--config", config, "--state-dir", str(tmp_path / "state"))
    wait_for(lambda: synced_to(config, topic) == {0: PER_PARTITION - 1, 1: PER_PARTITION - 1}, REPLICATION_S,
             "offset syncs of every record", run)
    wait_for(lambda: len(client.read_checkpoints(config, "A", "B", group)) == 2, REPLICATION_S,
             f"checkpoints of group {group}", run)
    run.send_signal(signal.SIGTERM)
    assert run.wait(timeout=60) == 0, run.log_path.read_text()[-3000:]

    produce(clusters.source, topic, (KafkaRecord(1, -1, b"late", b"v", (), 0, int(time.time() * 1000))
                                     for _ in range(MORE)))

    result = status(config, "--json")
    assert result.returncode == 0, result.stderr[-3000:]
    [flow] = json.loads(result.stdout)["flows"]
    assert flow["flow"] == "A->B"
    assert len(flow["partitions"]) == 2, result.stdout
    p0, p1 = flow["partitions"]
    assert [(p["topic"], p["partition"]) for p in (p0, p1)] == [(topic, 0), (topic, 1)]
    assert (p0["end_offset"], p0["position"], p0["lag_records"], p0["state"]) == (
        PER_PARTITION, PER_PARTITION, 0, "caught up"), result.stdout
    assert (p1["end_offset"], p1["position"], p1["lag_records"]) == (PER_PARTITION + MORE, PER_PARTITION, MORE), \
        result.stdout
    assert p1["lag_seconds"] is not None and p1["lag_seconds"] > 0, result.stdout
    assert p1["state"] == expected_state(p1["last_sync"]["age_s"])
    for p in (p0, p1):
        assert p["last_sync"]["upstream_offset"] == PER_PARTITION - 1
    assert (flow["lag_records"], flow["state"]) == (MORE, expected_state(p1["last_sync"]["age_s"]))
    [checkpoints] = [g for g in flow["groups"] if g["group"] == group] or [result.stdout]
    assert [(c["topic"], c["partition"], c["upstream_offset"], c["downstream_offset"])
            for c in checkpoints["partitions"]] == [(f"A.{topic}", p, GROUP_OFFSET, GROUP_OFFSET) for p in (0, 1)]

    text = status(config)
    assert text.returncode == 0, text.stderr[-3000:]
    assert "flow A->B:" in text.stdout
    rows = [line.split() for line in text.stdout.splitlines() if line.strip().startswith(topic)]
    assert [row[1] for row in rows] == ["0", "1"], text.stdout
    assert group in text.stdout

    # The target down: what the source gave (end offsets, offset syncs) is still reported, B is named.
    dead = write_config(tmp_path / "dead-target.properties", clusters.source, f"127.0.0.1:{free_port()}", topic)
    down = status(dead, "--json")
    assert down.returncode == 3, down.stderr[-3000:]
    report = json.loads(down.stdout)
    assert report["unreachable"] == ["B"]
    [flow] = report["flows"]
    assert flow["state"] == "unreachable", down.stdout
    assert [u["cluster"] for u in flow["unreachable"]] == ["B"]
    assert [(p["partition"], p["lag_records"]) for p in flow["partitions"]] == [(0, 0), (1, MORE)]
    assert "Traceback" not in down.stderr
