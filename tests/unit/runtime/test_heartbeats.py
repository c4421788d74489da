"""HeartbeatPairs: the heartbeats of cluster pairs that are not running flows, each target on a loop of its own."""

from __future__ import annotations

import contextlib
import threading

from tests.unit.fakes import Clock, FakeClients, FakeCluster, FakeWriter, load
from tests.unit.properties_text import THREE_CLUSTERS

from sparkmirror.offsets.codec import decode_heartbeat
from sparkmirror.runtime.heartbeats import CLIENT_ID, HeartbeatPairs
from sparkmirror.runtime.stopping import StopDeadline

TEXT = THREE_CLUSTERS + ("A->B.enabled = true\nA.producer.client.id = a-producer\nA.admin.client.id = a-admin\n"
                         "heartbeats.topic.replication.factor = 1\n")
WAIT_S = 10.0  # for another thread; the tests end as soon as it answers


def pairs(text: str = TEXT, clients: FakeClients | None = None):
    clusters = {alias: FakeCluster(alias) for alias in "ABC"}
    clients = clients or FakeClients(*clusters.values())
    clock = Clock()
    beats = HeartbeatPairs(clients, clock)
    config = load(text)
    for pair in config.heartbeat_only_pairs():
        beats.add(pair)
    return beats, clients, clock, config


def beats_in(cluster: FakeCluster) -> list[tuple[str, str]]:
    return [(b.source_alias, b.target_alias) for b in
            (decode_heartbeat(r.key, r.value) for r in cluster.logs.get("heartbeats", []))]


def test_every_other_pair_beats_into_its_target_with_that_pairs_clients():
    beats, clients, clock, config = pairs()
    assert beats.names == ("A->C", "B->A", "B->C", "C->A", "C->B")  # MM2's clusterPairs but the running A->B
    beats.run_due()
    assert clients.writers == []  # the first beat is one interval away
    clock.now = 1.0
    beats.run_due()
    a, c = clients.clusters["A"], clients.clusters["C"]
    assert beats_in(a) == [("B", "A"), ("C", "A")] and beats_in(c) == [("A", "C"), ("B", "C")]
    assert beats_in(clients.clusters["B"]) == [("C", "B")]
    assert [s.name for s in a.created] == ["heartbeats"] and a.created[0].replication_factor == 1
    into_a = [w for w in clients.writers if w.cluster is a]
    assert {w.settings["client.id"] for w in into_a} == {"a-producer"}  # A's worker producer, as MM2's herder
    admins_of_a = [settings for alias, settings in clients.admins if alias == "A"]
    assert admins_of_a and all(s["client.id"] == CLIENT_ID for s in admins_of_a)  # A's admin, its own client
    assert all(s["bootstrap.servers"] == "a:9092" for s in admins_of_a)
    assert config.flow("B", "A").emit_heartbeats.interval_s == 1


def test_a_pair_whose_target_is_down_beats_again_when_it_is_back():
    beats, clients, clock, _ = pairs()
    c = clients.clusters["C"]
    c.down = True
    clock.now = 1.0
    beats.run_due()
    assert "heartbeats" not in c.partitions and len(beats_in(clients.clusters["A"])) == 2  # the others beat
    c.down = False
    clock.now = 2.0
    beats.run_due()
    assert beats_in(c) == [("A", "C"), ("B", "C")]


class BlockingWriter(FakeWriter):
    """Holds every write until released, as a write to a cluster that is down waits for its timeout."""

    def __init__(self, cluster: FakeCluster, settings, clients: SignallingClients) -> None:
        super().__init__(cluster, settings)
        self.clients = clients

    def write(self, topic: str, records) -> int:
        self.clients.entered_c.set()
        self.clients.release.wait(WAIT_S)
        return super().write(topic, records)


class SignallingClients(FakeClients):
    """Writes into C block until `release` (`entered_c` says one began); a write into A sets `wrote_a`."""

    def __init__(self, *clusters: FakeCluster) -> None:
        super().__init__(*clusters)
        self.release, self.entered_c, self.wrote_a = threading.Event(), threading.Event(), threading.Event()

    def writer(self, alias: str, settings) -> FakeWriter:
        writer = super().writer(alias, settings)
        if alias == "C":
            writer = self.writers[-1] = BlockingWriter(self.clusters[alias], settings, self)
        else:
            original = writer.write

            def write(topic: str, records) -> int:
                count = original(topic, records)
                self.wrote_a.set()
                return count
            writer.write = write  # type: ignore[method-assign]
        return writer


