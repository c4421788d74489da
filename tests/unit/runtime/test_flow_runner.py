"""FlowRunner against in-memory clusters and a fake engine: plans, positions, restarts, failures, status."""

from __future__ import annotations

import json
import time

import pytest
from tests.unit.fakes import FakeClients, FakeCluster, FakeEngine, load
from tests.unit.properties_text import A_TO_B_ORDERS as TEXT

from sparkmirror.control.positions import TopicPosition, from_json, to_json
from sparkmirror.errors import PipelineError
from sparkmirror.model import PartitionSummary
from sparkmirror.runtime.flow_runner import FlowRunner


def runner(tmp_path, extra: str = "", **kwargs):
    flow = load(TEXT + extra).flow("A", "B")
    a, b = FakeCluster("A"), FakeCluster("B")
    engine = FakeEngine()
    made = FlowRunner(flow, a, b, tmp_path, engine, FakeClients(a, b), **kwargs)
    return made, a, b, engine


def saved(tmp_path) -> dict:
    return json.loads((tmp_path / "positions.json").read_text())


def report_first_ten(engine) -> None:
    """The writer's report of offsets 0..9 of orders-0, replicated one after the other."""
    engine.queries[-1].request.on_batch(1, [PartitionSummary("orders", 0, 10, 0, 80, 10, (0, 9), (0, 9),
                                                             (True, False))], 0.0)


def test_a_first_start_reads_from_the_beginning_and_saves_its_positions(tmp_path):
    run, a, b, engine = runner(tmp_path)
    a.add_topic("orders", 2, end=50)
    run.start()
    request = engine.queries[-1].request
    assert {t: dict(p) for t, p in request.offsets.items()} == {"orders": {0: 0, 1: 0}}
    assert dict(request.remote_topics) == {"orders": "A.orders"}
    assert b.partitions["A.orders"] == 2
    assert "orders" in saved(tmp_path)
    assert run.status().state == "running"


def test_latest_reset_starts_a_new_flow_at_the_end(tmp_path):
    run, a, _, engine = runner(tmp_path, "A.consumer.auto.offset.reset = latest\n")
    a.add_topic("orders", 1, end=50)
    run.start()
    assert dict(engine.queries[-1].request.offsets["orders"]) == {0: 50}


def test_reports_write_syncs_then_move_positions_and_progress(tmp_path):
    run, a, _, engine = runner(tmp_path)
    a.add_topic("orders", 1, end=10)
    run.start()
    report_first_ten(engine)
    assert len(a.logs["mm2-offset-syncs.B.internal"]) == 2
    assert run.status().positions == {("orders", 0): 10}
    assert run.status().progress.records == 10


def test_a_new_topic_restarts_the_query_and_other_topics_keep_their_positions(tmp_path):
    run, a, _, engine = runner(tmp_path)
    a.add_topic("orders", 1, end=10)
    run.start()
    report_first_ten(engine)
    assert run.refresh() is False  # nothing changed
    a.add_topic("orders-eu", 1, end=5)
    assert run.refresh() is True
    first, second = engine.queries
    assert first.stopped and not second.stopped
    assert {t: dict(p) for t, p in second.request.offsets.items()} == {"orders": {0: 10}, "orders-eu": {0: 0}}
    assert run.restarts[-1].reason == "new topics: orders-eu"


def test_a_query_failure_marks_the_flow_failed_and_a_retry_starts_it_again(tmp_path):
    run, a, _, engine = runner(tmp_path)
    a.add_topic("orders", 1)
    run.start()
    engine.queries[-1].failure = "writing failed"
    assert run.check() is False
    assert run.failure == "writing failed" and engine.queries[-1].stopped
    assert run.status().state == "failed"
    run.retry()
    assert run.check() is True and run.failure is None
    assert run.progress.snapshot().retries == 1


def test_no_matching_topic_leaves_the_flow_idle(tmp_path, caplog):
    run, _, _, engine = runner(tmp_path)
    run.start()
    assert engine.queries == [] and run.status().state == "idle"
    assert "no topic on 'A' matches topics=orders.*" in caplog.text


def test_stop_stops_the_query_closes_the_clients_and_nothing_starts_afterwards(tmp_path):
    run, a, _, engine = runner(tmp_path)
    a.add_topic("orders", 1)
    run.start()
    run.stop()
    assert engine.queries[-1].stopped
    assert all(w.closed for w in run._clients.writers)
    a.add_topic("orders-eu", 1)
    assert run.refresh() is False
    assert len(engine.queries) == 1 and run.status().state == "stopped"


