"""The takeover trial's replicators: several processes that share one flow, which of them runs it now, and how
one is killed and brought back.

- MM2 on a Connect cluster (`Mm2Distributed`): N distributed workers of one group on the target
  (testing/connect_distributed.py) running MM2's three connectors for the flow; the member that runs the copy is
  the worker that Connect's status names for the MirrorSourceConnector's tasks (the one with the most of them).
- sparkmirror (`SparkmirrorGroup`): N `sparkmirror run` processes on one properties file, each with its own
  state dir and metrics port; the member that runs the flow is the first whose `/api/status` reports the flow
  `running`. Today every process runs it; once "one writer per flow" lands, the others report another state.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.kill_processes import crash, survivors
from benchmarks.replicators import start_sparkmirror, stop_process_group, tail
from sparkmirror.testing.connect_distributed import (
    SOURCE_CONNECTOR,
    ConnectorStatus,
    ConnectRestError,
    ConnectWorker,
    mirror_connector_configs,
    submit,
)
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER, free_port

TARGET_ALIAS = "tgt"
MM2_ALIAS = "mm2src"
SPARKMIRROR_ALIAS = "smsrc"
RUNNING_STATE = "running"  # a flow's state in sparkmirror's /api/status while its query replicates
READY_TIMEOUT_S = 180.0
HTTP_TIMEOUT_S = 2.0


@dataclass(frozen=True, slots=True)
class Runner:
    """The member that runs the flow now, and what told us so (for the trial's JSON)."""

    member: int  # index in the replicator's members
    evidence: Mapping[str, object]


def flow_states(statuses: Mapping[str, Mapping[str, object] | None], flow: str) -> dict[str, str | None]:
    """Each process's state of `flow` from its `/api/status` JSON (None: no answer, or the flow not listed)."""
    out: dict[str, str | None] = {}
    for name, status in statuses.items():
        flows = status.get("flows") if status is not None else None
        entry = next((f for f in flows if isinstance(f, Mapping) and f.get("name") == flow), None) if isinstance(
            flows, list) else None
        state = entry.get("state") if entry is not None else None
        out[name] = state if isinstance(state, str) else None
    return out


def first_runner(states: Mapping[str, str | None]) -> str | None:
    """The first process (in the given order) whose state of the flow is `running`: the one to kill when, as
    today, several copy the same flow."""
    return next((name for name, state in states.items() if state == RUNNING_STATE), None)


class Mm2Distributed:
    """MM2 on a Connect cluster of `workers` distributed workers on the target, copying `topic` from the source."""

    def __init__(self, source: str, target: str, topic: str, workers: int, tasks: int, rebalance_delay_ms: int,
                 name: str, keep_logs: bool = False) -> None:
        self.name, self.topic = name, topic
        self.remote_topic = f"{MM2_ALIAS}.{topic}"
        self.rebalance_delay_ms = rebalance_delay_ms
        group = f"takeover-{name}"
        self.members = [ConnectWorker(target, group, name=f"{name}-worker-{i + 1}", keep_logs=keep_logs,
                                      rebalance_delay_ms=rebalance_delay_ms) for i in range(workers)]
        self.configs = mirror_connector_configs(MM2_ALIAS, TARGET_ALIAS, source, target, topic, tasks)

    def member_name(self, index: int) -> str:
        worker = self.members[index]
        return f"{worker.name} ({worker.worker_id})"

    def start(self) -> None:
        for worker in self.members:
            worker.start()
        for worker in self.members:
            worker.wait_ready(READY_TIMEOUT_S)
        submit([w.rest for w in self.members], self.configs, READY_TIMEOUT_S)

    def _status(self, exclude: int | None = None) -> ConnectorStatus | None:
        for k, worker in enumerate(self.members):
            if k != exclude and worker.alive:
                with contextlib.suppress(ConnectRestError, ValueError):
                    return worker.rest.status(SOURCE_CONNECTOR)
        return None

    def runner(self) -> Runner | None:
        """The live worker running the most of the MirrorSourceConnector's tasks; None while none runs one."""
        status = self._status()
        busiest = status.busiest_worker() if status is not None else None
        if status is None or busiest is None:
            return None
        index = next((k for k, w in enumerate(self.members) if w.worker_id == busiest and w.alive), None)
        if index is None:
            return None
        running = status.running_tasks()
        leader = self.members[index].leader()
        return Runner(index, {"tasks_by_worker": running, "killed_tasks": running[busiest], "group_leader": leader,
                              "killed_the_leader": leader == busiest if leader else None})

    def moved(self, victim: int) -> bool:
        """Connect's status says every task of the MirrorSourceConnector runs on another worker."""
        status = self._status(exclude=victim)
        return status is not None and status.all_running_elsewhere(self.members[victim].worker_id)

    def kill(self, index: int) -> None:
        self.members[index].kill()

    def restart(self, index: int) -> None:
        worker = self.members[index]
        worker.start()
        worker.wait_ready(READY_TIMEOUT_S)

    def alive(self) -> list[bool]:
        return [w.alive for w in self.members]

    def stop(self) -> None:
        """SIGTERM every worker at once (one by one, each stop would move tasks to the others), then wait."""
        for worker in self.members:
            if worker.process is not None and worker.alive:
                worker.process.send_signal(signal.SIGTERM)
        for worker in self.members:
            worker.stop()

    def close(self) -> list[int]:
        """Whatever still runs, on any exit path (folders removed unless keep_logs); returns survivors (none: a
        worker's group is SIGKILLed if SIGTERM did not end it)."""
        for worker in self.members:
            worker.close()
        return []

    def folders(self) -> list[Path]:
        return [w.dir for w in self.members if w.dir is not None]

    def log_tail(self, index: int | None = None) -> str:
        chosen = self.members if index is None else [self.members[index]]
        return "\n".join(f"--- {w.name}\n{w.log_tail(20)}" for w in chosen)


@dataclass
class SparkmirrorProcess:
    """One `sparkmirror run` of the group: its state folder, metrics port and every process it was (one per start)."""

    name: str
    run_dir: Path
    port: int
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)  # each start's process group, led by its watchdog
    logs: list[Path] = field(default_factory=list)

    @property
    def alive(self) -> bool:
        return bool(self.procs) and self.procs[-1].poll() is None

    def status(self) -> Mapping[str, object] | None:
        """Its `/api/status` JSON, or None if it does not answer."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/status", timeout=HTTP_TIMEOUT_S) as answer:
                body = json.loads(answer.read())
        except (OSError, urllib.error.URLError, ValueError):
            return None
        return body if isinstance(body, Mapping) else None


class SparkmirrorGroup:
    """`processes` `sparkmirror run` processes on one properties file, copying `topic` from the source."""

    def __init__(self, source: str, target: str, topic: str, processes: int, cores: int, workdir: Path,
                 name: str = "sparkmirror") -> None:
        self.name, self.topic = name, topic
        self.remote_topic = f"{SPARKMIRROR_ALIAS}.{topic}"
        self.flow = f"{SPARKMIRROR_ALIAS}->{TARGET_ALIAS}"
        self.config = workdir / "sparkmirror-takeover.properties"
        self.config.write_text(
            f"clusters = {SPARKMIRROR_ALIAS}, {TARGET_ALIAS}\n{SPARKMIRROR_ALIAS}.bootstrap.servers = {source}\n"
            f"{TARGET_ALIAS}.bootstrap.servers = {target}\n{self.flow}.enabled = true\n{self.flow}.topics = {topic}\n"
            f"{SINGLE_BROKER}tasks.max = {cores}\nsparkmirror.trigger.mode = micro-batch\n"
            f"spark.master = local[{cores}]\n")
        self.members = [SparkmirrorProcess(f"{name}-{i + 1}", workdir / f"{name}-{i + 1}", free_port())
                        for i in range(processes)]

    def member_name(self, index: int) -> str:
        member = self.members[index]
        return f"{member.name} (:{member.port})"

    def _launch(self, member: SparkmirrorProcess) -> None:
        member.run_dir.mkdir(parents=True, exist_ok=True)
        log = member.run_dir / f"sparkmirror-{len(member.procs) + 1}.log"
        proc = start_sparkmirror(self.config, member.run_dir, log, ["--metrics-port", str(member.port)])
        member.procs.append(proc)
        member.groups.append(os.getpgid(proc.pid))
        member.logs.append(log)

    def _wait_ready(self, member: SparkmirrorProcess) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while member.status() is None:
            if not member.alive:
                raise RuntimeError(f"{member.name} exited ({member.procs[-1].returncode}) during start-up:\n"
                                   f"{tail(member.logs[-1])}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{member.name}: no /api/status on port {member.port} after "
                                   f"{READY_TIMEOUT_S:.0f} s:\n{tail(member.logs[-1])}")
            time.sleep(0.5)

    def start(self) -> None:
        for member in self.members:
            self._launch(member)
        for member in self.members:
            self._wait_ready(member)

    def states(self) -> dict[str, str | None]:
        return flow_states({m.name: m.status() if m.alive else None for m in self.members}, self.flow)

    def runner(self) -> Runner | None:
        """The first live process whose /api/status says it runs the flow."""
        states = self.states()
        name = first_runner(states)
        index = next((k for k, m in enumerate(self.members) if m.name == name), None)
        return Runner(index, {"flow_states": states}) if index is not None else None

    def moved(self, victim: int) -> bool:
        """Another process reports the flow running."""
        return any(s == RUNNING_STATE for n, s in self.states().items() if n != self.members[victim].name)

    def kill(self, index: int) -> None:
        """kill -9 the process group of the member's latest start and wait until all of it is gone."""
        member = self.members[index]
        crash(member.procs[-1], member.groups[-1])
        stop_process_group(member.procs[-1])  # it is gone: this only releases its watchdog

    def restart(self, index: int) -> None:
        member = self.members[index]
        self._launch(member)
        self._wait_ready(member)

    def alive(self) -> list[bool]:
        return [m.alive for m in self.members]

    def stop(self) -> None:
        """A clean stop (SIGTERM) of every process at once; one signal each, since a second one ends sparkmirror
        without finishing its stop."""
        live = [m.procs[-1] for m in self.members if m.alive]
        with ThreadPoolExecutor(max(1, len(live))) as pool:
            list(pool.map(stop_process_group, live))

    def close(self) -> list[int]:
        """SIGKILL whatever still runs, on any exit path; returns the processes that survived even that."""
        left: list[int] = []
        for member in self.members:
            for proc, pgid in zip(member.procs, member.groups, strict=True):
                if proc.poll() is None:
                    try:
                        crash(proc, pgid)
                    except RuntimeError:
                        left += survivors(pgid, set())
                stop_process_group(proc)
        return left

    def folders(self) -> list[Path]:
        return [m.run_dir for m in self.members]

    def log_tail(self, index: int | None = None) -> str:
        chosen: Sequence[SparkmirrorProcess] = self.members if index is None else [self.members[index]]
        return "\n".join(f"--- {m.name}\n{tail(m.logs[-1], 20) if m.logs else ''}" for m in chosen)
