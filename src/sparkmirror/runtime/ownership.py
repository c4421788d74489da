"""Ownership: which units (flows, heartbeat-only pairs) this process runs, and the fence that keeps it honest.

Every process started with one file joins its coordination group (control/coordination.py, kafka/membership.py);
Kafka's group protocol gives each unit to one member. A thread of its own polls the group, so its callbacks
never wait for the supervisor's control loop, and hands the supervisor an ordered list of changes
(`take_changes`): units gained, to start, and units lost, to stop. Three rules keep a unit written by one
process at a time:

- a unit revoked by a rebalance (a new member takes some) reaches its next owner only once this process has
  stopped it: the revoke callback waits for the supervisor's `stopped()`;
- the record path's writers hold a lease (`renew`, every tick, `lease_ms` long, half the session timeout) and
  write nothing once it has run out: a driver that is paused or cut off stops its writers on its own, before
  the group gives its flows to another member (after a whole session timeout);
- a tick that comes much later than it should (the process was paused: SIGSTOP, a VM frozen) stops every unit
  at once, before anything is renewed, and starts them again only after a few heartbeats passed without the
  group taking them away.

`SoleOwnership` owns every unit from the start, without a group: a process that only catches up
(`--until-caught-up`, a batch), whose run ends by itself.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sparkmirror.control.coordination import CoordinationPlan
from sparkmirror.control.ports import Clients, Membership, TopicAdmin
from sparkmirror.model import Member, NewTopicSpec

logger = logging.getLogger(__name__)

TICK_S = 0.25
REVOKE_WAIT_S = 60.0  # how long a revocation waits for its units to stop (a stop is bounded well below)
DESCRIBE_INTERVAL_S = 15.0  # how often the group's members are read again for status (and at each rebalance);
# each read is a child process (kafka/group_describer.py): about 0.3 s of CPU
DESCRIBE_TIMEOUT_S = 30.0
HOLD_HEARTBEATS = 3  # after a pause, heartbeats to wait for before running the units again
Renewal = Callable[[frozenset[str], int], None]


@dataclass(frozen=True)
class Change:
    """Units gained (`gained` True: start them) or lost (stop them, then call `Ownership.stopped`)."""

    gained: bool
    units: frozenset[str]


def process_name() -> str:
    """How this process is named to the group and in status: host and pid."""
    return f"sparkmirror-{socket.gethostname()}-{os.getpid()}"


class SoleOwnership:
    """Every unit, at once and for good (no group): see the module docstring."""

    lease_ms = 0  # no lease: nothing else can take a unit over

    def __init__(self, units: Iterable[str]) -> None:
        self.units = tuple(units)
        self.me = process_name()
        self._changes = [Change(True, frozenset(self.units))] if self.units else []

    @property
    def coordinated(self) -> bool:
        return False

    def start(self, renew: Renewal) -> None:
        pass

    def wait_joined(self, timeout_s: float) -> bool:
        return True

    def take_changes(self) -> list[Change]:
        changes, self._changes = self._changes, []
        return changes

    def stopped(self, units: Iterable[str]) -> None:
        pass

    def owners(self) -> dict[str, str]:
        return dict.fromkeys(self.units, self.me)

    def members(self) -> tuple[Member, ...]:
        return ()

    def close(self) -> None:
        pass


class Ownership:
    """This process in its file's coordination group; see the module docstring. Thread-safe."""

    def __init__(self, plan: CoordinationPlan, clients: Clients, clock: Callable[[], float] = time.monotonic,
                 name: str | None = None) -> None:
        self.plan = plan
        self.me = name or process_name()
        self._clients = clients
        self._clock = clock
        self._membership: Membership | None = None
        self._lock = threading.Condition()
        self._changes: list[Change] = []
        self._owned: set[str] = set()
        self._held: set[str] = set()  # owned, stopped after a pause, not yet trusted again
        self._held_until = 0.0
        self._awaiting_stop: set[str] = set()  # revoked, the supervisor has not stopped them yet
        self._joined = threading.Event()
        self._rebalanced = threading.Event()  # the group changed: read its members again at the next tick
        self._stop = threading.Event()
        self._closing = False
        self._members: tuple[Member, ...] = ()
        self._thread: threading.Thread | None = None
        self._describer: threading.Thread | None = None
        self._renew: Renewal = lambda _units, _ms: None
        self._last_tick = 0.0
        self._hold_s = 0.0  # after a pause, how long to wait before running the units again
        self.pauses = 0  # ticks that came late enough to stop every unit (for tests and status)

    @property
    def coordinated(self) -> bool:
        return True

    @property
    def lease_ms(self) -> int:
        """How long the writers may go on after the last renewal: half the session timeout."""
        return self.plan.session_timeout_ms // 2

    @property
    def units(self) -> tuple[str, ...]:
        return self.plan.units

    # -- the supervisor's side ---------------------------------------------------------------------------
    def start(self, renew: Renewal) -> None:
        """Create the group's topic (one partition per unit), join the group, start polling it."""
        plan = self.plan
        admin = self._clients.admin(plan.cluster, plan.settings)
        _create_coordination_topic(admin, plan)
        self._renew = renew
        membership = self._clients.membership(plan.cluster, plan.settings, plan.group, plan.session_timeout_ms,
                                               self.me)
        membership.join(self._assigned, self._revoked, self._lost)
        self._membership = membership
        logger.info("coordination: %s joins group %s on cluster '%s' for %d unit(s): %s", self.me, plan.group,
                    plan.cluster, len(plan.units), ", ".join(plan.units))
        self._thread = threading.Thread(target=self._run, name="sparkmirror-ownership", daemon=True)
        self._thread.start()

    def wait_joined(self, timeout_s: float) -> bool:
        """Wait for the first assignment (possibly of nothing: a standby); False if none came in time."""
        return self._joined.wait(timeout_s)

    def take_changes(self) -> list[Change]:
        with self._lock:
            changes, self._changes = self._changes, []
        return changes

    def stopped(self, units: Iterable[str]) -> None:
        """The supervisor stopped these lost units: a revocation waiting for them may now complete."""
        with self._lock:
            self._awaiting_stop -= set(units)
            self._lock.notify_all()

    def owners(self) -> dict[str, str]:
        """unit -> the process running it, as the group's last description says (this process by its own view)."""
        with self._lock:
            members, running = self._members, self._owned - self._held
        out = {unit: m.client_id for unit, m in self.plan.owners(members).items()}
        for unit in self.plan.units:
            if unit in running:
                out[unit] = self.me
            elif out.get(unit) == self.me:
                del out[unit]  # the description is older than our last loss
        return out

    def members(self) -> tuple[Member, ...]:
        return self._members

    def close(self) -> None:
        """Leave the group (the others take our units at once); the supervisor has stopped them already."""
        self._closing = True
        with self._lock:
            self._lock.notify_all()
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=REVOKE_WAIT_S)
        elif self._membership is not None:
            self._close_membership()

    # -- the group's callbacks (on this class's thread, inside poll) -------------------------------------
    def _assigned(self, partitions: set[int]) -> None:
        units = self.plan.units_of(partitions)
        self._rebalanced.set()
        with self._lock:
            new = units - self._owned
            self._owned |= units
            if new:
                self._changes.append(Change(True, frozenset(new)))
        self._joined.set()
        if new:
            logger.info("coordination: %s runs %s", self.me, ", ".join(sorted(new)))

    def _revoked(self, partitions: set[int]) -> None:
        """A rebalance moves these units: return only once they stopped (or the wait ran out)."""
        units = self.plan.units_of(partitions)
        self._lose(units, "handed to another process")
        if self._closing:
            return
        deadline = self._clock() + REVOKE_WAIT_S
        while True:
            with self._lock:
                if not self._awaiting_stop & units or self._closing:
                    return
                left = deadline - self._clock()
                if left <= 0:
                    logger.error("coordination: %s still not stopped after %.0f s; handing them over anyway",
                                 ", ".join(sorted(self._awaiting_stop & units)), REVOKE_WAIT_S)
                    return
                self._lock.wait(min(left, TICK_S))
            # The units this process keeps are still its own meanwhile: their writers' leases must not run out,
            # and this wait is no pause (a real one, during it, is still seen as one).
            self._tick()
            self._renew_leases()

    def _lost(self, partitions: set[int]) -> None:
        """The group has already given these units to others (our session expired): stop them, don't wait."""
        self._lose(self.plan.units_of(partitions), "lost: this process's session in the group expired")

    def _lose(self, units: set[str], why: str) -> None:
        self._rebalanced.set()
        with self._lock:
            gone = units & self._owned
            self._owned -= gone
            running = gone - self._held
            self._held -= gone
            if running:
                self._awaiting_stop |= running
                self._changes.append(Change(False, frozenset(running)))
        if gone:
            logger.info("coordination: %s stops %s (%s)", self.me, ", ".join(sorted(gone)), why)

    # -- the thread ------------------------------------------------------------------------------------
    def _run(self) -> None:
        assert self._membership is not None
        membership = self._membership
        self._hold_s = HOLD_HEARTBEATS * membership.heartbeat_interval_ms / 1000
        self._last_tick = self._clock()
        described = -DESCRIBE_INTERVAL_S
        try:
            while not self._stop.is_set():
                self._tick()
                try:
                    membership.poll(TICK_S)
                except Exception as exc:  # noqa: BLE001 - the group's trouble shows as lost units, not here
                    logger.warning("coordination: polling group %s failed: %s", self.plan.group, exc)
                    self._stop.wait(TICK_S)
                now = self._tick()
                self._release_held(now)
                self._renew_leases()
                if now - described >= DESCRIBE_INTERVAL_S or self._rebalanced.is_set():
                    self._rebalanced.clear()
                    described = now
                    self._describe(membership)
        finally:
            self._close_membership()

    def _tick(self) -> float:
        """Read the clock; a reading much later than the one before means this process was paused."""
        now = self._clock()
        gap, self._last_tick = now - self._last_tick, now
        if gap > self.lease_ms / 1000:
            self._hold(gap, now + self._hold_s)
        return now

    def _hold(self, gap_s: float, until: float) -> None:
        """A late tick: this process was paused. Its units may be running elsewhere already: stop them now."""
        with self._lock:
            running = self._owned - self._held
            if not running:
                return
            self.pauses += 1
            self._held |= running
            self._held_until = until
            self._awaiting_stop |= running
            self._changes.append(Change(False, frozenset(running)))
        logger.warning("coordination: %s was paused for %.1f s (more than the writers' lease of %d ms); stopping "
                       "%s until the group confirms they are still this process's", self.me, gap_s, self.lease_ms,
                       ", ".join(sorted(running)))

    def _release_held(self, now: float) -> None:
        with self._lock:
            if not self._held or now < self._held_until:
                return
            back = self._held & self._owned
            self._held = set()
            if back:
                self._changes.append(Change(True, frozenset(back)))
        if back:
            logger.info("coordination: %s still holds %s after its pause; running them again", self.me,
                        ", ".join(sorted(back)))

    def _renew_leases(self) -> None:
        with self._lock:
            running = frozenset(self._owned - self._held)
        try:
            self._renew(running, self.lease_ms)
        except Exception as exc:  # noqa: BLE001 - a query between generations; the next tick renews again
            logger.debug("coordination: renewing the writers' leases failed: %s", exc)

    def _describe(self, membership: Membership) -> None:
        """Read the group's members on a thread of its own, one read at a time: this thread renews the leases and
        must never wait for an answer, and a short request timeout is no way out (librdkafka 2.16 aborts the
        process, `rd_kafka_enq_once_del_source_return`, when a coordinator request it timed out is answered
        while the coordinator restarts)."""
        if self._describer is not None and self._describer.is_alive():
            return

        def read() -> None:
            try:
                self._members = tuple(membership.members(DESCRIBE_TIMEOUT_S))
            except Exception as exc:  # noqa: BLE001 - only status reads it
                logger.debug("coordination: describing group %s failed: %s", self.plan.group, exc)

        self._describer = threading.Thread(target=read, name="sparkmirror-ownership-describe", daemon=True)
        self._describer.start()

    def _close_membership(self) -> None:
        membership, self._membership = self._membership, None
        if membership is None:
            return
        self._closing = True
        try:
            membership.close()
        except Exception as exc:  # noqa: BLE001 - leaving late only delays the others by a session timeout
            logger.warning("coordination: leaving group %s failed: %s", self.plan.group, exc)


def _create_coordination_topic(admin: TopicAdmin, plan: CoordinationPlan) -> None:
    """The group's topic: one partition per flow (or pair), never written; an existing one is left as it is."""
    spec = NewTopicSpec(plan.topic, len(plan.partitions), -1, {"cleanup.policy": "compact", "retention.ms": "-1"})
    error = admin.create_topics([spec]).get(spec.name)
    if error is not None:
        raise error

