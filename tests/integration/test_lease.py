"""A query's lease on the real record path (pipeline/jvm/.../Lease.java): started with `lease_ms`, its writers
copy while the lease is renewed, send nothing once it expires, copy the held records when it is renewed again,
and stop cleanly while they wait, leaving the held records to the next query."""

from __future__ import annotations

import threading
import time

from sparkmirror.config.mm2 import load_config
from sparkmirror.runtime.engine import QueryRequest, SparkEngine
from sparkmirror.testing.records import produce

from .conftest import count_records, records, wait_until

LEASE_MS = 2_000
RENEW_EVERY_S = 0.5  # as the supervisor renews
HOLD_S = 6.0  # how long an expired lease is watched holding the target still (a copy takes about a second)
COPY_S = 90.0
STOP_S = 30.0


class Renewer:
    """Renews a query's lease every RENEW_EVERY_S while on, as the supervisor does."""

    def __init__(self, query) -> None:
        self.query = query
        self.on = threading.Event()
        self.stopped_at = time.monotonic()  # when the last renewal before `pause` was sent
        self._end = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.on.set()
        self._thread.start()

    def _run(self) -> None:
        while not self._end.wait(RENEW_EVERY_S):
            if self.on.is_set():
                self.query.renew_lease(LEASE_MS)

    def pause(self) -> None:
        self.on.clear()
        self.stopped_at = time.monotonic()

    def expired(self) -> bool:
        return time.monotonic() > self.stopped_at + LEASE_MS / 1000 + RENEW_EVERY_S

    def end(self) -> None:
        self._end.set()
        self._thread.join(10)


def holds_for(predicate, seconds: float, what: str) -> None:
    """Fail as soon as `predicate()` is false within `seconds`."""
    deadline = time.monotonic() + seconds
    wait_until(lambda: not predicate() or time.monotonic() >= deadline, seconds + 30, what)
    assert predicate(), what


def test_a_query_writes_only_while_its_lease_is_renewed(clusters, create_topic, mm2_properties, spark, unique,
                                                        tmp_path):
    topic, remote = f"lease-{unique}", f"A.lease-{unique}"
    create_topic("A", topic, 1)
    create_topic("B", remote, 1)
    produce(clusters.source, topic, records("a", 50))
    flow = load_config(mm2_properties(topic)).flow("A", "B")
    reported: list[int] = []
    request = QueryRequest(flow, {topic: {0: 0}}, {topic: remote}, {}, {}, tmp_path / "checkpoint",
                           f"lease-{unique}", lambda _n, summaries, _t: reported.extend(
                               s.next_upstream for s in summaries if s.next_upstream >= 0), lease_ms=LEASE_MS)
    query = SparkEngine({"spark.master": spark.sparkContext.master}).start_query(request)
    renewer = Renewer(query)
    stopped = False
    try:
        wait_until(lambda: count_records(clusters.target, remote) == 50, COPY_S, "the backlog, lease renewed")

        renewer.pause()
        wait_until(renewer.expired, LEASE_MS / 1000 + 5, "the lease to expire")
        produce(clusters.source, topic, records("b", 30))
        holds_for(lambda: count_records(clusters.target, remote) == 50, HOLD_S,
                  "nothing written while the lease is expired")
        assert query.status() == (True, None), "the query waits, it does not fail"

        renewer.on.set()
        wait_until(lambda: count_records(clusters.target, remote) == 80, COPY_S, "the held records, lease renewed")

        renewer.pause()
        wait_until(renewer.expired, LEASE_MS / 1000 + 5, "the lease to expire again")
        produce(clusters.source, topic, records("c", 10))
        holds_for(lambda: count_records(clusters.target, remote) == 80, HOLD_S / 2, "nothing written again")
        started = time.monotonic()
        query.stop()
        stopped = True
        assert time.monotonic() - started < STOP_S, "a stop ends the writers' wait"
    finally:
        renewer.end()
        if not stopped:
            query.stop()
    assert query.status()[1] is None
    assert count_records(clusters.target, remote) == 80
    assert max(reported) == 80, "the held records are not reported: the next query reads them again"
