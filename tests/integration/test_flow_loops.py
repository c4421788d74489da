"""Each flow's jobs on loops of its own (issue 33, item 3): a cluster that is down delays only the flow writing to it.

Two flows from A: A->B and A->C, C a cluster of this module's own. Heartbeats every second, checkpoints every
two, a group on A committing all the time. C is killed for OUTAGE_S, long enough for A->C's jobs to wait out
a whole timeout on it (30 s a write): meanwhile A->B's heartbeats on B and its checkpoints keep
their interval (no gap between consecutive records reaches three intervals) and A->B keeps replicating. Once C
is back on its data, A->C copies what was written meanwhile and beats again. With every flow's jobs on one loop,
A->B's gaps during the outage were those timeouts.
"""

from __future__ import annotations

import threading
import time

import pytest

from sparkmirror.kafka.internal_log import read_internal_topic
from sparkmirror.offsets.codec import decode_checkpoint, decode_heartbeat
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER, LocalKafkaCluster
from sparkmirror.testing.records import produce

from .conftest import ONLY_OWN_TOPICS, commit, count_records, records, trigger_settings, wait_until
from .test_control_recovery import QUICK_RESTART

HEARTBEAT_S = 1
CHECKPOINT_S = 2
GAP_FACTOR = 3  # the largest gap allowed between two consecutive records, in intervals
OUTAGE_S = 40
BACKLOG = 20_000
REPLICATED_TIMEOUT_S = 120
EDGE_MS = 2_000  # how far before and after the outage the records are taken into account
# A->B's jobs run this long at their pace, after its first checkpoint, before C goes down: the window measured,
# opening EDGE_MS before the outage, starts a checkpoint interval after that first checkpoint
STEADY_S = EDGE_MS / 1000 + CHECKPOINT_S
RECOVERY_TIMEOUT_S = 240  # A->C's retries back off while C is down (5 s, 10 s, 20 s, ...)


@pytest.fixture(scope="module")
def cluster_c():
    cluster = LocalKafkaCluster("test-loops-c", broker_config=QUICK_RESTART).start()
    yield cluster
    cluster.stop()


class Committer:
    """Commits a group on a topic's partition 0 every 0.25 s, 10 offsets further each time (up to `last`)."""

    def __init__(self, bootstrap: str, group: str, topic: str, last: int) -> None:
        self.bootstrap, self.group, self.topic, self.last = bootstrap, group, topic, last
        self.offset = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            self.offset = min(self.last, self.offset + 10)
            commit(self.bootstrap, self.group, {(self.topic, 0): self.offset})

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)


def heartbeat_times(bootstrap: str, source: str, target: str) -> list[int]:
    """The timestamps of the heartbeats of flow source->target in the cluster's `heartbeats` topic."""
    beats = (decode_heartbeat(r.key, r.value) for r in read_internal_topic("check", {"bootstrap.servers": bootstrap},
                                                                           "heartbeats"))
    return sorted(b.timestamp_ms for b in beats if (b.source_alias, b.target_alias) == (source, target))


def checkpoint_times(bootstrap: str, topic: str, group: str) -> list[int]:
    """The timestamps of the checkpoints records of `group` in a checkpoints topic."""
    return sorted(r.timestamp_ms for r in read_internal_topic("check", {"bootstrap.servers": bootstrap}, topic)
                  if decode_checkpoint(r.key, r.value).group == group)


def largest_gap_s(times_ms: list[int], start_ms: int, end_ms: int) -> float:
    """The longest stretch of [start_ms, end_ms] without a record (edges included)."""
    inside = [t for t in times_ms if start_ms <= t <= end_ms]
    points = [start_ms, *inside, end_ms]
    return max(b - a for a, b in zip(points, points[1:], strict=False)) / 1000


