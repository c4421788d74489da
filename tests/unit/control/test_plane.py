"""FlowControl and its jobs against in-memory clusters: internal topics, offset syncs, heartbeats, configs."""

from __future__ import annotations

import pytest
from tests.unit.fakes import FakeClients, FakeCluster, load
from tests.unit.properties_text import A_TO_B_ORDERS as BASE
from tests.unit.properties_text import ROLE_CLIENT_IDS

from sparkmirror.control.plane import FlowControl
from sparkmirror.control.topic_sync import apply_plan, observe_plan
from sparkmirror.errors import AdminOperationError
from sparkmirror.model import PartitionSummary
from sparkmirror.offsets.codec import decode_heartbeat
from sparkmirror.offsets.syncs import SYNC_END, SYNC_RUN, decode_offset_sync, sync_link_of


def control(extra: str = "", remote: dict[str, str] | None = None):
    flow = load(BASE + extra).flow("A", "B")
    a, b = FakeCluster("A"), FakeCluster("B")
    clients = FakeClients(a, b)
    plane = FlowControl(flow, a, b, clients, lambda: dict(remote or {}), clock=lambda: 1234.5)
    return plane, a, b, clients


def test_start_creates_mm2s_internal_topics_where_mm2_puts_them():
    plane, a, b, _ = control()
    plane.start()
    assert [s.name for s in a.created] == ["mm2-offset-syncs.B.internal"]
    assert sorted(s.name for s in b.created) == ["A.checkpoints.internal", "heartbeats"]
    assert all(s.partitions == 1 and s.configs["cleanup.policy"] == "compact" for s in a.created + b.created)


def test_offset_syncs_on_the_target_when_the_location_says_so():
    plane, a, b, _ = control("A->B.offset-syncs.topic.location = target\nemit.checkpoints.enabled = false\n")
    plane.start()
    assert a.created == []
    assert "mm2-offset-syncs.A.internal" in {s.name for s in b.created}


def test_start_is_idempotent_so_a_retry_repeats_it():
    plane, a, b, clients = control()
    plane.start()
    plane.start()
    assert len(a.created) == 1 and len(b.created) == 2
    assert len(clients.writers) == 3  # offset syncs, heartbeats, checkpoints: not made again


def test_a_refused_internal_topic_fails_the_start():
    plane, a, _, _ = control()
    a.refuse.add("mm2-offset-syncs.B.internal")
    with pytest.raises(AdminOperationError, match="refused"):
        plane.start()


def test_an_exactly_once_flow_asks_the_target_for_a_transaction_before_anything_else():
    plane, a, b, clients = control("A->B.exactly.once.support = required\n")
    clients.transactions_refused["B"] = "cluster 'B' refused transactional id 'x': grant WRITE"
    with pytest.raises(AdminOperationError, match=r"exactly.once.support = required: a transaction on cluster 'B' "
                                                  r"failed: cluster 'B' refused transactional id 'x': grant WRITE"):
        plane.start()
    assert clients.transaction_probes == [("B", "sparkmirror-A-B-probe")]  # beside the tasks' ids: fences none
    assert a.created == [] and b.created == []
    del clients.transactions_refused["B"]
    plane.start()
    assert len(clients.transaction_probes) == 2 and b.created and plane.exactly_once


def test_an_at_least_once_flow_asks_for_no_transaction():
    plane, _, _, clients = control()
    plane.start()
    assert clients.transaction_probes == [] and not plane.exactly_once


def test_the_targets_worker_switch_falls_back_to_at_least_once_when_the_target_cannot(caplog):
    plane, _, b, clients = control("B.exactly.once.source.support = enabled\n")
    clients.transactions_refused["B"] = "cluster 'B' did not coordinate a transaction"
    plane.start()
    assert not plane.exactly_once and b.created  # started, at least once
    assert "A->B: B.exactly.once.source.support = enabled, but cluster 'B' did not coordinate a transaction; " \
           "replicating at least once" in caplog.text
    del clients.transactions_refused["B"]
    plane.start()
    assert plane.exactly_once


def test_real_time_mode_with_the_worker_switch_replicates_at_least_once(caplog):
    plane, _, _, clients = control("B.exactly.once.source.support = enabled\nsparkmirror.trigger.mode = real-time\n")
    plane.start()
    assert not plane.exactly_once and clients.transaction_probes == []
    assert "its trigger mode is real-time" in caplog.text


def test_reports_become_offset_syncs_with_their_links():
    plane, a, _, _ = control()
    plane.start()
    plane.write_offset_syncs([PartitionSummary("orders", 0, 10, 0, 100, 10, (0, 9), (5, 14), (True, False))])
    log = a.logs["mm2-offset-syncs.B.internal"]
    syncs = [(decode_offset_sync(r.key, r.value), sync_link_of(r.headers)) for r in log]
    assert [(s.topic, s.partition, s.upstream_offset, s.downstream_offset) for s, _ in syncs] == [
        ("orders", 0, 0, 5), ("orders", 0, 9, 14)]
    assert [link.kind for _, link in syncs] == [SYNC_RUN, SYNC_END]
    assert syncs[-1][1].next_upstream == 10


