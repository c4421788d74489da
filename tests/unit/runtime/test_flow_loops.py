"""Each flow's jobs on loops of its own (runtime/flow_loops.py): a job blocked on one cluster delays neither another
flow's jobs nor the control loop; a stopped flow's clients are closed by its loop, never under a call."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from tests.unit.fakes import Clock, FakeClients, FakeCluster, FakeEngine, load
from tests.unit.properties_text import THREE_CLUSTERS

from sparkmirror.config.flow_settings import Schedule
from sparkmirror.control.plane import Job
from sparkmirror.offsets.codec import decode_heartbeat
from sparkmirror.runtime.flow_loops import FlowLoops
from sparkmirror.runtime.flows import RETRY_FIRST_S
from sparkmirror.runtime.supervisor import Supervisor

TEXT = THREE_CLUSTERS + "A->B.enabled = true\nA->C.enabled = true\nreplication.factor = 1\n"
WAIT_S = 10.0  # for another thread; the tests go on as soon as it answers


def wait_until(predicate: Callable[[], object], what: str, timeout_s: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        threading.Event().wait(0.01)


def every_s(seconds: float) -> Schedule:
    return Schedule(True, seconds)


def beats(cluster: FakeCluster, source: str) -> int:
    """Heartbeats from `source` into `cluster` (its `heartbeats` topic)."""
    return sum(1 for r in list(cluster.logs.get("heartbeats", []))
               if decode_heartbeat(r.key, r.value).source_alias == source)


def test_jobs_run_on_their_flows_loop_and_side_jobs_on_its_side_loop():
    clock, runs = Clock(), []
    loops = FlowLoops(clock)
    loops.schedule("A->B", [Job("emit heartbeats", every_s(1), lambda: runs.append("beat")),
                            Job("measure lag", every_s(2), lambda: runs.append("lag"), side_loop=True),
                            Job("sync topic ACLs", every_s(5), lambda: runs.append("acls"), at_start=True),
                            Job("sync group offsets", Schedule(False, 1), lambda: runs.append("never"))])
    loops.run_due()
    assert runs == ["acls"]  # at start, as MM2 schedules it
    clock.now = 2.0
    loops.run_due()
    assert runs == ["acls", "beat", "lag"]
    assert {n: s.runs for n, s in loops.stats.items()} == {"A->B: sync topic ACLs": 1, "A->B: emit heartbeats": 1,
                                                          "A->B: measure lag": 1}


def test_a_failed_flows_jobs_are_cancelled_and_its_stats_kept_for_the_retry():
    clock, runs = Clock(), []
    loops = FlowLoops(clock)
    jobs = [Job("emit heartbeats", every_s(1), lambda: runs.append("beat"))]
    loops.schedule("A->B", jobs)
    clock.now = 1.0
    loops.run_due()
    loops.cancel("A->B")
    clock.now = 5.0
    loops.run_due()
    assert runs == ["beat"]
    loops.schedule("A->B", jobs)  # the retry worked
    clock.now = 6.0
    loops.run_due()
    assert runs == ["beat", "beat"] and loops.stats["A->B: emit heartbeats"].runs == 2


def test_a_retired_flows_clients_are_closed_by_its_loop_once_the_job_in_progress_returns():
    clock = Clock()
    loops = FlowLoops(clock)
    answer, inside, closed = threading.Event(), threading.Event(), threading.Event()

    def blocked() -> None:
        inside.set()
        answer.wait(WAIT_S)

    loops.schedule("A->C", [Job("emit heartbeats", every_s(1), blocked)])
    loops.start()
    clock.now = 1.0
    wait_until(inside.is_set, "the job to be running")
    loops.retire("A->C", closed.set)  # returns at once: the caller never waits for the cluster
    assert not closed.is_set(), "a client is never closed under a call"
    answer.set()
    wait_until(closed.is_set, "the loop to close the flow's clients after its job")
    assert loops.names == ()


def test_a_job_blocked_on_one_cluster_delays_neither_another_flows_jobs_nor_the_control_loop(tmp_path):
    clusters = {alias: FakeCluster(alias) for alias in "ABC"}
    clusters["A"].add_topic("a-orders", 1, end=5)
    engine, clock = FakeEngine(), Clock()
    sup = Supervisor(load(TEXT), tmp_path, clients=FakeClients(*clusters.values()), engine=engine, clock=clock)
    sup.start()
    control = threading.Thread(target=sup.wait, kwargs={"poll_s": 0.01}, daemon=True)
    control.start()
    answer = threading.Event()
    try:
        clusters["C"].answering = answer  # C stops answering: A->C's next call to it waits
        clock.now = 1.0
        wait_until(lambda: sup.loops.running("A->C"), "A->C's loop to be blocked on C")
        for second in (1, 2, 3):  # A->B's heartbeats keep their interval
            clock.now = float(second)
            wait_until(lambda s=second: beats(clusters["B"], "A") >= s, f"A->B's heartbeat {second}")
        assert beats(clusters["C"], "A") == 0 and sup.loops.running("A->C")

        a_to_b = next(q for q in engine.queries if q.request.flow.name == "A->B")
        a_to_b.failure = "boom"  # the control loop still checks the queries, and retries
        wait_until(lambda: sup.status().flow("A->B").state == "failed", "the control loop to see A->B fail")
        # the failure shows before its retry is scheduled: move the clock only once the retry waits for it
        wait_until(lambda: sup.scheduler.scheduled("A->B: retry"), "the retry of A->B to be scheduled")
        clock.now += RETRY_FIRST_S
        wait_until(lambda: sup.flows["A->B"].running, "the control loop to retry A->B")
        assert sup.loops.running("A->C"), "C still does not answer"

        answer.set()  # C is back: A->C's jobs go on
        wait_until(lambda: beats(clusters["C"], "A") >= 1, "A->C's blocked heartbeat")
        clock.now += 1
        wait_until(lambda: beats(clusters["C"], "A") >= 2, "A->C's next heartbeat")
        assert [s.state for s in sup.status().flows] == ["running", "running"]
        assert {j.name for j in sup.status().jobs if j.flow == "A->C"} >= {"emit heartbeats", "sync topic ACLs"}
    finally:
        answer.set()
        sup.stop()
        control.join(WAIT_S)
    assert not control.is_alive()


def test_a_flow_stopped_while_its_job_is_blocked_stops_at_once_and_closes_its_clients_afterwards(tmp_path):
    clusters = {alias: FakeCluster(alias) for alias in "ABC"}
    clusters["A"].add_topic("a-orders", 1, end=5)
    clients, clock = FakeClients(*clusters.values()), Clock()
    sup = Supervisor(load(TEXT), tmp_path, clients=clients, engine=FakeEngine(), clock=clock)
    sup.start()
    answer = threading.Event()
    try:
        clusters["C"].answering = answer
        clock.now = 1.0
        wait_until(lambda: sup.loops.running("A->C"), "A->C's loop to be blocked on C")
        runner = sup.flows["A->C"]
        began = time.monotonic()
        sup._flows.stand_by("A->C", "a test")
        assert time.monotonic() - began < 1.0 and runner.stopped and runner.query is None
        c_writers = [w for w in clients.writers if w.cluster is clusters["C"]]
        assert not any(w.closed for w in c_writers), "closed under the blocked write"
        answer.set()
        wait_until(lambda: all(w.closed for w in c_writers), "its loop to close A->C's writers")
    finally:
        answer.set()
        sup.stop()


def test_a_shutdown_names_a_flows_job_blocked_on_a_cluster_and_leaves_its_clients_to_the_exit(tmp_path):
    clusters = {alias: FakeCluster(alias) for alias in "ABC"}
    clusters["A"].add_topic("a-orders", 1, end=5)
    clients, clock, engine = FakeClients(*clusters.values()), Clock(), FakeEngine()
    sup = Supervisor(load(TEXT), tmp_path, clients=clients, engine=engine, clock=clock)
    sup.start()
    answer = threading.Event()
    try:
        clusters["C"].answering = answer
        clock.now = 1.0
        wait_until(lambda: sup.loops.running("A->C"), "A->C's loop to be blocked on C")
        job = sup.loops.running("A->C")
        began = time.monotonic()
        abandoned = sup.shutdown(5)
        assert time.monotonic() - began < 5
        assert abandoned == [f"the job '{job}' and the clients of flow A->C"]
        assert all(q.stopped for q in engine.queries) and engine.stopped
        assert all(w.closed for w in clients.writers if w.cluster is clusters["B"])  # A->B's, on an idle loop
        assert not any(w.closed for w in clients.writers if w.cluster is clusters["C"])
    finally:
        answer.set()
