"""Three processes of one file share its six flows through the coordination group, on real brokers.

The three supervisors run in this process on the session's Spark (as three hosts would, each with its own
state dir and name in the group); a third cluster joins the session's two so that six flows exist.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from sparkmirror.config.mm2 import load_config
from sparkmirror.control.coordination import plan_coordination
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.groups import ConsumerGroups
from sparkmirror.model import NewTopicSpec
from sparkmirror.runtime.clients import KafkaClients
from sparkmirror.runtime.ownership import Ownership
from sparkmirror.runtime.supervisor import Supervisor
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER, LocalKafkaCluster

from .conftest import wait_until

MOVE_LIMIT_S = 20  # the bound for a stopped process's flows to run elsewhere


@pytest.fixture(scope="module")
def third_cluster() -> Iterator[str]:
    cluster = LocalKafkaCluster("test-ownership-C").start()
    try:
        yield cluster.bootstrap_servers
    finally:
        cluster.stop()


class Process:
    """A supervisor with its control loop on a thread, as `sparkmirror run` has it."""

    def __init__(self, path, state_dir, name: str, engine) -> None:
        config = load_config(path)
        plan = plan_coordination(config, None)
        assert plan is not None
        clients = KafkaClients()
        self.name = name
        self.supervisor = Supervisor(config, state_dir, clients=clients, engine=engine,
                                     ownership=Ownership(plan, clients, name=name))
        self.errors: list[BaseException] = []
        self.supervisor.start()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        try:
            self.supervisor.wait(poll_s=0.2)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.errors.append(exc)

    def running(self) -> set[str]:
        return {f.flow for f in self.supervisor.status().flows if f.state == "running"}

    def stop(self) -> None:
        self.supervisor.stop()
        self.thread.join(60)
        assert not self.errors, self.errors


class SharedEngine:
    """The session's Spark for several supervisors: stopping one must not stop the others' queries."""

    def __init__(self, engine) -> None:
        self._engine = engine

    def __getattr__(self, name: str):
        return getattr(self._engine, name)

    def stop(self) -> None:
        pass


def test_three_processes_share_six_flows_and_a_stopped_ones_move_within_20_s(clusters, third_cluster, spark,
                                                                            tmp_path, unique):
    from sparkmirror.runtime.engine import SparkEngine

    servers = {"A": clusters.source, "B": clusters.target, "C": third_cluster}
    text = ("clusters = A, B, C\n" + "".join(f"{a}.bootstrap.servers = {s}\n" for a, s in servers.items())
            + "".join(f"{s}->{t}.enabled = true\n{s}->{t}.topics = own-{unique}\n"
                      for s in servers for t in servers if s != t)
            + SINGLE_BROKER + "heartbeats.replication.enabled = false\nsync.topic.acls.enabled = false\n"
            + "emit.checkpoints.enabled = false\nsync.topic.configs.enabled = false\n")
    path = tmp_path / "mm2.properties"
    path.write_text(text)
    for alias, bootstrap in servers.items():
        created = ClusterAdmin(alias, {"bootstrap.servers": bootstrap}).create_topics([NewTopicSpec(f"own-{unique}",
                                                                                                   1, 1)])
        assert created[f"own-{unique}"] is None
    engine = SharedEngine(SparkEngine({}))
    processes: list[Process] = []
    try:
        for i in range(3):
            processes.append(Process(path, tmp_path / f"host{i}", f"proc-{i}-{unique}", engine))
        flows = {f"{s}->{t}" for s in servers for t in servers if s != t}

        def shared() -> list[set[str]] | None:
            runs = [p.running() for p in processes]
            ok = sum(len(r) for r in runs) == 6 and set().union(*runs) == flows and all(runs)
            return runs if ok else None

        runs = wait_until(shared, 60, "each flow on one process, every process with one")
        assert sorted(len(r) for r in runs) == [2, 2, 2]  # the group balances them
        # each standby names the process that runs the flow
        for process in processes:
            for flow in process.supervisor.status().flows:
                if flow.state == "standby":
                    owner = next(p for p in processes if flow.flow in p.running())
                    wait_until(lambda p=process, f=flow.flow, o=owner: p.supervisor.status().flow(f).owner == o.name,
                               15, f"{process.name} to name {owner.name} for {flow.flow}")

        gone = processes.pop(0)
        moved = gone.running()
        stopped_at = time.monotonic()
        gone.stop()
        after = wait_until(lambda: (runs := [p.running() for p in processes]) and
                           set().union(*runs) == flows and sum(len(r) for r in runs) == 6 and runs,
                           MOVE_LIMIT_S, "the stopped process's flows to run on the others")
        assert time.monotonic() - stopped_at < MOVE_LIMIT_S
        assert sorted(len(r) for r in after) == [3, 3] and moved <= set().union(*after)
        # the group on the coordination cluster says the same
        plan = processes[0].supervisor.ownership.plan
        members = processes[0].supervisor.ownership._membership.members()
        assert sorted(len(m.partitions) for m in members) == [3, 3]
        assert {m.client_id for m in members} == {p.name for p in processes}
        assert ConsumerGroups("B", {"bootstrap.servers": servers[plan.cluster]}).describe([plan.group])[
            plan.group].members == 2
    finally:
        for process in processes:
            process.stop()
