"""The supervisor with in-memory clusters and a fake engine: start, jobs, retries, reload, stop, status."""

from __future__ import annotations

from tests.unit.fakes import FakeClients, FakeCluster, FakeEngine, load

from sparkmirror.config.diff import diff_configs
from sparkmirror.runtime.supervisor import RETRY_FIRST_S, Supervisor

TEXT = """\
clusters = A, B, C
A.bootstrap.servers = a:9092
B.bootstrap.servers = b:9092
C.bootstrap.servers = c:9092
A->B.enabled = true
C->B.enabled = true
replication.factor = 1
"""


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


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
    sup.scheduler.run_due()
    assert len(clusters["B"].logs["heartbeats"]) == 2
    assert [s.state for s in sup.status().flows] == ["running", "running"]


def test_a_flow_that_cannot_start_is_retried_with_back_off_while_the_others_run(tmp_path):
    sup, clusters, engine, clock = supervisor(tmp_path)
    clusters["C"].broken = True
    sup.start()
    assert sup.flows["C->B"].failure is not None and sup.flows["A->B"].running
    clock.now = RETRY_FIRST_S - 0.1
    sup.scheduler.run_due()
    assert sup.flows["C->B"].failure is not None  # not yet due
    clock.now = RETRY_FIRST_S  # still down: the next wait doubles
    sup.scheduler.run_due()
    clusters["C"].broken = False
    clock.now = RETRY_FIRST_S + RETRY_FIRST_S * 2 - 0.1
    sup.scheduler.run_due()
    assert sup.flows["C->B"].failure is not None
    clock.now = RETRY_FIRST_S + RETRY_FIRST_S * 2
    sup.scheduler.run_due()
    assert sup.flows["C->B"].failure is None and sup.flows["C->B"].running
    assert sup.status().flow("C->B").progress.retries == 2  # the failed retry and the one that worked


def test_a_failed_query_is_reported_and_retried(tmp_path):
    sup, _, engine, clock = supervisor(tmp_path)
    sup.start()
    engine.queries[0].failure = "boom"
    sup._check_flows()
    failed = [s for s in sup.status().flows if s.state == "failed"]
    assert [s.failure for s in failed] == ["boom"]
    clock.now = RETRY_FIRST_S
    sup.scheduler.run_due()
    assert all(s.state == "running" for s in sup.status().flows)


def test_a_live_change_keeps_the_query_and_a_restart_change_replaces_the_flow(tmp_path):
    sup, _, engine, _ = supervisor(tmp_path)
    sup.start()
    before = sup.flows["A->B"]
    new = load(TEXT + "A->B.topics.exclude = zzz\nC->B.tasks.max = 3\n")
    sup._apply_diff(diff_configs(sup.config, new), {f.name: f for f in new.enabled_flows()})
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


def test_acl_sync_runs_at_start_as_mm2_schedules_it_and_keeps_its_ledger_in_the_flows_state_dir(tmp_path):
    from sparkmirror.model import TopicAcl
    from sparkmirror.runtime.state import ACL_LEDGER_FILE

    sup, clusters, _, _ = supervisor(tmp_path, TEXT.replace("C->B.enabled = true\n", ""))
    read = TopicAcl("LITERAL", "a-orders", "User:app", "*", "READ", "ALLOW")
    clusters["A"].acls, clusters["B"].acls = {read}, set()
    sup.start()
    sup.scheduler.run_due()  # the clock has not moved: only jobs due at start run
    remote = TopicAcl("LITERAL", "A.a-orders", "User:app", "*", "READ", "ALLOW")
    assert clusters["B"].acls == {remote}
    (ledger,) = tmp_path.rglob(ACL_LEDGER_FILE)
    assert "A.a-orders" in ledger.read_text()
