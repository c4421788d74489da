"""Bounded stops: every step of a stop runs against one deadline, and a step still running when it passes
is abandoned (named in the log), never waited for.

A step that blocks (a client call to a cluster that is down, a Spark JVM that does not answer) must not keep
the process alive: positions only move after the target acknowledged the records, so abandoning a step can
cost re-sent records on the next start, never lost ones.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)

DEFAULT_STOP_TIMEOUT_S = 30.0


class StopDeadline:
    """One deadline shared by the steps of a stop; `abandoned` names every step that did not finish."""

    def __init__(self, timeout_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout_s = timeout_s
        self._clock = clock
        self._ends = clock() + timeout_s
        self.abandoned: list[str] = []

    def remaining(self) -> float:
        return max(0.0, self._ends - self._clock())

    def run(self, step: str, action: Callable[[], object]) -> bool:
        """Run `action` on a daemon thread and wait for it until the deadline; False if abandoned.

        A step that raises is logged and counts as done: the stop goes on with the next step.
        """
        if self.remaining() <= 0:
            self.abandon(step, "not started")
            return False
        errors: list[BaseException] = []

        def target() -> None:
            try:
                action()
            except BaseException as exc:  # noqa: BLE001 - logged below; the stop goes on
                errors.append(exc)

        thread = threading.Thread(target=target, name=f"stop: {step}", daemon=True)
        thread.start()
        return self.join(thread, step, errors)

    def join(self, thread: threading.Thread, step: str, errors: list[BaseException] | None = None) -> bool:
        """Wait for a thread until the deadline; False (and the step abandoned) if it is still running."""
        thread.join(self.remaining())
        if thread.is_alive():
            self.abandon(step, "still running")
            return False
        for exc in errors or ():
            logger.warning("stop: %s failed: %s", step, exc)
        return True

    def abandon(self, step: str, why: str) -> None:
        self.abandoned.append(step)
        logger.warning("stop: abandoned %s (%s at the %.0f s stop deadline); nothing acknowledged is lost, "
                       "records not yet acknowledged are copied again at the next start", step, why,
                       self.timeout_s)


class Activity:
    """What a thread (the control loop) is doing now, as a phrase a stop that has to abandon it names."""

    def __init__(self, now: str = "starting") -> None:
        self.now = now
