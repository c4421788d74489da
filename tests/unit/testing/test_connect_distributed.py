"""The pure parts of testing/connect_distributed.py: a worker's settings, MM2's connector configs for a Connect
cluster, and reading Connect's connector status (which worker runs which task)."""

from __future__ import annotations

import pytest

from sparkmirror.testing.connect_distributed import (
    BYTE_ARRAY_CONVERTER,
    DEFAULT_REBALANCE_DELAY_MS,
    MIRROR_CONNECTORS,
    group_leader,
    mirror_connector_configs,
    parse_connector_status,
    worker_properties,
)

STATUS = {
    "name": "MirrorSourceConnector",
    "connector": {"state": "RUNNING", "worker_id": "127.0.0.1:8084"},
    "tasks": [{"id": 1, "state": "RUNNING", "worker_id": "127.0.0.1:8083"},
              {"id": 0, "state": "RUNNING", "worker_id": "127.0.0.1:8083"},
              {"id": 2, "state": "RUNNING", "worker_id": "127.0.0.1:8085"},
              {"id": 3, "state": "UNASSIGNED", "worker_id": "127.0.0.1:8085"}],
    "type": "source",
}


def test_a_worker_advertises_its_loopback_port_and_keeps_its_topics_on_one_replica():
    props = worker_properties("127.0.0.1:9092", "g1", 8083)
    assert props["listeners"] == "http://127.0.0.1:8083"
    assert (props["rest.advertised.host.name"], props["rest.advertised.port"]) == ("127.0.0.1", "8083")
    assert {props[f"{k}.storage.topic"] for k in ("config", "offset", "status")} == {
        "g1-configs", "g1-offsets", "g1-status"}
    assert all(props[f"{k}.storage.replication.factor"] == "1" for k in ("config", "offset", "status"))
    assert props["scheduled.rebalance.max.delay.ms"] == str(DEFAULT_REBALANCE_DELAY_MS) == "300000"
    assert props["header.converter"] == BYTE_ARRAY_CONVERTER


def test_the_rebalance_delay_and_extra_settings_are_taken():
    props = worker_properties("b:1", "g", 1, rebalance_delay_ms=10_000, extra={"offset.flush.interval.ms": "5000"})
    assert props["scheduled.rebalance.max.delay.ms"] == "10000"
    assert props["offset.flush.interval.ms"] == "5000"


def test_mm2_connectors_name_both_clusters_and_their_own_topics():
    configs = mirror_connector_configs("A", "B", "a:1", "b:1", "orders", 2,
                                       extra={"emit.checkpoints.interval.seconds": "1"})
    assert tuple(configs) == MIRROR_CONNECTORS
    for name, config in configs.items():
        assert config["connector.class"] == f"org.apache.kafka.connect.mirror.{name}"
        assert (config["source.cluster.alias"], config["target.cluster.alias"]) == ("A", "B")
        assert config["source.cluster.bootstrap.servers"] == "a:1"
        assert config["target.cluster.bootstrap.servers"] == "b:1"
        assert (config["topics"], config["tasks.max"]) == ("orders", "2")
        assert config["emit.checkpoints.interval.seconds"] == "1"
    assert configs["MirrorSourceConnector"]["replication.factor"] == "1"
    assert configs["MirrorSourceConnector"]["offset-syncs.topic.replication.factor"] == "1"
    assert configs["MirrorCheckpointConnector"]["checkpoints.topic.replication.factor"] == "1"
    assert configs["MirrorHeartbeatConnector"]["heartbeats.topic.replication.factor"] == "1"


def test_the_status_tells_which_worker_runs_which_task():
    status = parse_connector_status(STATUS)
    assert (status.name, status.state, status.worker_id) == ("MirrorSourceConnector", "RUNNING", "127.0.0.1:8084")
    assert status.running_tasks() == {"127.0.0.1:8083": [0, 1], "127.0.0.1:8085": [2]}
    assert status.busiest_worker() == "127.0.0.1:8083"


def test_on_a_tie_the_first_tasks_worker_is_the_busiest():
    body = {**STATUS, "tasks": [{"id": 1, "state": "RUNNING", "worker_id": "w2"},
                                {"id": 0, "state": "RUNNING", "worker_id": "w1"}]}
    assert parse_connector_status(body).busiest_worker() == "w1"


def test_no_running_task_no_busiest_worker():
    body = {**STATUS, "tasks": [{"id": 0, "state": "UNASSIGNED", "worker_id": "w1"}]}
    assert parse_connector_status(body).busiest_worker() is None
    assert parse_connector_status({**STATUS, "tasks": []}).busiest_worker() is None


def test_moved_means_every_task_runs_and_none_on_the_dead_worker():
    one = {**STATUS, "tasks": [{"id": 0, "state": "RUNNING", "worker_id": "w1"}]}
    assert not parse_connector_status(one).all_running_elsewhere("w1")  # the status still names the dead worker
    assert parse_connector_status(one).all_running_elsewhere("w2")
    assert not parse_connector_status(STATUS).all_running_elsewhere("w9")  # task 3 is unassigned
    assert not parse_connector_status({**STATUS, "tasks": []}).all_running_elsewhere("w1")


@pytest.mark.parametrize("body", [{}, {"name": "x"}, {"name": "x", "connector": "RUNNING"},
                                  {"name": "x", "connector": {"state": "RUNNING"}, "tasks": [{"id": 0}]},
                                  {"name": "x", "connector": {"state": "RUNNING"}, "tasks": "0"}])
def test_anything_else_is_refused(body):
    with pytest.raises(ValueError, match="not a connector status"):
        parse_connector_status(body)


def test_the_group_leader_is_the_one_the_last_join_named():
    log = """[2026-11-27 13:32:32,334] INFO [Worker clientId=connect-127.0.0.1:50301, groupId=g] Joined group at \
generation 11 with protocol version 2 and got assignment: Assignment{error=0, leader='connect-127.0.0.1:55323-127e', \
leaderUrl='http://127.0.0.1:55323/', offset=9, connectorIds=[], taskIds=[], delay=0} with rebalance delay: 0
[2026-11-27 13:32:50,325] INFO [Worker clientId=connect-127.0.0.1:50301, groupId=g] Rebalance started
[2026-11-27 13:32:50,363] INFO [Worker clientId=connect-127.0.0.1:50301, groupId=g] Joined group at generation 12 with \
protocol version 2 and got assignment: Assignment{error=0, leader='connect-127.0.0.1:50301-c015', \
leaderUrl='http://127.0.0.1:50301/', offset=9, connectorIds=[MirrorCheckpointConnector], taskIds=[], delay=0}
"""
    assert group_leader(log) == "127.0.0.1:50301"
    assert group_leader(log.split("[2026-11-27 13:32:50,325]")[0]) == "127.0.0.1:55323"
    assert group_leader("no join yet") is None
