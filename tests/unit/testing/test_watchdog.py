"""watchdog.py with `sleep` children instead of JVMs: a watched group ends with its owner, however the owner
ends, and only then."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from sparkmirror.testing import watchdog

GONE_S = 10.0  # generous on a loaded 2-core machine; an armed watchdog acts within milliseconds

# An owner process: starts `sleep`s in watched groups (and optionally an unwatched `sleep` and a forked
# child), prints their pids as one JSON line, then ends the way argv[1] says.
_OWNER = """
import json, os, signal, subprocess, sys
from sparkmirror.testing import watchdog
how, grace = sys.argv[1], float(sys.argv[2])
cmd = sys.argv[3:]
proc, dog = watchdog.spawn(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, grace_s=grace)
other = subprocess.Popen(["sleep", "60"])  # not watched; must not inherit the pipe
forked = os.fork()
if forked == 0:  # a fork without exec must not keep the pipe open either
    signal.pause()
print(json.dumps({"child": proc.pid, "watchdog": dog.pgid, "other": other.pid, "forked": forked}), flush=True)
if how == "raise":
    raise RuntimeError("owner fails without stopping its children")
signal.pause()
"""


def alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (the test's own children are reaped by the test)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[0] != b"Z"
    except FileNotFoundError:
        return False


def wait_until(predicate: Callable[[], bool], what: str, timeout_s: float = GONE_S) -> None:
    deadline = time.monotonic() + timeout_s
    delay = 0.005
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        threading.Event().wait(delay)
        delay = min(delay * 2, 0.1)


@pytest.fixture
def owner() -> Iterator[Callable[..., tuple[subprocess.Popen[str], dict[str, int]]]]:
    """Start owner processes; at teardown every process they printed is killed, whatever the test did."""
    started: list[tuple[subprocess.Popen[str], dict[str, int]]] = []

    def start(how: str, *cmd: str, grace_s: float = watchdog.GRACE_S) -> tuple[subprocess.Popen[str], dict[str, int]]:
        proc = subprocess.Popen([sys.executable, "-c", _OWNER, how, str(grace_s), *cmd], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
        assert proc.stdout is not None
        pids = json.loads(proc.stdout.readline())
        started.append((proc, pids))
        return proc, pids

    yield start
    for proc, pids in started:
        for pid in (proc.pid, pids["other"], pids["forked"]):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pids["watchdog"], signal.SIGKILL)  # the watched group, should a test have failed
        proc.wait()


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL", "raise"])
def test_the_watched_group_ends_when_its_owner_ends(owner, how):
    proc, pids = owner(how, "sleep", "60")
    if how != "raise":
        proc.send_signal(signal.Signals[how])
    proc.wait(timeout=GONE_S)
    wait_until(lambda: not alive(pids["child"]) and not alive(pids["watchdog"]), "the child and its watchdog to end")
    # neither an unwatched child (exec'd, so the pipe was never inherited) nor a forked one held the pipe open
    assert alive(pids["other"]) and alive(pids["forked"])


def test_a_child_ignoring_sigterm_is_killed_after_the_grace_period(owner):
    proc, pids = owner("SIGKILL", "sh", "-c", "trap '' TERM; sleep 60", grace_s=0.5)
    proc.kill()
    proc.wait()
    t0 = time.monotonic()
    wait_until(lambda: not alive(pids["child"]) and not alive(pids["watchdog"]), "SIGKILL after the grace period")
    assert time.monotonic() - t0 >= 0.3  # SIGTERM alone did not end it


def test_release_ends_the_watchdog_and_kills_nothing():
    proc, dog = watchdog.spawn(["sleep", "60"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert os.getpgid(proc.pid) == dog.pgid != os.getpgid(0)
        dog.release()
        assert not alive(dog.pgid)
        assert proc.poll() is None  # released, not killed: ending the group is the owner's job now
        dog.release()  # idempotent
    finally:
        proc.kill()
        proc.wait()


def test_release_after_the_whole_group_was_killed():
    proc, dog = watchdog.spawn(["sleep", "60"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.killpg(dog.pgid, signal.SIGKILL)
    proc.wait()
    dog.release()  # the watchdog died too: its pipe is broken
    assert not alive(dog.pgid)


def test_run_returns_the_output_and_kills_on_timeout():
    done = watchdog.run(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout_s=10)
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err\n")
    with pytest.raises(subprocess.TimeoutExpired):
        watchdog.run(["sleep", "60"], timeout_s=0.2)


@pytest.mark.parametrize("timeout_s", [10, 0.5], ids=["after-exit", "on-timeout"])
def test_run_ends_what_the_command_left_running(timeout_s, tmp_path):
    """spark-submit's JVM starts the Python driver: that child must not outlive the command, whether the command
    exits or times out."""
    pid_file = tmp_path / "pid"
    script = f"sleep 300 >/dev/null 2>&1 & echo $! > {pid_file}; " + ("exit 0" if timeout_s > 1 else "sleep 60")
    with contextlib.suppress(subprocess.TimeoutExpired):
        watchdog.run(["sh", "-c", script], timeout_s=timeout_s)
    left = int(pid_file.read_text())
    wait_until(lambda: not alive(left), f"the command's child {left} to end")


def test_spawn_runs_the_child_in_the_environment_it_is_given(monkeypatch):
    monkeypatch.setenv("OWNER_ONLY", "owner")
    proc, dog = watchdog.spawn(["sh", "-c", 'echo "${GIVEN-unset} ${OWNER_ONLY-unset}"'], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, env={"GIVEN": "given"})
    out, _ = proc.communicate(timeout=GONE_S)
    dog.release()
    assert out == b"given unset\n"
