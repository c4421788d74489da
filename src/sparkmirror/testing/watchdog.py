"""Child processes (the local JVMs) that end when their owner, this Python process, ends however it ends.

Neither a group kill of the owner nor Python's default SIGTERM action (no `finally`, no atexit) reaches a JVM
in a process group of its own. So each JVM joins a group led by a watchdog: a small Python process blocked
reading a pipe whose write end only the owner holds. When the owner ends, even by SIGKILL, the kernel closes
that end; the watchdog reads EOF, SIGTERMs its group and SIGKILLs it (itself included) after a grace period.
A normal stop writes a byte first, and the watchdog exits without killing. The watchdog starts first, so the
JVM never runs unwatched, and its group id cannot be reused while the watchdog, our unreaped child, lives.

Not prctl(PR_SET_PDEATHSIG): it fires when the *thread* that started the child ends (a cluster started from a
worker thread would die with it), needs `preexec_fn` (unsafe with threads) and sends one signal, no follow-up.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import IO

logger = logging.getLogger(__name__)

GRACE_S = 5.0  # between the watchdog's SIGTERM and SIGKILL; a broker whose owner is gone needs no more

# Run with `python -I -S`: no site-packages, so it starts in ~15 ms and imports nothing of ours. It ignores
# the SIGTERM it sends its own group. Live members are found in /proc (zombies left out); without /proc it
# waits the whole grace period.
_WATCHDOG_SOURCE = """
import os, signal, sys, time
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
fd, grace = int(sys.argv[1]), float(sys.argv[2])
if os.read(fd, 1):
    sys.exit(0)
me = os.getpid()
def others_alive():
    try:
        names = os.listdir("/proc")
    except OSError:
        return True
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                state, _, pgrp = f.read().rpartition(b")")[2].split()[:3]
        except (OSError, ValueError):
            continue
        if int(pgrp) == me and state != b"Z":
            return True
    return False
os.killpg(me, signal.SIGTERM)
deadline = time.monotonic() + grace
while others_alive() and time.monotonic() < deadline:
    time.sleep(0.05)
os.killpg(me, signal.SIGKILL)
"""

_armed: set[Watchdog] = set()  # strong references: an unreleased watchdog guards its group until we end


def _disarm_in_forked_child() -> None:
    """A forked (not exec'd) child must not hold the write ends, or the pipes would outlive their owner."""
    for dog in _armed:
        os.close(dog._write_end)
        dog._write_end = -1
    _armed.clear()


os.register_at_fork(after_in_child=_disarm_in_forked_child)


class Watchdog:
    """Leads a process group and ends it (SIGTERM, then SIGKILL) once this process ends.

    Invariant: until release(), only this process holds the pipe's write end (non-inheritable, closed in
    forked children), so the watchdog reads EOF exactly when this process ends.
    """

    def __init__(self, grace_s: float = GRACE_S) -> None:
        read_end, self._write_end = os.pipe()  # both O_CLOEXEC: no other child inherits them
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _WATCHDOG_SOURCE, str(read_end), str(grace_s)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(read_end,), process_group=0)
        except BaseException:
            os.close(self._write_end)
            raise
        finally:
            os.close(read_end)
        _armed.add(self)

    @property
    def pgid(self) -> int:
        """The id of the watched process group (the watchdog's pid)."""
        return self._process.pid

    def release(self) -> None:
        """Let the watchdog exit without killing: the owner has ended the group's other processes itself."""
        if self._write_end < 0:
            return
        try:
            os.write(self._write_end, b"x")
        except BrokenPipeError:
            pass  # the watchdog is already gone (a SIGKILL to the whole group)
        finally:
            os.close(self._write_end)
            self._write_end = -1
            _armed.discard(self)
        self._process.wait()


def spawn(cmd: Sequence[str], stdout: int | IO[bytes], stderr: int | IO[bytes] | None, grace_s: float = GRACE_S,
          env: Mapping[str, str] | None = None) -> tuple[subprocess.Popen[bytes], Watchdog]:
    """Start `cmd` in a new process group led by a Watchdog; call the watchdog's release() after the process
    has ended. Stdin is /dev/null: the group is in the background of the owner's terminal. `stderr` None: this
    process's. `env` replaces this process's environment."""
    dog = Watchdog(grace_s)
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, env=env,
                                process_group=dog.pgid)
    except BaseException:
        dog.release()
        raise
    logger.debug("started pid=%d in process group %d led by its watchdog", proc.pid, dog.pgid)
    return proc, dog


def run(cmd: Sequence[str], timeout_s: float, grace_s: float = GRACE_S,
        env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env), with the child watched."""
    dog = Watchdog(grace_s)
    try:
        with subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env, process_group=dog.pgid) as proc:
            try:
                out, err = proc.communicate(timeout=timeout_s)
            finally:  # what `cmd` started and left running (a timeout's too) ends with it, the watchdog included
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(dog.pgid, signal.SIGKILL)
        return subprocess.CompletedProcess(list(cmd), proc.returncode, out, err)
    finally:
        dog.release()
