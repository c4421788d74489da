"""Two `sparkmirror run` processes with one file: one runs the flow, one stands by and takes over.

Each process has a state dir of its own (two hosts): what the standby continues from is what the first
committed on the target. The copy is slowed (600 records a micro-batch) so the kill lands mid-copy.
"""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.request
from collections import Counter

import pytest

from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.testing.kafka_cluster import free_port
from sparkmirror.testing.records import read_all

from .test_run_cli import backlog, copied, wait_for, write_config

PARTITIONS = 3
RECORDS = 20_000
PER_BATCH = 600
TAKEOVER_LIMIT_S = 20  # the bound: a standby writes within 20 s of the kill
START_S = 180
# The pause outlasts the group's session (10 s by default) and the writers' lease (half of it), and lasts at least
# until the standby writes (the test waits for that): the resumed process finds its flow running elsewhere.
PAUSE_S = 15
EXACTLY_ONCE = "A->B.exactly.once.support = required\n"


def api_status(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=5) as answer:
        return json.loads(answer.read())


def flow_state(port: int) -> tuple[str, str | None] | None:
    """(state, owner) of flow A->B as the process on `port` reports it; None before it answers."""
    try:
        flow = next(f for f in api_status(port)["flows"] if f["name"] == "A->B")
    except (OSError, ValueError, StopIteration):
        return None
    return flow["state"], flow["owner"]


def start_pair(start_cli, tmp_path, config: str) -> tuple:
    ports = (free_port(), free_port())
    first = start_cli("run", "--config", config, "--state-dir", str(tmp_path / "host1"), "--metrics-port",
                      str(ports[0]), log_name="host1")
    wait_for(lambda: (flow_state(ports[0]) or ("",))[0] == "running", START_S, "the first process to run A->B", first)
    second = start_cli("run", "--config", config, "--state-dir", str(tmp_path / "host2"), "--metrics-port",
                       str(ports[1]), log_name="host2")
    wait_for(lambda: (flow_state(ports[1]) or ("",))[0] == "standby", START_S, "the second process to stand by",
             second)
    return first, second, ports


def target_records(clusters, topic: str) -> Counter:
    return Counter((r.partition, r.value) for records in read_all(clusters.target, topic, PARTITIONS).values()
                   for r in records)


@pytest.mark.parametrize("once", [False, True], ids=["at-least-once", "exactly-once"])
def test_a_second_process_stands_by_and_takes_over_within_20_s_of_a_kill(clusters, start_cli, tmp_path, unique,
                                                                          once):
    topic = f"standby-{unique}"
    sent = backlog(clusters.source, topic, PARTITIONS, RECORDS, unique)
    config = write_config(tmp_path / "mm2.properties", clusters.source, clusters.target, topic,
                          f"sparkmirror.max.offsets.per.trigger = {PER_BATCH}\n" + (EXACTLY_ONCE if once else ""))
    target = ClusterAdmin("B", {"bootstrap.servers": clusters.target})
    first, second, ports = start_pair(start_cli, tmp_path, config)

    # one runs, one stands by, and both say which: /api/status and the log
    assert flow_state(ports[0])[0] == "running"
    wait_for(lambda: (flow_state(ports[1]) or ("", None))[1] is not None, 30, "the standby to name the owner")
    owner = flow_state(ports[1])[1]
    assert owner is not None and owner.endswith(f"-{first.pid}"), owner
    assert api_status(ports[1])["process"].endswith(f"-{second.pid}")
    wait_for(lambda: "stands by for A->B" in second.log_path.read_text(), 30, "the standby's log line", second)
    assert "runs A->B" in first.log_path.read_text()

    wait_for(lambda: copied(target, f"A.{topic}") > 2 * PER_BATCH, START_S, "the copy to be under way", first)
    at_kill = copied(target, f"A.{topic}")
    assert at_kill < RECORDS, "the kill must land mid-copy"
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    killed_at = time.monotonic()
    # exactly once: the standby's fencing of the dead writer's transactions adds abort markers (offsets, no
    # records), so only records a read_committed reader sees count as written
    written = ((lambda: sum(map(len, read_all(clusters.target, f"A.{topic}", PARTITIONS).values()))) if once else
               (lambda: copied(target, f"A.{topic}")))
    at_kill = written()
    wait_for(lambda: written() > at_kill, 60, "the standby to write", second)
    takeover_s = time.monotonic() - killed_at
    assert takeover_s < TAKEOVER_LIMIT_S, f"the standby wrote {takeover_s:.1f} s after the kill"
    assert (flow_state(ports[1]) or ("",))[0] == "running"

    wait_for(lambda: copied(target, f"A.{topic}") >= RECORDS, START_S, "the whole copy", second)
    on_b = target_records(clusters, f"A.{topic}")
    expected = {(r.partition, r.value) for r in sent}
    assert expected <= set(on_b), f"{len(expected - set(on_b))} records lost"
    duplicates = sum(on_b.values()) - len(on_b)
    # at least once: what the killed process wrote after its last committed report (every 500 ms) comes again,
    # at most a micro-batch in flight here; never the whole copy again. Exactly once: none, for read_committed.
    assert duplicates <= (0 if once else PER_BATCH), f"{duplicates} duplicates"
    print(f"takeover {takeover_s:.1f} s, {duplicates} duplicates")


@pytest.mark.parametrize("once", [False, True], ids=["at-least-once", "exactly-once"])
def test_a_paused_process_writes_nothing_once_its_flow_runs_elsewhere(clusters, start_cli, tmp_path, unique, once):
    topic = f"paused-{unique}"
    sent = backlog(clusters.source, topic, PARTITIONS, RECORDS, unique)
    config = write_config(tmp_path / "mm2.properties", clusters.source, clusters.target, topic,
                          f"sparkmirror.max.offsets.per.trigger = {PER_BATCH}\n" + (EXACTLY_ONCE if once else ""))
    target = ClusterAdmin("B", {"bootstrap.servers": clusters.target})
    first, second, ports = start_pair(start_cli, tmp_path, config)
    wait_for(lambda: copied(target, f"A.{topic}") > 2 * PER_BATCH, START_S, "the copy to be under way", first)
    os.killpg(first.pid, signal.SIGSTOP)  # the whole host pauses: Python and its Spark JVM
    paused_at = time.monotonic()
    try:
        at_pause = copied(target, f"A.{topic}")
        wait_for(lambda: copied(target, f"A.{topic}") > at_pause, 60, "the standby to take over", second)
        time.sleep(max(0.0, PAUSE_S - (time.monotonic() - paused_at)))
    finally:
        os.killpg(first.pid, signal.SIGCONT)
        resumed_at = time.monotonic()
    # it notices at once: its late clock (`was paused`) or the group's answer (`session ... expired`)
    wait_for(lambda: "stops A->B" in first.log_path.read_text(), 30, "the paused process to stop its flow", first)
    wait_for(lambda: (flow_state(ports[0]) or ("",))[0] == "standby", 60, "the paused process to stand by", first)
    wait_for(lambda: copied(target, f"A.{topic}") >= RECORDS, START_S, "the whole copy", second)
    time.sleep(2)  # anything the resumed process still had to write would land now
    on_b = target_records(clusters, f"A.{topic}")
    expected = {(r.partition, r.value) for r in sent}
    assert expected <= set(on_b), f"{len(expected - set(on_b))} records lost"
    duplicates = sum(on_b.values()) - len(on_b)
    assert duplicates <= (0 if once else PER_BATCH), f"{duplicates} duplicates"
    assert first.poll() is None and second.poll() is None
    print(f"{duplicates} duplicates after a {resumed_at - paused_at:.0f} s pause")