def test_exactly_once_starts_from_the_positions_committed_on_the_target_not_the_state_dirs(tmp_path):
    (tmp_path / "positions.json").write_text(json.dumps(to_json({"orders": TopicPosition(None, {0: 5, 1: 7})})))
    run, a, _, engine = runner(tmp_path, "A->B.exactly.once.support = required\n")
    a.add_topic("orders", 2, end=50)
    engine.committed = {("A.orders", 0): (30, "")}  # committed with its records; the crash came before the save
    run.start()
    assert engine.take_overs == 1
    assert dict(engine.queries[-1].request.offsets["orders"]) == {0: 30, 1: 7}
    assert from_json(saved(tmp_path))["orders"].next_offsets == {0: 30, 1: 7}


def test_at_least_once_never_takes_over_transactions(tmp_path):
    run, a, _, engine = runner(tmp_path)
    a.add_topic("orders", 1, end=50)
    engine.committed = {("A.orders", 0): (30, "")}
    run.start()
    assert engine.take_overs == 0
    assert dict(engine.queries[-1].request.offsets["orders"]) == {0: 0}


def test_acl_sync_takes_over_the_ledger_file_an_earlier_version_left_in_the_flows_dir(tmp_path):
    from sparkmirror.control.acl_ledger import decode_ledger
    from sparkmirror.model import TopicAcl

    made = TopicAcl("LITERAL", "A.orders", "User:app", "*", "READ", "ALLOW")
    (tmp_path / "created-acls.json").write_text(json.dumps({"created_acls": [
        {"pattern_type": "LITERAL", "name": "A.orders", "principal": "User:app", "host": "*", "operation": "READ",
         "permission": "ALLOW"}]}))
    run, a, b, _ = runner(tmp_path)
    a.add_topic("orders", 1)
    a.acls, b.acls = set(), {made}  # the source no longer grants it: the ledger says sparkmirror made it
    run.start()
    assert run.control.acls.sync().delete == {made} and b.acls == set()
    assert [(r.key, decode_ledger(r.value)) for r in b.logs["__sparkmirror-acl-ledger"]] == [
        (b"A->B", {made}), (b"A->B", frozenset())]
    assert sorted(p.name for p in tmp_path.glob("created-acls.json*")) == ["created-acls.json.migrated"]


def test_at_least_once_commits_its_positions_on_the_target_at_start_and_with_every_report(tmp_path):
    run, a, b, engine = runner(tmp_path)
    a.add_topic("orders", 2, end=50)
    run.start()
    group = run.flow.positions_group
    topic_id = a.ids["orders"]
    assert b.committed_offsets[group] == {("A.orders", 0): (0, topic_id), ("A.orders", 1): (0, topic_id)}
    report_first_ten(engine)
    assert b.committed_offsets[group][("A.orders", 0)] == (10, topic_id)  # only what moved is committed again
    assert b.committed_offsets[group][("A.orders", 1)] == (0, topic_id)


def test_a_new_state_dir_continues_from_the_positions_committed_on_the_target(tmp_path):
    first, a, b, engine = runner(tmp_path / "host1")
    a.add_topic("orders", 2, end=50)
    first.start()
    report_first_ten(engine)
    first.stop()
    second = FlowRunner(first.flow, a, b, tmp_path / "host2", engine, FakeClients(a, b))
    second.start()
    assert dict(engine.queries[-1].request.offsets["orders"]) == {0: 10, 1: 0}


def test_records_removed_at_the_source_before_the_copy_are_counted_per_partition(tmp_path):
    first, a, b, engine = runner(tmp_path)
    a.add_topic("orders", 2, end=50)
    first.start()
    report_first_ten(engine)
    first.stop()
    a.starts[("orders", 0)] = 25  # retention removed offsets 10 to 24 of orders-0 before the flow read them
    second = FlowRunner(first.flow, a, b, tmp_path, engine, FakeClients(a, b))
    second.start()
    assert dict(engine.queries[-1].request.offsets["orders"]) == {0: 25, 1: 0}
    assert second.status().progress.removed == {("orders", 0): 15}


