"""ClusterProbes: each cluster probed on a loop of its own; a cluster that stops answering is seen as down."""

from __future__ import annotations

import threading
import time

from tests.unit.fakes import Clock, FakeClients, FakeCluster, FakeEngine, load
from tests.unit.properties_text import THREE_CLUSTERS

from sparkmirror.runtime.reachability import CLIENT_ID, ClusterProbes
from sparkmirror.runtime.supervisor import Supervisor

WAIT_S = 10.0  # for another thread; the test ends as soon as it answers


class WallClock:
    def __init__(self) -> None:
        self.ms = 1_000_000

    def __call__(self) -> int:
        return self.ms


def probes(**kwargs):
    clusters = {alias: FakeCluster(alias) for alias in "ABC"}
    clients = FakeClients(*clusters.values())
    clock, wall, stop = Clock(), WallClock(), threading.Event()
    made = ClusterProbes(clients, stop, clock, wall, **kwargs)
    made.watch(load(THREE_CLUSTERS).clusters)
    return made, clusters, clients, clock, wall, stop


def states(made: ClusterProbes) -> dict[str, tuple]:
    return {h.alias: (h.state, h.since_ms) for h in made.health()}


def test_a_cluster_that_goes_down_is_down_since_then_and_up_again_when_it_answers():
    made, clusters, clients, clock, wall, _ = probes()
    assert states(made) == dict.fromkeys("ABC", ("unknown", None))
    made.run_due()  # the first probe at once
    assert states(made) == dict.fromkeys("ABC", ("up", 1_000_000))
    assert {s["client.id"] for _, s in clients.admins} == {CLIENT_ID}  # an admin of its own
    clusters["B"].down = True
    clock.now, wall.ms = 2.0, 1_002_000
    made.run_due()
    b = next(h for h in made.health() if h.alias == "B")
    assert (b.state, b.since_ms, b.checked_ms) == ("down", 1_002_000, 1_002_000)
    assert "cluster 'B' is unreachable" in b.error
    clock.now, wall.ms = 4.0, 1_004_000
    made.run_due()
    assert states(made)["B"] == ("down", 1_002_000)  # down since its first failed probe
    assert states(made)["A"] == ("up", 1_000_000)
    clusters["B"].down = False
    clock.now, wall.ms = 6.0, 1_006_000
    made.run_due()
    assert states(made)["B"] == ("up", 1_006_000)
    assert next(h for h in made.health() if h.alias == "B").error is None


def test_a_cluster_that_does_not_answer_holds_only_its_own_probe():
    made, clusters, _, _, _, stop = probes(timeout_s=0.5)
    clusters["B"].answering = threading.Event()  # B's probe waits until its timeout
    made._clock = time.monotonic  # real threads: real time
    made.start()
    try:
        deadline = time.monotonic() + WAIT_S
        while states(made)["B"][0] != "down" and time.monotonic() < deadline:
            stop.wait(0.02)
        health = {h.alias: h for h in made.health()}
        assert health["B"].state == "down" and "no answer within 0.5 s" in health["B"].error
        assert health["A"].state == health["C"].state == "up"
    finally:
        stop.set()
        clusters["B"].answering.set()


def test_the_supervisors_status_names_the_cluster_that_does_not_answer(tmp_path):
    clusters = [FakeCluster(alias) for alias in "ABC"]
    clock = Clock()
    sup = Supervisor(load(THREE_CLUSTERS + "A->B.enabled = true\nreplication.factor = 1\n"), tmp_path,
                     clients=FakeClients(*clusters), engine=FakeEngine(), clock=clock)
    sup.start()
    clusters[1].down = True
    clock.now = 2.0  # the next probe
    sup.run_due()
    status = sup.status()
    assert [(h.alias, h.state) for h in status.cluster_health] == [("A", "up"), ("B", "down"), ("C", "up")]
    assert status.condition(status.flow("A->B"), 0).text == "target B down"
    assert any(line.startswith("cluster B: down") for line in status.lines())
    assert any(line.startswith("flow A->B: running, target B down") for line in status.lines())
