"""Flows shared among processes of one file (runtime/ownership.py) with in-memory clusters and group."""

from __future__ import annotations

import time

from tests.unit.fakes import FakeClients, FakeCluster, FakeEngine, load
from tests.unit.properties_text import THREE_CLUSTERS

from sparkmirror.control.coordination import plan_coordination
from sparkmirror.runtime.ownership import Ownership
from sparkmirror.runtime.supervisor import Supervisor

TEXT = THREE_CLUSTERS + "A->B.enabled = true\nC->B.enabled = true\nreplication.factor = 1\n"
SIX = THREE_CLUSTERS + "".join(f"{s}->{t}.enabled = true\n" for s in "ABC" for t in "ABC" if s != t) \
    + "replication.factor = 1\n"


def clusters():
    made = [FakeCluster(alias) for alias in "ABC"]
    for cluster in made:
        cluster.add_topic(f"{cluster.alias.lower()}-orders", 2, end=5)
    return FakeClients(*made)


def process(tmp_path, name: str, clients: FakeClients, text: str = TEXT) -> Supervisor:
    config = load(text)
    ownership = Ownership(plan_coordination(config, None), clients, name=name)
    return Supervisor(config, tmp_path / name, clients=clients, engine=FakeEngine(), ownership=ownership)


def settle(*sups: Supervisor, seconds: float = 0.6) -> None:
    """Turn each supervisor's loop (its ownership changes) until nothing changed for `seconds`."""
    quiet_since = time.monotonic()
    deadline = quiet_since + 15
    while time.monotonic() - quiet_since < seconds and time.monotonic() < deadline:
        for sup in sups:
            _, started = sup.assignment.apply()
            before = {n: r.owned for n, r in sup.flows.items()}
            if started or before != getattr(sup, "_seen", None):
                quiet_since = time.monotonic()
            sup._seen = before
        time.sleep(0.05)


def running(sup: Supervisor) -> set[str]:
    return {f.flow for f in sup.status().flows if f.state == "running"}


def test_a_second_process_stands_by_and_both_say_who_runs_what(tmp_path):
    clients = clusters()
    first, second = process(tmp_path, "p1", clients), process(tmp_path, "p2", clients)
    try:
        first.start()
        settle(first)
        assert running(first) == {"A->B", "C->B"}
        second.start()
        settle(first, second)
        # the sticky share: the newcomer takes one of the two flows, the other stays where it ran
        assert running(first) | running(second) == {"A->B", "C->B"}
        assert not running(first) & running(second)
        assert len(running(first)) == len(running(second)) == 1
        standby = next(f for f in second.status().flows if f.state == "standby")
        assert standby.owner == "p1" and standby.flow in running(first)
        assert second.status().process == "p2" and second.status().coordinated
        # the heartbeat-only pairs go with the flows: each beats in one process
        pairs = {p.name for p in load(TEXT).heartbeat_only_pairs()}
        assert set(first.heartbeats.names) | set(second.heartbeats.names) == pairs
        assert not set(first.heartbeats.names) & set(second.heartbeats.names)
        assert any("(runs in p1)" in line for line in second.status().lines())
    finally:
        second.shutdown(5)
        first.shutdown(5)


def test_a_revoked_flow_stops_before_the_newcomer_starts_it(tmp_path):
    clients = clusters()
    first, second = process(tmp_path, "p1", clients), process(tmp_path, "p2", clients)
    try:
        first.start()
        settle(first)
        queries = {q.request.flow.name: q for q in first.engine.queries}
        second.start()
        settle(first, second)
        moved = running(second).pop()
        assert queries[moved].stopped  # stopped here, so only one process writes it
        assert [q.request.flow.name for q in second.engine.queries] == [moved]
    finally:
        second.shutdown(5)
        first.shutdown(5)


def test_a_stopped_process_gives_its_flows_to_the_standby_which_continues_at_the_committed_positions(tmp_path):
    clients = clusters()
    first, second = process(tmp_path, "p1", clients), process(tmp_path, "p2", clients)
    first.start()
    settle(first)
    second.start()
    settle(first, second)
    held = running(first)
    runner = first.flows[next(iter(held))]
    # the writer reports: positions move and are committed on the target, for at-least-once too
    from sparkmirror.model import PartitionSummary
    runner._on_batch(0, [PartitionSummary("a-orders" if runner.flow.source == "A" else "c-orders", 0, 3, 0, 3, 3,
                                          (0, 2), (0, 2))], time.monotonic())
    group = runner.flow.positions_group
    committed = clients.clusters["B"].committed_offsets[group]
    assert committed[(runner.plan.remote_topics[next(iter(runner.assignment))], 0)][0] == 3
    first.shutdown(5)
    settle(second)
    assert running(second) == {"A->B", "C->B"}
    taken = next(q for q in second.engine.queries if q.request.flow.name == runner.flow.name)
    assert 3 in taken.request.offsets[next(iter(runner.assignment))].values()  # from Kafka: p2's state dir is empty
    second.shutdown(5)