def test_no_offset_syncs_when_they_are_off():
    plane, a, _, _ = control("emit.offset-syncs.enabled = false\n")
    plane.start()
    assert not plane.writes_offset_syncs
    plane.write_offset_syncs([PartitionSummary("orders", 0, 1, 0, 1, 1, (0,), (0,), (False,))])
    assert a.logs == {}


def test_a_heartbeat_names_the_flow_and_the_time():
    plane, _, b, _ = control()
    plane.start()
    plane.emit_heartbeat()
    beat = decode_heartbeat(b.logs["heartbeats"][0].key, b.logs["heartbeats"][0].value)
    assert (beat.source_alias, beat.target_alias, beat.timestamp_ms) == ("A", "B", 1234500)


def test_heartbeats_turned_on_live_create_their_topic_at_the_first_beat():
    plane, _, b, _ = control("emit.heartbeats.enabled = false\n")
    plane.start()
    assert "heartbeats" not in b.partitions
    plane.flow = load(BASE).flow("A", "B")
    plane.emit_heartbeat()
    assert "heartbeats" in b.partitions and len(b.logs["heartbeats"]) == 1


def _who(settings) -> str:
    return settings["client.id"]


def test_each_internal_client_has_its_mm2_roles_settings():
    """MM2's roles: offset syncs written by the producer of the cluster holding them and read back by its
    consumer; checkpoints and heartbeats written by the target's (worker) producer, checkpoints read back by the
    target's consumer (CheckpointStore); topics and groups through each side's admin."""
    plane, _, _, clients = control(ROLE_CLIENT_IDS)
    plane.start()
    syncs, beats, checkpoints = clients.writers
    assert [(w.cluster.alias, _who(w.settings)) for w in (syncs, beats, checkpoints)] == [
        ("A", "a-producer"), ("B", "b-producer"), ("B", "b-producer")]
    [reader] = clients.readers
    assert (reader.cluster.alias, reader.topic, _who(reader.settings)) == (
        "A", "mm2-offset-syncs.B.internal", "a-consumer")
    assert [(alias, topic, _who(settings)) for alias, topic, settings in clients.read_alls] == [
        ("B", "A.checkpoints.internal", "b-consumer")]
    assert [(alias, _who(settings)) for alias, settings in clients.group_admins] == [
        ("A", "a-admin"), ("B", "b-admin")]


def test_offset_syncs_on_the_target_are_written_and_read_with_the_targets_clients():
    plane, _, _, clients = control(ROLE_CLIENT_IDS + "A->B.offset-syncs.topic.location = target\n")
    plane.start()
    assert (clients.writers[0].cluster.alias, _who(clients.writers[0].settings)) == ("B", "b-producer")
    [reader] = clients.readers
    assert (reader.cluster.alias, reader.topic, _who(reader.settings)) == (
        "B", "mm2-offset-syncs.A.internal", "b-consumer")


def test_config_sync_makes_remote_topics_follow_their_source():
    plane, a, b, _ = control(remote={"orders": "A.orders"})
    a.add_topic("orders", 2, {"retention.ms": "1000"})
    b.add_topic("A.orders", 2, {"retention.ms": "5", "min.insync.replicas": "2"})
    plane.sync_configs()
    assert b.configs["A.orders"]["retention.ms"] == "1000"
    assert b.configs["A.orders"]["min.insync.replicas"] == "2"  # excluded by config.properties.exclude


def test_jobs_follow_the_flow_schedules_and_a_live_change():
    plane, *_ = control("A->B.emit.heartbeats.interval.seconds = 7\nsync.group.offsets.enabled = true\n")
    jobs = {j.name: j.schedule for j in plane.jobs()}
    assert jobs["emit heartbeats"].interval_s == 7
    assert jobs["sync group offsets"].enabled
    plane.flow = load(BASE + "A->B.emit.heartbeats.interval.seconds = 9\n").flow("A", "B")
    assert {j.name: j.schedule for j in plane.jobs()}["emit heartbeats"].interval_s == 9


def test_topic_sync_creates_remote_topics_with_the_sources_partitions_and_configs():
    flow = load(BASE).flow("A", "B")
    a, b = FakeCluster("A"), FakeCluster("B")
    a.add_topic("orders", 3, {"cleanup.policy": "compact"})
    a.add_topic("payments", 1)
    plan = observe_plan(flow, a, b)
    assert dict(plan.remote_topics) == {"orders": "A.orders"}
    apply_plan(flow, b, plan)
    assert b.partitions["A.orders"] == 3
    assert b.configs["A.orders"]["cleanup.policy"] == "compact"
    a.partitions["orders"] = 5
    apply_plan(flow, b, observe_plan(flow, a, b))
    assert b.partitions["A.orders"] == 5


def test_topic_sync_names_every_remote_topic_it_could_not_create():
    flow = load(BASE).flow("A", "B")
    a, b = FakeCluster("A"), FakeCluster("B")
    for name in ("orders1", "orders2"):
        a.add_topic(name, 1)
        b.refuse.add(f"A.{name}")
    with pytest.raises(AdminOperationError, match="A.orders1.*A.orders2"):
        apply_plan(flow, b, observe_plan(flow, a, b))