@pytest.mark.timeout(600)
def test_a_cluster_that_is_down_delays_only_the_flow_writing_to_it(clusters, cluster_c, running, create_topic,
                                                                   tmp_path, unique):
    topic, group = f"loops-{unique}", f"loops-{unique}"
    create_topic("A", topic, 1)
    produce(clusters.source, topic, records("backlog", BACKLOG))
    path = tmp_path / "mm2.properties"
    path.write_text(f"clusters = A, B, C\nA.bootstrap.servers = {clusters.source}\n"
                    f"B.bootstrap.servers = {clusters.target}\nC.bootstrap.servers = {cluster_c.bootstrap_servers}\n"
                    f"A->B.enabled = true\nA->B.topics = {topic}\nA->C.enabled = true\nA->C.topics = {topic}\n"
                    f"groups = {group}\n{SINGLE_BROKER}{ONLY_OWN_TOPICS}{trigger_settings('micro-batch')}"
                    # the flows' own heartbeats only: no heartbeat-only pair (B->A, C->B, ...)
                    "emit.heartbeats.enabled = false\nA->B.emit.heartbeats.enabled = true\n"
                    f"A->C.emit.heartbeats.enabled = true\nemit.heartbeats.interval.seconds = {HEARTBEAT_S}\n"
                    f"emit.checkpoints.interval.seconds = {CHECKPOINT_S}\n"
                    f"refresh.groups.interval.seconds = {CHECKPOINT_S}\n")
    remote = f"A.{topic}"
    committer = None
    try:
        with running(path) as supervisor:
            assert supervisor.heartbeats.names == ()
            for bootstrap in (clusters.target, cluster_c.bootstrap_servers):
                wait_until(lambda b=bootstrap: count_records(b, remote) == BACKLOG, REPLICATED_TIMEOUT_S,
                           f"the backlog on {bootstrap}")
            committer = Committer(clusters.source, group, topic, BACKLOG)
            wait_until(lambda: checkpoint_times(clusters.target, "A.checkpoints.internal", group), 60,
                       "A->B's first checkpoint")
            time.sleep(STEADY_S)  # the jobs at their pace before the outage (the window measured starts there)

            cluster_c.kill()
            down_ms = int(time.time() * 1000)
            produce(clusters.source, topic, records("outage", 100))
            while time.time() * 1000 - down_ms < OUTAGE_S * 1000:  # the outage; A->B must stay running
                assert supervisor.status().flow("A->B").state == "running"
                time.sleep(1)
            up_ms = int(time.time() * 1000)
            cluster_c.restart()

            assert count_records(clusters.target, remote) == BACKLOG + 100, "A->B replicated during the outage"
            beats = heartbeat_times(clusters.target, "A", "B")
            checkpoints = checkpoint_times(clusters.target, "A.checkpoints.internal", group)
            beat_gap = largest_gap_s(beats, down_ms - EDGE_MS, up_ms + EDGE_MS)
            checkpoint_gap = largest_gap_s(checkpoints, down_ms - EDGE_MS, up_ms + EDGE_MS)
            print(f"\nduring the {OUTAGE_S} s outage of C: A->B's heartbeats on B: "
                  f"{sum(down_ms <= t <= up_ms for t in beats)} (every {HEARTBEAT_S} s), largest gap {beat_gap:.2f} s; "
                  f"its checkpoints: {sum(down_ms <= t <= up_ms for t in checkpoints)} (every {CHECKPOINT_S} s), "
                  f"largest gap {checkpoint_gap:.2f} s")
            assert beat_gap < GAP_FACTOR * HEARTBEAT_S, f"A->B's heartbeats stalled {beat_gap:.1f} s while C was down"
            assert checkpoint_gap < GAP_FACTOR * CHECKPOINT_S, \
                f"A->B's checkpoints stalled {checkpoint_gap:.1f} s while C was down"

            produce(clusters.source, topic, records("after", 100))
            back = time.monotonic()
            wait_until(lambda: count_records(cluster_c.bootstrap_servers, remote) == BACKLOG + 200,
                       RECOVERY_TIMEOUT_S, "A->C to copy what was written during and after the outage")
            wait_until(lambda: any(t > up_ms for t in heartbeat_times(cluster_c.bootstrap_servers, "A", "C")),
                       RECOVERY_TIMEOUT_S, "A->C's heartbeats on C again")
            print(f"A->C caught up {time.monotonic() - back:.1f} s after C was back")
            assert supervisor.status().flow("A->B").state == "running"
    finally:
        if committer is not None:
            committer.stop()