def test_a_flow_set_to_stop_on_removed_records_fails_naming_them_and_moves_no_position(tmp_path):
    first, a, b, engine = runner(tmp_path, "sparkmirror.on.records.removed = stop\n")
    a.add_topic("orders", 2, end=50)
    first.start()
    report_first_ten(engine)
    first.stop()
    a.starts[("orders", 0)] = 25
    second = FlowRunner(first.flow, a, b, tmp_path, engine, FakeClients(a, b))
    started = len(engine.queries)
    with pytest.raises(PipelineError, match=r"15 records were removed at the source before they were copied: "
                                            r"orders-0 \(offsets 10 to 24\)"):
        second.start()
    assert len(engine.queries) == started, "no query starts"
    assert b.committed_offsets[first.flow.positions_group][("A.orders", 0)][0] == 10, "the position stays"
    with pytest.raises(PipelineError):  # a retry finds them still missing
        second.retry()
    assert second.status().state == "failed" and "orders-0 (offsets 10 to 24)" in second.status().failure


def test_removed_records_found_by_a_refresh_fail_a_flow_set_to_stop_rather_than_idle_it(tmp_path):
    run, a, b, engine = runner(tmp_path, "sparkmirror.on.records.removed = stop\n")
    a.add_topic("orders", 1, end=50)
    run.start()
    report_first_ten(engine)
    a.add_topic("orders-eu", 1, end=5)  # a new topic restarts the query: the start is planned again
    a.starts[("orders", 0)] = 25
    with pytest.raises(PipelineError):
        run.refresh()
    assert run.status().state == "failed" and "15 records were removed" in run.status().failure


def test_a_positions_file_of_an_earlier_version_is_taken_over_once(tmp_path):
    flow_dir = tmp_path / "flow"
    flow_dir.mkdir()
    run, a, b, engine = runner(flow_dir)
    a.add_topic("orders", 2, end=50)
    (flow_dir / "positions.json").write_text(json.dumps(to_json({"orders": TopicPosition(a.ids["orders"],
                                                                                         {0: 7, 1: 3})})))
    run = FlowRunner(run.flow, a, b, flow_dir, engine, FakeClients(a, b))  # reads the file
    run.start()
    assert dict(engine.queries[-1].request.offsets["orders"]) == {0: 7, 1: 3}
    assert {tp: o for tp, (o, _) in b.committed_offsets[run.flow.positions_group].items()} == {
        ("A.orders", 0): 7, ("A.orders", 1): 3}  # on the target from now on: the file is a cache


def _refresh_blocked_on_the_source(run, a):
    """Start a refresh on a thread of its own (the flow's loop) that waits for the source's answer."""
    import threading

    answer = threading.Event()
    a.answering = answer
    thread = threading.Thread(target=run.refresh, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not run.busy and time.monotonic() < deadline:
        threading.Event().wait(0.01)
    assert run.busy
    return answer, thread


def test_the_control_loops_check_skips_a_turn_while_a_refresh_waits_for_a_cluster(tmp_path):
    run, a, _, engine = runner(tmp_path)
    a.add_topic("orders", 1, end=10)
    run.start()
    answer, thread = _refresh_blocked_on_the_source(run, a)
    engine.queries[-1].failure = "writing failed"  # check() would re-plan on the source that does not answer
    began = time.monotonic()
    assert run.check() is True and run.failure is None  # nothing this turn
    assert time.monotonic() - began < 1.0
    answer.set()
    thread.join(10)
    assert run.check() is False and run.failure == "writing failed"


def test_a_stop_while_a_refresh_waits_for_a_cluster_stops_the_query_and_none_starts_afterwards(tmp_path):
    run, a, _, engine = runner(tmp_path)
    a.add_topic("orders", 1, end=10)
    run.start()
    a.add_topic("orders-eu", 1)  # the blocked refresh would restart the query on the new set
    answer, thread = _refresh_blocked_on_the_source(run, a)
    began = time.monotonic()
    run.stop_replication()
    assert time.monotonic() - began < 1.0 and engine.queries[-1].stopped
    answer.set()
    thread.join(10)
    assert len(engine.queries) == 1 and run.query is None and run.status().state == "stopped"


def test_a_running_flow_says_how_long_it_has_written_nothing_and_when_that_is_a_stall(tmp_path):
    run, a, _, engine = runner(tmp_path, "sparkmirror.report.interval.ms = 4000\n")
    a.add_topic("orders", 1, end=50)
    assert run.status().quiet_s is None  # no query: nothing to be quiet about
    run.start()
    began = time.monotonic()
    first = run.status().quiet_s
    assert first is not None and 0 <= first <= time.monotonic() - began + 0.01  # since its query started
    assert run.status().stall_after_s == 8.0  # two report intervals, more than STALL_AFTER_S
    run._started_at -= 100  # the query started long ago and the report comes now
    report_first_ten(engine)
    assert run.status().quiet_s < 1.0  # since the report
    run.failure = "query failed"
    assert run.status().quiet_s is None
