"""A finished command leaves within a bound, whatever is still running.

Once a command's work is done (a stop saved its positions, or an error was reported), Python's exit still
joins non-daemon threads, runs atexit handlers and destroys client handles; a thread or a librdkafka handle
blocked on a cluster or a Spark JVM that is gone kept `sparkmirror run` alive for minutes after a SIGTERM.
`exit_within` bounds that: past the grace period the process ends with the status it was leaving with,
naming what it was still waiting for.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import sys
import threading

EXIT_GRACE_S = 10.0
# faulthandler's watchdog is a C thread: it still fires when the exit hangs after Python threads are stopped
# (a client's destructor during the interpreter's teardown); it prints every thread's stack and exits 1.
_LAST_RESORT_S = 5.0


def exit_within(grace_s: float, status: int) -> None:
    """Arm the bound; call when the process is about to exit with `status`."""

    def expire() -> None:
        waiting = [t.name for t in threading.enumerate()
                   if not t.daemon and t is not threading.main_thread()] or ["the interpreter's teardown"]
        os.write(2, (f"sparkmirror: leaving took longer than {grace_s:g} s (still waiting for: "
                     f"{', '.join(waiting)}); exiting now\n").encode())
        os._exit(status)

    timer = threading.Timer(grace_s, expire)
    timer.name = "sparkmirror-exit-deadline"
    timer.daemon = True
    timer.start()
    with contextlib.suppress(AttributeError, ValueError, OSError):  # no stderr with a descriptor: the timer alone
        faulthandler.dump_traceback_later(grace_s + _LAST_RESORT_S, exit=True, file=sys.stderr)


def exit_status(code: object) -> int:
    """The process status `sys.exit(code)` leads to."""
    if code is None:
        return 0
    return code if isinstance(code, int) else 1
