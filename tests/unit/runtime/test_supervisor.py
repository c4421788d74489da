"""The supervisor with in-memory clusters and a fake engine: start, jobs, retries, reload, stop, status."""

from __future__ import annotations

import pytest
from tests.unit.fakes import Clock, FakeClients, FakeCluster, FakeEngine, load
from tests.unit.properties_text import THREE_CLUSTERS

from sparkmirror.config.diff import diff_configs
from sparkmirror.errors import ConfigError, PipelineError
from sparkmirror.offsets.codec import decode_heartbeat
from sparkmirror.runtime.flows import RETRY_FIRST_S
from sparkmirror.runtime.supervisor import Supervisor

TEXT = THREE_CLUSTERS + "A->B.enabled = true\nC->B.enabled = true\nreplication.factor = 1\n"


def supervisor(tmp_path, text: str = TEXT):
    clusters = [FakeCluster(alias) for alias in "ABC"]
    for cluster in clusters:
        cluster.add_topic(f"{cluster.alias.lower()}-orders", 1, end=5)
    engine, clock = FakeEngine(), Clock()
    made = Supervisor(load(text), tmp_path, clients=FakeClients(*clusters), engine=engine, clock=clock)
    return made, {c.alias: c for c in clusters}, engine, clock


def test_start_runs_every_flow_and_schedules_its_jobs(tmp_path):
    sup, clusters, engine, clock = supervisor(tmp_path)
    sup.start()
    assert engine.prepared
    assert sorted(q.request.flow.name for q in engine.queries) == ["A->B", "C->B"]
    clock.now = 1.0  # heartbeats run every second
    sup.run_due()
    assert len(clusters["B"].logs["heartbeats"]) == 2
    assert [s.state for s in sup.status().flows] == ["running", "running"]


def test_a_sql_rule_spark_cannot_compile_stops_the_start_naming_its_key(tmp_path):
    sup, _, engine, _ = supervisor(tmp_path, TEXT + "A->B.sparkmirror.filter = a bad expression\n")
    with pytest.raises(ConfigError, match="A->B: a bad expression"):
        sup.start()
    assert engine.queries == []


def test_a_flow_that_cannot_start_is_retried_with_back_off_while_the_others_run(tmp_path):
    sup, clusters, engine, clock = supervisor(tmp_path)
    clusters["C"].broken = True
    sup.start()
    assert sup.flows["C->B"].failure is not None and sup.flows["A->B"].running
    clock.now = RETRY_FIRST_S - 0.1
    sup.run_due()
    assert sup.flows["C->B"].failure is not None  # not yet due
    clock.now = RETRY_FIRST_S  # still down: the next wait doubles
    sup.run_due()
    clusters["C"].broken = False
    clock.now = RETRY_FIRST_S + RETRY_FIRST_S * 2 - 0.1
    sup.run_due()
    assert sup.flows["C->B"].failure is not None
    clock.now = RETRY_FIRST_S + RETRY_FIRST_S * 2
    sup.run_due()
    assert sup.flows["C->B"].failure is None and sup.flows["C->B"].running
    assert sup.status().flow("C->B").progress.retries == 2  # the failed retry and the one that worked


def test_a_failed_query_is_reported_and_retried(tmp_path):
    sup, _, engine, clock = supervisor(tmp_path)
    sup.start()
    engine.queries[0].failure = "boom"
    sup._flows.check()
    failed = [s for s in sup.status().flows if s.state == "failed"]
    assert [s.failure for s in failed] == ["boom"]
    clock.now = RETRY_FIRST_S
    sup.run_due()
    assert all(s.state == "running" for s in sup.status().flows)


def test_a_failed_flow_whose_spark_driver_ended_ends_the_run_instead_of_retrying_for_ever(tmp_path):
    sup, _, engine, clock = supervisor(tmp_path)
    sup.start()
    engine.queries[0].failure = "Job aborted: java.lang.OutOfMemoryError: Java heap space"
    engine.lost_because = "[Errno 111] Connection refused"
    with pytest.raises(PipelineError, match=r"the Spark driver stopped unexpectedly: \[Errno 111\] Connection "
                                            r"refused; flow A->B failed: Job aborted: java.lang.OutOfMemoryError"):
        sup._flows.check()


def test_a_live_change_keeps_the_query_and_a_restart_change_replaces_the_flow(tmp_path):
    sup, _, engine, _ = supervisor(tmp_path)
    sup.start()
    before = sup.flows["A->B"]
    new = load(TEXT + "A->B.topics.exclude = zzz\nC->B.tasks.max = 3\n")
    sup.hot_reload.apply_flows(diff_configs(sup.config, new), {f.name: f for f in new.enabled_flows()})
    assert sup.flows["A->B"] is before and before.flow.topics_exclude == ("zzz",)
    assert sup.flows["C->B"].flow.tasks_max == 3
    assert [q.stopped for q in engine.queries] == [False, True, False]


def test_shutdown_stops_queries_then_clients_then_the_engine(tmp_path):
    sup, _, engine, _ = supervisor(tmp_path)
    sup.start()
    assert sup.shutdown(5) == []
    assert all(q.stopped for q in engine.queries) and engine.stopped
    assert all(w.closed for w in sup.clients.writers)
    assert [s.state for s in sup.status().flows] == ["stopped", "stopped"]