def test_three_processes_share_six_flows_and_a_stopped_ones_move(tmp_path):
    clients = clusters()
    sups = [process(tmp_path, f"p{i}", clients, SIX) for i in range(3)]
    try:
        for sup in sups:
            sup.start()
            settle(*sups[:sups.index(sup) + 1])
        runs = [running(sup) for sup in sups]
        assert sorted(len(r) for r in runs) == [2, 2, 2]
        assert set().union(*runs) == {f.name for f in load(SIX).enabled_flows()}
        sups[0].shutdown(5)
        settle(*sups[1:])
        after = [running(sup) for sup in sups[1:]]
        assert sorted(len(r) for r in after) == [3, 3] and set().union(*after) == set().union(*runs)
    finally:
        for sup in sups[1:]:
            sup.shutdown(5)


def test_a_process_whose_session_expired_stops_its_flows_without_waiting(tmp_path):
    clients = clusters()
    first, second = process(tmp_path, "p1", clients), process(tmp_path, "p2", clients)
    try:
        first.start()
        settle(first)
        second.start()
        settle(first, second)
        first.ownership._membership.expire()  # cut off: the group gave its flows to p2
        settle(first, second)
        assert running(first) == set() and running(second) == {"A->B", "C->B"}
        assert all(q.stopped for q in first.engine.queries)
    finally:
        second.shutdown(5)
        first.shutdown(5)


def test_a_paused_process_stops_its_flows_at_once_and_runs_them_again_once_the_group_still_gives_them(tmp_path):
    clients = clusters()
    sup = process(tmp_path, "p1", clients)
    ownership = sup.ownership
    now = [1000.0]
    ownership._clock = lambda: now[0]
    renewed: list[tuple[frozenset[str], int]] = []
    try:
        sup.start()
        settle(sup)
        assert running(sup) == {"A->B", "C->B"}
        ownership._renew = lambda units, ms: renewed.append((units, ms))
        now[0] += ownership.lease_ms / 1000 + 1  # the next tick comes late: the process was paused
        deadline = time.monotonic() + 5
        while ownership.pauses == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        renewed.clear()
        sup.assignment.apply()
        assert running(sup) == set()  # stopped before anything was renewed
        assert all(not units for units, _ in renewed)
        deadline = time.monotonic() + 10
        while running(sup) != {"A->B", "C->B"} and time.monotonic() < deadline:
            now[0] += 0.1  # time goes on: a few heartbeats later the group has not taken them away
            sup.assignment.apply()
            time.sleep(0.05)
        assert running(sup) == {"A->B", "C->B"}
    finally:
        sup.shutdown(5)


def test_a_revocation_waiting_for_its_flow_to_stop_keeps_the_other_flows_leases_and_is_no_pause(tmp_path):
    clients = clusters()
    first, second = process(tmp_path, "p1", clients), process(tmp_path, "p2", clients)
    ownership = first.ownership
    now = [1000.0]
    ownership._clock = lambda: now[0]
    renewed: list[frozenset[str]] = []
    try:
        first.start()
        settle(first)
        ownership._renew = lambda units, ms: renewed.append(units)
        second.start()  # p1's revoke callback now waits for p1's control loop, which does not turn for a while
        deadline = time.monotonic() + 5
        while not ownership._awaiting_stop and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ownership._awaiting_stop, "no revocation is waiting"
        renewed.clear()
        for _ in range(80):  # 8 s of the clock go by, more than the 5 s lease, in small steps
            now[0] += 0.1
            time.sleep(0.02)
        kept = {"A->B", "C->B"} - ownership._awaiting_stop
        assert renewed and all(kept <= units for units in renewed[-5:])
        assert ownership.pauses == 0
        settle(first, second)
        assert len(running(first)) == len(running(second)) == 1
    finally:
        second.shutdown(5)
        first.shutdown(5)
