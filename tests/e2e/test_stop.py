"""`sparkmirror run` stops within its deadline whatever state the clusters are in (issue 13)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time

import pytest

from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord, NewTopicSpec
from sparkmirror.testing.kafka_cluster import LocalKafkaCluster
from sparkmirror.testing.records import produce

from .test_run_cli import copied, wait_for, write_config

STOP_TIMEOUT_S = 10
EXIT_SLACK_S = 10  # the interpreter's own exit after the deadline (Python, the JVM's end of its stdin)


@pytest.fixture
def own_source():
    """A source cluster of this test's own: it is killed mid-test."""
    with LocalKafkaCluster("stop-source") as cluster:
        yield cluster


def group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def test_sigterm_mid_checkpoint_round_with_the_source_down_exits_within_the_deadline(
        own_source, clusters, start_cli, tmp_path, unique):
    topic = f"stop-{unique}"
    source = ClusterAdmin("A", {"bootstrap.servers": own_source.bootstrap_servers})
    target = ClusterAdmin("B", {"bootstrap.servers": clusters.target})
    assert source.create_topics([NewTopicSpec(topic, 3, 1)])[topic] is None
    now_ms = int(time.time() * 1000)
    produce(own_source.bootstrap_servers, topic,
            (KafkaRecord(i % 3, -1, str(i).encode(), b"v", (), 0, now_ms) for i in range(300)))
    config = write_config(tmp_path / "mm2.properties", own_source.bootstrap_servers, clusters.target, topic,
                          "emit.checkpoints.interval.seconds = 1\nsync.group.offsets.interval.seconds = 1\n"
                          # the checkpoint round is then the only job that waits on A
                          "refresh.topics.enabled = false\nsync.topic.configs.enabled = false\n")
    proc = start_cli("run", "--config", config, "--state-dir", str(tmp_path / "state"),
                     "--stop-timeout", str(STOP_TIMEOUT_S))
    wait_for(lambda: copied(target, f"A.{topic}") == 300, 180, "the records on B", proc)

    own_source.kill()
    time.sleep(3)  # a checkpoint round starts every second; with A down it waits on A's group listing
    proc.send_signal(signal.SIGTERM)  # to sparkmirror only, as `kill <pid>` does: it must end its JVM itself
    sent = time.monotonic()
    try:
        code = proc.wait(timeout=STOP_TIMEOUT_S + EXIT_SLACK_S)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"no exit {STOP_TIMEOUT_S + EXIT_SLACK_S} s after SIGTERM:\n"
                             f"{proc.log_path.read_text()[-3000:]}") from None
    took = time.monotonic() - sent
    log = proc.log_path.read_text()
    assert code == 0, log[-3000:]
    assert "stopped (SIGTERM)" in log
    # The round was in progress on the flow's loop and could not finish with A down: the stop names it and did not
    # wait for it.
    assert "abandoned the job 'A->B: emit checkpoints'" in log, log[-3000:]
    assert "Traceback" not in log
    wait_for(lambda: group_gone(proc.pid), 20, "the Spark JVM to end with sparkmirror")
    print(f"\nexit {took:.1f} s after SIGTERM (deadline {STOP_TIMEOUT_S} s)")


@pytest.fixture
def silent_port():
    """A port that accepts connections and never answers a Kafka request (a broker that hangs)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield listener.getsockname()[1]


def test_sigterm_while_start_waits_on_a_cluster_that_does_not_answer_exits_within_the_deadline(
        clusters, silent_port, start_cli, tmp_path, unique):
    """The start's probe of B waits 10 s for an answer; the stop does not wait for it."""
    config = write_config(tmp_path / "mm2.properties", clusters.source, f"127.0.0.1:{silent_port}",
                          f"never-{unique}")
    proc = start_cli("run", "--config", config, "--state-dir", str(tmp_path / "state"), "--stop-timeout", "3")
    time.sleep(3)  # python and the imports take about a second; then the probe of B waits
    proc.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    code = proc.wait(timeout=3 + EXIT_SLACK_S)
    log = proc.log_path.read_text()
    assert code == 0, log[-3000:]
    assert "abandoned the control loop (checking the clusters)" in log, log[-3000:]
    assert "stopped (SIGTERM)" in log and "Traceback" not in log
    assert time.monotonic() - sent < 3 + EXIT_SLACK_S
    wait_for(lambda: group_gone(proc.pid), 20, "every process of sparkmirror to end")