def test_acl_sync_runs_at_start_as_mm2_schedules_it_and_keeps_its_ledger_on_the_target(tmp_path):
    from sparkmirror.control.acl_ledger import decode_ledger
    from sparkmirror.model import TopicAcl
    from sparkmirror.runtime.state import ACL_LEDGER_FILE

    sup, clusters, _, _ = supervisor(tmp_path, TEXT.replace("C->B.enabled = true\n", ""))
    read = TopicAcl("LITERAL", "a-orders", "User:app", "*", "READ", "ALLOW")
    clusters["A"].acls, clusters["B"].acls = {read}, set()
    sup.start()
    try:
        sup.run_due()  # the clock has not moved: only jobs due at start run
    finally:
        sup.stop()
    remote = TopicAcl("LITERAL", "A.a-orders", "User:app", "*", "READ", "ALLOW")
    assert clusters["B"].acls == {remote}
    (record,) = clusters["B"].logs["__sparkmirror-acl-ledger"]
    assert (record.key, decode_ledger(record.value)) == (b"A->B", {remote})
    assert not list(tmp_path.rglob(ACL_LEDGER_FILE)), "the state dir holds no ledger"


def _beats(cluster) -> set[tuple[str, str]]:
    return {(b.source_alias, b.target_alias) for b in
            (decode_heartbeat(r.key, r.value) for r in cluster.logs.get("heartbeats", []))}


def test_pairs_that_are_not_flows_beat_too_as_mm2s_cluster_pairs(tmp_path):
    sup, clusters, _, clock = supervisor(tmp_path)
    sup.start()
    try:
        assert sup.heartbeats.names == ("A->C", "B->A", "B->C", "C->A")
        clock.now = 1.0
        sup.run_due()  # the pairs' loops too (their threads may have gone first: each pair beat at least once)
        assert _beats(clusters["A"]) == {("B", "A"), ("C", "A")}
        assert _beats(clusters["C"]) == {("A", "C"), ("B", "C")}
        assert len(clusters["B"].logs["heartbeats"]) == 2  # the flows' own, from the control loop
    finally:
        sup.stop()


def test_heartbeats_topics_exist_before_the_first_plan_so_no_refresh_restarts_a_query(tmp_path):
    # A->B reads A, into which this process's heartbeat-only pairs (B->A, C->A) beat, and C->B reads C, into
    # which the pairs A->C and B->C beat: each flow's first query already reads its source's heartbeats topic.
    sup, _, engine, _ = supervisor(tmp_path)
    sup.start()
    try:
        assert sorted((q.request.flow.name, sorted(q.request.offsets)) for q in engine.queries) == [
            ("A->B", ["a-orders", "heartbeats"]), ("C->B", ["c-orders", "heartbeats"])]
        assert not any(runner.refresh() for runner in sup.flows.values())
        assert len(engine.queries) == 2
    finally:
        sup.stop()


def test_a_run_until_caught_up_creates_no_heartbeats_topic_before_its_flows(tmp_path):
    clusters = [FakeCluster(alias) for alias in "ABC"]
    clusters[0].add_topic("a-orders", 1, end=5)
    engine = FakeEngine()
    once = Supervisor(load(TEXT.replace("C->B.enabled = true\n", "")), tmp_path, until_caught_up=True,
                      clients=FakeClients(*clusters), engine=engine, clock=Clock())
    once.start()
    once.stop()
    assert [sorted(q.request.offsets) for q in engine.queries] == [["a-orders"]]


def test_a_cluster_that_only_receives_heartbeats_may_be_down(tmp_path):
    sup, clusters, _, clock = supervisor(tmp_path, TEXT.replace("C->B.enabled = true\n", ""))
    clusters["C"].down = True
    sup.start()  # C is not probed: no flow reads or writes it
    try:
        assert sup.flows["A->B"].running
        clock.now = 1.0
        sup.heartbeats.run_due()
        assert _beats(clusters["A"]) == {("B", "A"), ("C", "A")} and "heartbeats" not in clusters["C"].partitions
    finally:
        sup.stop()


def test_only_the_listed_targets_get_heartbeats_and_a_run_until_caught_up_none(tmp_path):
    clusters = [FakeCluster(alias) for alias in "ABC"]
    targets = Supervisor(load(TEXT), tmp_path, target_clusters=("A",), clients=FakeClients(*clusters),
                         engine=FakeEngine(), clock=Clock())
    targets.start()
    targets.stop()
    assert targets.heartbeats.names == ("B->A", "C->A")
    once = Supervisor(load(TEXT), tmp_path, until_caught_up=True, clients=FakeClients(*clusters),
                      engine=FakeEngine(), clock=Clock())
    once.start()
    once.stop()
    assert once.heartbeats.names == ()


def test_a_reload_starts_and_stops_heartbeat_pairs(tmp_path):
    sup, _, _, _ = supervisor(tmp_path)
    sup.start()
    try:
        new = load(TEXT + "B->A.enabled = true\nC->A.emit.heartbeats.enabled = false\nC.producer.acks = 1\n")
        diff = diff_configs(sup.config, new)
        sup.heartbeats.apply(diff, new.heartbeat_only_pairs())
        sup.hot_reload.apply_flows(diff, {f.name: f for f in new.enabled_flows()})
        assert sup.heartbeats.names == ("A->C", "B->C")  # B->A is a flow now, C->A beats no more
        assert "B->A" in sup.flows
        assert diff.heartbeats_changed == ("A->C", "B->C")  # C's producer writes them: restarted with it
    finally:
        sup.stop()