@contextlib.contextmanager
def writing_into_c_blocks():
    """The pairs' loops running, each beat due, and a write into C under way (held until the end)."""
    clients = SignallingClients(*(FakeCluster(alias) for alias in "ABC"))
    beats, _, clock, _ = pairs(clients=clients)
    clock.now = 1.0
    beats.start()
    try:
        assert clients.entered_c.wait(WAIT_S)
        yield beats, clients
    finally:
        beats.stop()
        clients.release.set()


def test_a_target_that_blocks_holds_only_its_own_loop():
    with writing_into_c_blocks() as (_, clients):
        assert clients.wrote_a.wait(WAIT_S), "A's heartbeats waited for C's"


def test_a_removed_pair_stops_and_its_writer_is_closed_on_its_own_loop():
    beats, clients, clock, _ = pairs()
    clock.now = 1.0
    beats.run_due()
    [writer] = [w for w in clients.writers if w.cluster.alias == "A" and not w.closed][:1]
    beats.remove("B->A")
    assert not writer.closed  # not by the caller: a flush to a cluster that is down would hold it
    clock.now = 2.0
    beats.run_due()
    assert writer.closed
    assert beats_in(clients.clusters["A"]) == [("B", "A"), ("C", "A"), ("C", "A")]
    assert "B->A" not in beats.names


def test_a_replaced_pair_beats_with_its_new_settings():
    beats, clients, clock, _ = pairs()
    clock.now = 1.0
    beats.run_due()
    beats.replace(load(TEXT.replace("a-producer", "a-producer-2")).flow("B", "A"))
    clock.now = 2.0
    beats.run_due()
    into_a = [w for w in clients.writers if w.cluster.alias == "A"]
    assert [(w.settings["client.id"], w.closed) for w in into_a][-1] == ("a-producer-2", False)
    assert len(beats_in(clients.clusters["A"])) == 4


def test_a_pair_librdkafka_cannot_write_with_is_logged_once_and_not_started(caplog):
    text = TEXT + "A.producer.security.protocol = SASL_SSL\nA.producer.sasl.mechanism = NOPE\n"
    beats, *_ = pairs(text)
    assert "B->A" not in beats.names and "C->A" not in beats.names and "A->C" in beats.names
    assert "heartbeats of B->A not started: A.producer.sasl.mechanism" in caplog.text
    beats.remove("B->A")  # a reload may remove it: nothing to do


def test_close_leaves_a_loop_under_a_call_alone():
    with writing_into_c_blocks() as (beats, clients):
        beats.stop()
        deadline = StopDeadline(WAIT_S)
        beats.close(deadline)
        assert deadline.abandoned == []  # C's writers were not even tried
        assert not any(w.closed for w in clients.writers if w.cluster.alias == "C")


def test_each_pair_says_how_many_beats_it_wrote_and_why_the_last_failed():
    beats, clients, clock, _ = pairs()
    assert {p.name: p.state for p in beats.status()} == dict.fromkeys(beats.names, "waiting")
    clients.clusters["C"].down = True
    clock.now = 1.0
    beats.run_due()
    status = {p.name: p for p in beats.status()}
    b_to_a, a_to_c = status["B->A"], status["A->C"]
    assert (b_to_a.state, b_to_a.beats, b_to_a.failures, b_to_a.source, b_to_a.target) == ("beating", 1, 0, "B", "A")
    assert b_to_a.last_beat_ms is not None and b_to_a.age_s(b_to_a.last_beat_ms + 1500) == 1.5
    assert (a_to_c.state, a_to_c.beats, a_to_c.failures_in_a_row, a_to_c.last_beat_ms) == ("failing", 0, 1, None)
    assert "cluster down" in a_to_c.last_error
    clients.clusters["C"].down = False
    clock.now = 2.0
    beats.run_due()
    a_to_c = next(p for p in beats.status() if p.name == "A->C")
    assert (a_to_c.state, a_to_c.beats, a_to_c.failures, a_to_c.failures_in_a_row) == ("beating", 1, 1, 0)
