"""HeartbeatPairs: the heartbeats of the cluster pairs that are not flows this process runs (MM2's clusterPairs).

MM2 runs a heartbeat connector for every ordered pair of clusters unless its `emit.heartbeats.enabled` is false,
replicated or not; config/mm2.MirrorMakerConfig.heartbeat_only_pairs names those no running flow covers.

A write to a cluster that is down waits out its acknowledgement timeout (30 s) and a topic creation the admin's,
so the pairs are grouped by target cluster and each target has a loop of its own (a scheduler on a daemon
thread): a cluster that is down delays only the heartbeats written to it, never a flow's jobs (each flow has
loops of its own, runtime/flow_loops.py) or the heartbeats of another cluster. Only `start` starts the threads;
tests run the loops with `run_due`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable

from sparkmirror.config.diff import ConfigDiff
from sparkmirror.config.model import FlowConfig
from sparkmirror.control.heartbeats import HeartbeatEmitter
from sparkmirror.control.ports import Clients
from sparkmirror.runtime.scheduler import JobStats, Scheduler
from sparkmirror.runtime.status import HeartbeatPairStatus
from sparkmirror.runtime.stopping import StopDeadline

logger = logging.getLogger(__name__)

JOB = "emit heartbeats"
CLIENT_ID = "sparkmirror-heartbeats"  # its admin is its own: it runs on another thread than the flows' jobs


class HeartbeatPairs:
    """Heartbeat-only pairs by name (`B->A`), each an emitter scheduled on its target cluster's loop.

    Added, removed and replaced from one thread (the supervisor's); their loops run them on theirs. A pair
    removed is closed on its own loop, so a flush to a cluster that is down never holds the caller.
    """

    def __init__(self, clients: Clients, clock: Callable[[], float] = time.monotonic) -> None:
        self._clients = clients
        self._clock = clock
        self._emitters: dict[str, HeartbeatEmitter] = {}
        self._loops: dict[str, Scheduler] = {}  # by target alias
        self._stats: dict[str, JobStats] = {}  # every loop's, by job name `<pair>: emit heartbeats`
        self._stop = threading.Event()
        self._started = False

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._emitters)

    @property
    def emitters(self) -> tuple[HeartbeatEmitter, ...]:
        return tuple(self._emitters.values())

    def status(self) -> tuple[HeartbeatPairStatus, ...]:
        """Each pair beating now: its beats and failures since the process started; safe from any thread."""
        out = []
        for name, emitter in list(self._emitters.items()):
            stats = self._stats.get(f"{name}: {JOB}", JobStats())
            pair = emitter.pair
            out.append(HeartbeatPairStatus(name, pair.source, pair.target, pair.emit_heartbeats.interval_s,
                                           stats.runs - stats.failures, stats.failures, stats.failures_in_a_row,
                                           stats.last_error, emitter.last_beat_ms))
        return tuple(out)

    def add(self, pair: FlowConfig) -> None:
        """Beat for `pair` every `emit.heartbeats.interval.seconds`, starting one interval from now; a pair whose
        clients' settings librdkafka cannot take is logged once and not started."""
        problems = [*pair.target_admin.problems, *pair.heartbeats_producer.problems]
        if problems:
            logger.error("heartbeats of %s not started: %s", pair.name, "; ".join(problems))
            return
        admin = self._clients.admin(pair.target, {**pair.target_admin.rdkafka, "client.id": CLIENT_ID})
        emitter = HeartbeatEmitter(pair, admin, self._clients)
        self._emitters[pair.name] = emitter
        self._loop(pair.target).every(f"{pair.name}: {JOB}", pair.emit_heartbeats.interval_s, emitter.emit)
        logger.info("heartbeats of %s: every %s s into cluster '%s' (not a flow this process runs)", pair.name,
                    pair.emit_heartbeats.interval_s, pair.target)

    def remove(self, name: str) -> None:
        """Stop beating for the pair; its writer is closed by its loop's next turn."""
        emitter = self._emitters.pop(name, None)
        if emitter is None:  # never started
            return
        loop = self._loops[emitter.pair.target]
        loop.cancel(f"{name}: {JOB}")
        closing = f"{name}: close {id(emitter)}"  # its own name: a second reload must not replace it

        def close() -> None:
            loop.cancel(closing)
            emitter.close()

        loop.every(closing, 0, close)

    def replace(self, pair: FlowConfig) -> None:
        """The pair with new settings: its old emitter removed, a new one added."""
        self.remove(pair.name)
        self.add(pair)

    def apply(self, diff: ConfigDiff, pairs: Iterable[FlowConfig]) -> None:
        """A reload: `diff`'s heartbeat pairs removed, restarted and added; `pairs` are the new configuration's."""
        by_name = {p.name: p for p in pairs}
        for name in diff.heartbeats_removed:
            self.remove(name)
        for name in diff.heartbeats_changed:
            self.replace(by_name[name])
        for name in diff.heartbeats_added:
            self.add(by_name[name])

    def add_all(self, pairs: Iterable[FlowConfig]) -> None:
        """add() each pair; their loops run once start() has been called."""
        for pair in pairs:
            self.add(pair)

    def start(self) -> None:
        """Start a loop thread per target cluster (and for targets added later); once."""
        if self._started:
            return
        self._started = True
        for target, loop in self._loops.items():
            self._start_thread(target, loop)

    def stop(self) -> None:
        """Stop the loops at their next turn; their daemon threads are never waited for."""
        self._stop.set()

    def run_due(self) -> None:
        """Run every loop's due jobs on the calling thread (tests)."""
        for loop in list(self._loops.values()):
            loop.run_due(self._stop.is_set)

    def close(self, deadline: StopDeadline | None = None) -> None:
        """Flush and close the writers of the loops that are idle (never a client under a call), each step
        bounded by `deadline` when given."""
        for name, emitter in list(self._emitters.items()):
            loop = self._loops[emitter.pair.target]
            if loop.running is not None:
                logger.info("stop: heartbeats of %s left to the process's exit (%s is running)", name, loop.running)
            elif deadline is None:
                emitter.close()
            else:
                deadline.run(f"close the heartbeats of {name}", emitter.close)

    def _loop(self, target: str) -> Scheduler:
        loop = self._loops.get(target)
        if loop is None:
            loop = self._loops[target] = Scheduler(self._clock, self._stats)
            if self._started:
                self._start_thread(target, loop)
        return loop

    def _start_thread(self, target: str, loop: Scheduler) -> None:
        thread = threading.Thread(target=loop.run_until, args=(self._stop,), name=f"sparkmirror-heartbeats-{target}",
                                  daemon=True)
        thread.start()
