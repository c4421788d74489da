"""The JVMs of LocalKafkaCluster and LocalMirrorMaker end when the Python process owning them ends, however
it ends (SIGTERM's default action runs no `finally`; SIGKILL runs nothing), and a normal stop leaves nothing."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sparkmirror.testing.kafka_cluster import LocalKafkaCluster
from sparkmirror.testing.processes import alive, group_members

from .conftest import wait_until

GONE_S = 30.0  # the watchdog's SIGTERM, a broker's shutdown, and SIGKILL after its 5 s grace period

# Starts a cluster (killed and restarted with "restarted", plus an MM2 with "mm2"), prints what to watch, waits.
_OWNER = """
import json, os, signal, sys
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER, LocalKafkaCluster
from sparkmirror.testing.mirror_maker import CONNECT_SINGLE_BROKER, LocalMirrorMaker
cluster = LocalKafkaCluster(sys.argv[1]).start()
if "restarted" in sys.argv:
    cluster.kill()
    cluster.restart()
pids, dirs = [cluster.pid], [str(cluster.dir)]
if "mm2" in sys.argv:
    b = cluster.bootstrap_servers
    mm = LocalMirrorMaker(f"clusters = A, B\\nA.bootstrap.servers = {b}\\nB.bootstrap.servers = {b}\\n"
                          f"A->B.enabled = true\\n{SINGLE_BROKER}{CONNECT_SINGLE_BROKER}", name=sys.argv[1]).start()
    pids.append(mm.process.pid)
    dirs.append(str(mm.dir))
print(json.dumps({"pids": pids, "groups": [os.getpgid(p) for p in pids], "dirs": dirs}), flush=True)
signal.pause()
"""


def run_owner(tmp_path: Path, how: signal.Signals, *options: str) -> None:
    """Start an owner process, end it with `how`, and require its JVMs and their groups to end."""
    name = f"owner-exit-{how.name.lower()}"
    with open(tmp_path / "owner.log", "wb") as log:
        owner = subprocess.Popen([sys.executable, "-c", _OWNER, name, *options], stdout=subprocess.PIPE,
                                 stderr=log, text=True)
    assert owner.stdout is not None
    line = owner.stdout.readline()
    started = json.loads(line) if line else None
    try:
        assert started, f"the owner did not start its JVMs:\n{(tmp_path / 'owner.log').read_text()}"
        assert all(alive(pid) for pid in started["pids"])
        owner.send_signal(how)
        assert owner.wait(timeout=GONE_S) == -how
        wait_until(lambda: not any(group_members(g) for g in started["groups"]), GONE_S,
                   f"the JVMs {started['pids']} and their process groups {started['groups']} to end after the "
                   f"owner's {how.name}")
    finally:
        owner.kill()
        owner.wait()
        for group in started["groups"] if started else ():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
        for folder in started["dirs"] if started else ():
            shutil.rmtree(folder, ignore_errors=True)  # the owner never reached stop()


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_a_local_cluster_ends_with_its_owner(tmp_path, how):
    run_owner(tmp_path, how)


def test_a_restarted_cluster_and_mirror_maker_end_with_their_owner(tmp_path):
    run_owner(tmp_path, signal.SIGKILL, "restarted", "mm2")


def test_kill_restart_and_stop_leave_no_watchdog_behind(unique):
    cluster = LocalKafkaCluster(f"test-watchdog-{unique}").start()
    try:
        assert cluster.pid is not None
        first = os.getpgid(cluster.pid)
        assert first != os.getpgid(0) and len(group_members(first)) == 2  # the broker and its watchdog
        cluster.kill()
        assert group_members(first) == []
        cluster.restart()
        assert cluster.pid is not None
        second = os.getpgid(cluster.pid)
        assert second != first and len(group_members(second)) == 2
    finally:
        cluster.stop()
    assert group_members(second) == []
