"""Heartbeats for every pair of clusters, replicated or not (MM2's clusterPairs; issue 16, item 4).

With only A->B enabled, MM2 still runs B->A's heartbeat connector: B->A beats into A's `heartbeats`, A->B
replicates that topic to B as `A.heartbeats`, and there RemoteClusterUtils.upstreamClusters finds A.
"""

from __future__ import annotations

import time

from sparkmirror.config.mm2 import load_config
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.internal_log import read_internal_topic
from sparkmirror.mirror_status import read_status
from sparkmirror.offsets.codec import decode_heartbeat
from sparkmirror.offsets.flow_report import CAUGHT_UP
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER

from .conftest import trigger_settings, wait_until

BEAT_TIMEOUT_S = 60.0
REPLICATED_TIMEOUT_S = 120.0


def beats_since(bootstrap: str, topic: str, since_ms: int) -> set[tuple[str, str]]:
    """(source, target) of the heartbeats in `topic` stamped at or after `since_ms`."""
    records = read_internal_topic("check", {"bootstrap.servers": bootstrap}, topic)
    return {(b.source_alias, b.target_alias) for b in (decode_heartbeat(r.key, r.value) for r in records)
            if b.timestamp_ms >= since_ms}


def test_a_one_way_flow_beats_back_and_its_target_learns_its_upstream(clusters, running, create_topic, tmp_path,
                                                                     unique):
    topic = f"beats-{unique}"
    create_topic("A", topic, 1)
    path = tmp_path / "mm2.properties"
    path.write_text(f"clusters = A, B\nA.bootstrap.servers = {clusters.source}\n"
                    f"B.bootstrap.servers = {clusters.target}\nA->B.enabled = true\nA->B.topics = {topic}\n"
                    f"{SINGLE_BROKER}{trigger_settings('micro-batch')}")  # heartbeats replicate, as MM2's default
    since_ms = int(time.time() * 1000)

    with running(path) as supervisor:
        assert list(supervisor.flows) == ["A->B"] and supervisor.heartbeats.names == ("B->A",)
        wait_until(lambda: ("B", "A") in beats_since(clusters.source, "heartbeats", since_ms), BEAT_TIMEOUT_S,
                   "B->A's heartbeats in A's heartbeats topic")
        wait_until(lambda: ("B", "A") in beats_since(clusters.target, "A.heartbeats", since_ms),
                   REPLICATED_TIMEOUT_S, "B->A's heartbeats replicated to B as A.heartbeats")
        # Idle but for the heartbeats beating into its source (a record a second), the flow is in step: `status`
        # calls it caught up every time, not only when it reads between a beat and its copy (issue 34).
        wait_until(lambda: read_status(path).flows[0].state == CAUGHT_UP, REPLICATED_TIMEOUT_S,
                   "the heartbeats' backlog to be copied")
        states = []
        for _ in range(6):
            time.sleep(1)
            states.append(read_status(path).flows[0].state)
        assert states == [CAUGHT_UP] * 6, states
        # the pair itself, from its target's heartbeats topic: `sparkmirror status` lists it
        assert [(p.source, p.target, p.state) for p in read_status(path).pairs] == [("B", "A", "beating")]

    policy = load_config(path).flow("A", "B").policy
    on_b = ClusterAdmin("B", {"bootstrap.servers": clusters.target}).topic_partitions()
    upstream = {policy.topic_source(t) for t in on_b if policy.is_heartbeats_topic(t)} - {None}
    assert "A" in upstream  # what RemoteClusterUtils.upstreamClusters reads from B's topics
