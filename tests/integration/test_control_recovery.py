"""The control plane after a broker restart (issue 13): checkpoints and group offset sync resume by themselves.

A long-lived librdkafka admin client stayed broken after its cluster restarted (every offset fetch of a group
timed out until sparkmirror restarted). Each side is killed and restarted in turn, on clusters of this
module's own; after each comes back, a new commit of the group on A must reach B's checkpoints and B's group
within two intervals.
"""

from __future__ import annotations

import time

import pytest

from sparkmirror import client
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import NewTopicSpec
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER, start_clusters
from sparkmirror.testing.records import produce

from .conftest import commit, committed, count_records, records, trigger_settings, wait_until

INTERVAL_S = 5
OUTAGE_S = 6  # long enough for rounds to fail against the dead broker
# A broker restarted after a SIGKILL serves again only once its controller has fenced the killed one's registration
# (DUPLICATE_BROKER_REGISTRATION until broker.session.timeout.ms, 9 s by default, has passed): with a 3 s session
# a restart takes about 5 s instead of 12. For clusters the tests kill (test_flow_loops.py too).
QUICK_RESTART = {"broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "500"}


@pytest.fixture(scope="module")
def own_pair():
    pair = start_clusters(["recovery-a", "recovery-b"], broker_config=QUICK_RESTART)
    yield pair
    for cluster in pair:
        cluster.stop()


def test_checkpoints_and_group_sync_resume_after_each_side_restarts(own_pair, running, tmp_path, unique):
    a, b = own_pair
    topic, group = f"recovery-{unique}", f"g-{unique}"
    remote = (f"A.{topic}", 0)
    assert ClusterAdmin("A", a.client_settings()).create_topics([NewTopicSpec(topic, 1, 1)])[topic] is None
    produce(a.bootstrap_servers, topic, records(unique, 100))
    path = tmp_path / "mm2.properties"
    path.write_text(f"clusters = A, B\nA.bootstrap.servers = {a.bootstrap_servers}\n"
                    f"B.bootstrap.servers = {b.bootstrap_servers}\nA->B.enabled = true\nA->B.topics = {topic}\n"
                    f"{SINGLE_BROKER}{trigger_settings('micro-batch')}"
                    f"emit.checkpoints.interval.seconds = {INTERVAL_S}\n"
                    f"refresh.groups.interval.seconds = {INTERVAL_S}\nsync.group.offsets.enabled = true\n"
                    f"sync.group.offsets.interval.seconds = {INTERVAL_S}\n"
                    # B holds the coordination group and is down longer than its default 10 s session, after
                    # which the flow would stop until the group answers again (README); this is about the jobs
                    f"sparkmirror.coordination.session.timeout.ms = 60000\n")

    def synced(offset: int) -> bool:
        checkpoint = client.read_checkpoints(path, "A", "B", group).get((group, *remote))
        return (checkpoint is not None and checkpoint.upstream_offset == offset
                and committed(b.bootstrap_servers, group, [remote]).get(remote) == offset)

    with running(path):
        wait_until(lambda: count_records(b.bootstrap_servers, f"A.{topic}") == 100, 120, "replication")
        commit(a.bootstrap_servers, group, {(topic, 0): 10})
        wait_until(lambda: synced(10), 6 * INTERVAL_S, "the first checkpoint and group sync")

        for side, cluster, offset in (("source", a, 40), ("target", b, 70)):
            cluster.kill()
            time.sleep(OUTAGE_S)
            cluster.restart()
            commit(a.bootstrap_servers, group, {(topic, 0): offset})
            back = time.monotonic()
            wait_until(lambda o=offset: synced(o), 2 * INTERVAL_S,
                       f"checkpoint and group offset {offset} on B after the {side} restarted")
            print(f"\n{side} restart: checkpoint and group offset on B {time.monotonic() - back:.1f} s after it "
                  f"was back")
