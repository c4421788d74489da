"""ClusterProbes: whether each cluster of the file answers, asked every few seconds on loops of their own.

A flow's jobs only learn that a cluster is down by waiting out their timeouts (30 s for a write), and the
query's writers retry without end; so the process would not know, and the web view would draw the cluster
healthy. Each cluster gets a scheduler on a daemon thread of its own that asks for metadata with a short
timeout (its own admin client, `client.id` sparkmirror-probe): a cluster that does not answer delays only its
own probes, never the control loop, a flow's jobs or another cluster's probe. Only `start` starts threads;
tests run the loops with `run_due`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from functools import partial

from sparkmirror.config.model import ClusterConfig
from sparkmirror.control.ports import Clients, TopicAdmin
from sparkmirror.errors import SparkmirrorError
from sparkmirror.runtime.scheduler import Scheduler
from sparkmirror.runtime.status import ClusterHealth

logger = logging.getLogger(__name__)

PROBE_INTERVAL_S = 2.0
PROBE_TIMEOUT_S = 2.0
CLIENT_ID = "sparkmirror-probe"
JOB = "probe"


def probed(previous: ClusterHealth, error: str | None, now_ms: int) -> ClusterHealth:
    """The health after a probe that failed with `error` (None: it answered); `since_ms` moves on a change."""
    state = "up" if error is None else "down"
    since = previous.since_ms if previous.state == state else now_ms
    return ClusterHealth(previous.alias, state, error, since, now_ms)


class ClusterProbes:
    """The clusters probed, by alias, each on its own loop. Watched (`watch`) from one thread (the supervisor's);
    `health` may be read from any (entries are replaced whole, never changed)."""

    def __init__(self, clients: Clients, stop: threading.Event, clock: Callable[[], float] = time.monotonic,
                 wall_ms: Callable[[], int] = lambda: int(time.time() * 1000),
                 interval_s: float = PROBE_INTERVAL_S, timeout_s: float = PROBE_TIMEOUT_S) -> None:
        self._clients = clients
        self._stop = stop
        self._clock = clock
        self._wall_ms = wall_ms
        self._interval_s = interval_s
        self._timeout_s = timeout_s
        self._health: dict[str, ClusterHealth] = {}
        self._loops: dict[str, Scheduler] = {}
        self._started = False

    def watch(self, clusters: Mapping[str, ClusterConfig]) -> None:
        """Probe these clusters from now on (the first probe at once), and no longer the others; a cluster whose
        admin settings librdkafka cannot take is not probed (its flows report that)."""
        for alias in [a for a in self._loops if a not in clusters]:
            self._loops[alias].cancel("")
            self._health.pop(alias, None)
        for alias, cluster in clusters.items():
            if cluster.admin.problems:
                continue
            admin = self._clients.admin(alias, {**cluster.admin.rdkafka, "client.id": CLIENT_ID})
            self._health.setdefault(alias, ClusterHealth(alias, "unknown", None, None, None))
            self._loop(alias).every(f"{alias}: {JOB}", self._interval_s, partial(self._probe, admin), first_in_s=0)

    def health(self) -> tuple[ClusterHealth, ...]:
        """Each cluster watched, in the order given."""
        return tuple(self._health.values())

    def start(self) -> None:
        """Start a thread per cluster (and for clusters watched later); once."""
        if self._started:
            return
        self._started = True
        for alias, loop in self._loops.items():
            self._start_thread(alias, loop)

    def run_due(self) -> None:
        """Run every loop's due probe on the calling thread (tests)."""
        for loop in list(self._loops.values()):
            loop.run_due(self._stop.is_set)

    def _probe(self, admin: TopicAdmin) -> None:
        alias = admin.alias
        try:
            admin.probe(self._timeout_s)
            error = None
        except SparkmirrorError as exc:  # unreachable, refused, a listener of another protocol: all "down"
            error = str(exc)
        previous = self._health.get(alias)
        if previous is None:  # no longer watched
            return
        health = probed(previous, error, self._wall_ms())
        if health.state != previous.state:
            if error is None:
                logger.info("cluster %s answers again", alias)
            else:
                logger.warning("cluster %s does not answer: %s", alias, error)
        self._health[alias] = health

    def _loop(self, alias: str) -> Scheduler:
        loop = self._loops.get(alias)
        if loop is None:
            loop = self._loops[alias] = Scheduler(self._clock)
            if self._started:
                self._start_thread(alias, loop)
        return loop

    def _start_thread(self, alias: str, loop: Scheduler) -> None:
        threading.Thread(target=loop.run_until, args=(self._stop,), name=f"sparkmirror-probe-{alias}",
                         daemon=True).start()
