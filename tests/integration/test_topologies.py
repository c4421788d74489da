"""Topologies beyond one A->B flow: active/active, fan-out, aggregation, rings and the Apache docs' 6 clusters.

Every test asserts exact record sets per topic and exactly which of this test's topics exist on every
cluster, so a loop (records coming back), a duplicate or a topic that should not exist fails the test.
"""

from __future__ import annotations

import functools
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME

from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord, NewTopicSpec
from sparkmirror.offsets.codec import decode_heartbeat
from sparkmirror.policy.provenance import PROVENANCE_HEADER
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER
from sparkmirror.testing.records import produce, read_all

from .conftest import TRIGGER_MODES, trigger_settings, wait_until
from .topology import expected_topology

# Heartbeats replicate whatever the topic filter says (MM2's rule), and the session's clusters may hold a
# `heartbeats` topic from other tests; tests that are not about heartbeats turn both off so that they only
# ever touch their own topics.
FAST = ("refresh.topics.interval.seconds = 1\nsync.topic.configs.enabled = false\n"
        "emit.heartbeats.enabled = false\nheartbeats.replication.enabled = false\n")
IDENTITY = "replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy\n"
# keep replicating after everything arrived: loops and duplicates would show up meanwhile (a record sent back comes
# with the next batch, a topic that should not exist with the next refresh: three of them, as the tests below wait)
SETTLE_S = 3
XDCR_EXAMPLE = Path(__file__).parent.parent / "data" / "mm2" / "valid" / "xdcr_six_clusters.properties"

Row = tuple[int, bytes | None, bytes | None]  # partition, key, value


# -- helpers -------------------------------------------------------------------------------------------
@functools.cache
def admin(bootstrap: str) -> ClusterAdmin:
    return ClusterAdmin("test", {"bootstrap.servers": bootstrap})


def count(bootstrap: str, topic: str) -> int:
    """Records in a topic (0 when it does not exist), with one admin client per cluster however often polled."""
    partitions = admin(bootstrap).topic_partitions().get(topic)
    if partitions is None:
        return 0
    return sum(high - low for low, high in admin(bootstrap).watermarks(topic, partitions).values())


def create(bootstrap: str, topic: str, partitions: int) -> None:
    for error in admin(bootstrap).create_topics([NewTopicSpec(topic, partitions, 1)]).values():
        if error:
            raise error


def records(tag: str, start: int, stop: int, partitions: int) -> list[KafkaRecord]:
    now = int(time.time() * 1000)
    return [KafkaRecord(i % partitions, -1, f"k{i}".encode(), f"{tag}-{i}".encode(), (), TIMESTAMP_CREATE_TIME, now)
            for i in range(start, stop)]


def rows(tag: str, n: int, partitions: int) -> Counter[Row]:
    """What `records(tag, 0, n, partitions)` looks like when read back: each record exactly once."""
    return Counter((r.partition, r.key, r.value) for r in records(tag, 0, n, partitions))


def read(bootstrap: str, topic: str) -> list[KafkaRecord]:
    partitions = admin(bootstrap).topic_partitions()[topic]
    return [r for rs in read_all(bootstrap, topic, partitions).values() for r in rs]


def read_rows(bootstrap: str, topic: str) -> Counter[Row]:
    return Counter((r.partition, r.key, r.value) for r in read(bootstrap, topic))


def topics_of_test(bootstrap: str, unique: str) -> set[str]:
    return {t for t in admin(bootstrap).topic_partitions() if unique in t}


def provenance(record: KafkaRecord) -> bytes | None:
    found = [v for k, v in record.headers if k == PROVENANCE_HEADER]
    assert len(found) <= 1, f"{record.value!r} carries {len(found)} provenance headers"
    return found[0] if found else None


def properties(path: Path, clusters: Mapping[str, str], flows: Mapping[str, str], extra: str = "") -> Path:
    """An MM2 file: the clusters (alias -> bootstrap servers), the enabled flows (`A->B` -> topics regex)."""
    lines = [f"clusters = {', '.join(clusters)}"]
    lines += [f"{alias}.bootstrap.servers = {bootstrap}" for alias, bootstrap in clusters.items()]
    for flow, topics in flows.items():
        lines += [f"{flow}.enabled = true", f"{flow}.topics = {topics}"]
    path.write_text("\n".join(lines) + "\n" + SINGLE_BROKER + extra)
    return path


def assert_topology(bootstraps: Mapping[str, str], expected: Mapping[str, Mapping[str, str]],
                    written: Mapping[str, Counter[Row]], unique: str) -> None:
    """Every cluster has exactly the expected topics of this test, each with exactly its origin's records."""
    for alias, bootstrap in bootstraps.items():
        assert topics_of_test(bootstrap, unique) == set(expected[alias]), f"topics on {alias}"
    wanted = [(alias, topic, origin) for alias, topics in expected.items() for topic, origin in topics.items()]
    with ThreadPoolExecutor(max_workers=8) as pool:  # one consumer per topic; 60 topics in the 6-cluster test
        found = list(pool.map(lambda w: read_rows(bootstraps[w[0]], w[1]), wanted))
    for (alias, topic, origin), got in zip(wanted, found, strict=True):
        assert got == written[origin], f"records of {topic} on {alias}"


def test_expected_topology_follows_mm2_naming_and_the_cycle_rule():
    flows = [("A", "B", ".*"), ("B", "C", ".*"), ("C", "A", ".*")]
    assert expected_topology(flows, {"A": ["t"]}) == {
        "A": {"t": "A"}, "B": {"A.t": "A"}, "C": {"B.A.t": "A"}}  # C.B.A.t would return to A
    assert expected_topology([("A", "B", "t"), ("B", "A", "t")], {"A": ["t"], "B": ["t"]}) == {
        "A": {"t": "A", "B.t": "B"}, "B": {"t": "B", "A.t": "A"}}


# -- 1. active/active ----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", TRIGGER_MODES)
@pytest.mark.parametrize("policy", ["identity", "default"])
def test_active_active_replicates_each_record_once_and_never_loops(clusters, running, tmp_path, unique, policy, mode):
    topic, per_side, partitions = f"aa-{unique}", 50, 3
    sides = {"A": clusters.source, "B": clusters.target}
    for bootstrap in sides.values():
        create(bootstrap, topic, partitions)
    path = properties(tmp_path / "aa.properties", sides, {"A->B": topic, "B->A": topic},
                      FAST + (IDENTITY if policy == "identity" else "") + trigger_settings(mode))
    written = {alias: rows(alias, per_side, partitions) for alias in sides}
    if policy == "identity":  # both origins end up in the one topic of each side
        expected = {alias: {topic: written["A"] + written["B"]} for alias in sides}
    else:
        expected = {"A": {topic: written["A"], f"B.{topic}": written["B"]},
                    "B": {topic: written["B"], f"A.{topic}": written["A"]}}

    def arrived() -> bool:
        return all(count(sides[alias], t) >= sum(want.values())
                   for alias, topics in expected.items() for t, want in topics.items())

    half = per_side // 2
    for alias, bootstrap in sides.items():
        produce(bootstrap, topic, records(alias, 0, half, partitions))
    with running(path) as supervisor:
        wait_until(lambda: all(f.query is not None for f in supervisor.flows.values()), 120, "both flows to start")
        for alias, bootstrap in sides.items():  # the other half while both flows run
            produce(bootstrap, topic, records(alias, half, per_side, partitions))
        wait_until(arrived, 120, "every record on both sides")
        time.sleep(SETTLE_S)
        assert all(f.failure is None for f in supervisor.flows.values())

    for alias, bootstrap in sides.items():
        assert topics_of_test(bootstrap, unique) == set(expected[alias]), f"no A.B.{topic} / B.A.{topic} on {alias}"
        for t, want in expected[alias].items():
            got = read(bootstrap, t)
            assert Counter((r.partition, r.key, r.value) for r in got) == want, f"{t} on {alias}"
            for r in got:
                origin = r.value.decode().split("-")[0]
                stamp = provenance(r)
                if policy == "identity":  # records that crossed name their origin; local ones carry nothing
                    assert stamp == (None if origin == alias else origin.encode()), (alias, r.value, stamp)
                else:  # `auto`: names already stop cycles, so no header is added
                    assert stamp is None, (alias, r.value, stamp)


# -- 2. fan-out, aggregation, rings, heartbeats --------------------------------------------------------
def test_fan_out_and_aggregation_create_exactly_the_remote_topics(clusters, more_clusters, running, tmp_path,
                                                                   unique):
    bootstraps = {"A": clusters.source, "B": clusters.target, "C": more_clusters[0]}
    t, u, n = f"t-{unique}", f"u-{unique}", 20
    create(bootstraps["A"], t, 2)
    create(bootstraps["B"], u, 1)
    produce(bootstraps["A"], t, records("A", 0, n, 2))
    produce(bootstraps["B"], u, records("B", 0, n, 1))
    # B->C matches only u, so B's copy `A.t` does not travel on to C as `B.A.t` (C gets A's own copy).
    flows = {"A->B": t, "A->C": t, "B->C": u}
    path = properties(tmp_path / "fan.properties", bootstraps, flows, FAST)
    expected = expected_topology([(*f.split("->"), regex) for f, regex in flows.items()], {"A": [t], "B": [u]})
    assert expected == {"A": {t: "A"}, "B": {u: "B", f"A.{t}": "A"}, "C": {f"A.{t}": "A", f"B.{u}": "B"}}
    written = {"A": rows("A", n, 2), "B": rows("B", n, 1)}

    with running(path) as supervisor:
        wait_until(lambda: all(count(bootstraps[c], topic) == n for c, topics in expected.items()
                               for topic in topics), 120, "every remote topic's records")
        time.sleep(3)  # three refreshes: a wrongly matched topic would be created meanwhile
        assert all(f.failure is None for f in supervisor.flows.values())
    assert_topology(bootstraps, expected, written, unique)
    assert f"B.A.{t}" not in topics_of_test(bootstraps["C"], unique)


def test_a_ring_forwards_remote_topics_but_never_back_to_their_origin(clusters, more_clusters, running, tmp_path,
                                                                      unique):
    bootstraps = {"A": clusters.source, "B": clusters.target, "C": more_clusters[0]}
    t, w, n = f"t-{unique}", f"w-{unique}", 20
    create(bootstraps["A"], t, 2)
    create(bootstraps["C"], w, 1)
    produce(bootstraps["A"], t, records("A", 0, n, 2))
    produce(bootstraps["C"], w, records("C", 0, n, 1))
    regex = f".*{unique}.*"  # now `A.t` on B matches B->C
    flows = {"A->B": regex, "B->C": regex, "C->A": regex, "B->A": regex}
    path = properties(tmp_path / "ring.properties", bootstraps, flows, FAST)
    expected = expected_topology([(*f.split("->"), regex) for f in flows], {"A": [t], "C": [w]})
    assert expected == {"A": {t: "A", f"C.{w}": "C"},
                        "B": {f"A.{t}": "A", f"A.C.{w}": "C"},
                        "C": {w: "C", f"B.A.{t}": "A"}}  # no C.B.A.t / B.A.t on A, no B.A.C.w on C
    written = {"A": rows("A", n, 2), "C": rows("C", n, 1)}

    with running(path) as supervisor:
        wait_until(lambda: all(count(bootstraps[c], topic) == n for c, topics in expected.items()
                               for topic in topics), 120, "every remote topic's records")
        time.sleep(3)
        assert all(f.failure is None for f in supervisor.flows.values())
    assert_topology(bootstraps, expected, written, unique)


def heartbeats_in(bootstrap: str, topic: str) -> set[tuple[str, str]]:
    if topic not in admin(bootstrap).topic_partitions():
        return set()
    beats = (decode_heartbeat(r.key, r.value) for r in read(bootstrap, topic))
    return {(h.source_alias, h.target_alias) for h in beats}


@pytest.mark.parametrize("replicate_heartbeats", [True, False])
def test_heartbeats_are_emitted_on_every_target_and_replicated_despite_the_topic_filter(
        clusters, more_clusters, running, tmp_path, unique, replicate_heartbeats):
    # Aliases of their own: `heartbeats` is one topic per cluster, shared with the session's other tests.
    a, b, c = f"A-{unique}", f"B-{unique}", f"C-{unique}"
    bootstraps = {a: clusters.source, b: clusters.target, c: more_clusters[0]}
    t, u, n = f"t-{unique}", f"u-{unique}", 10
    create(bootstraps[a], t, 1)
    create(bootstraps[b], u, 1)
    produce(bootstraps[a], t, records("A", 0, n, 1))
    produce(bootstraps[b], u, records("B", 0, n, 1))
    extra = ("refresh.topics.interval.seconds = 1\nsync.topic.configs.enabled = false\n"
             "emit.heartbeats.enabled = true\nemit.heartbeats.interval.seconds = 1\n"
             f"heartbeats.replication.enabled = {str(replicate_heartbeats).lower()}\n")
    path = properties(tmp_path / "hb.properties", bootstraps, {f"{a}->{b}": t, f"{a}->{c}": t, f"{b}->{c}": u}, extra)
    # B's `heartbeats` (written by A->B) matches no topic filter; MM2 still replicates it to C as `B.heartbeats`.
    remote_heartbeats = f"{b}.heartbeats"

    with running(path) as supervisor:
        wait_until(lambda: heartbeats_in(bootstraps[b], "heartbeats") >= {(a, b)}, 120, f"{a}->{b} heartbeats on B")
        wait_until(lambda: heartbeats_in(bootstraps[c], "heartbeats") >= {(a, c), (b, c)}, 120, "heartbeats on C")
        if replicate_heartbeats:
            wait_until(lambda: (a, b) in heartbeats_in(bootstraps[c], remote_heartbeats), 120,
                       f"{remote_heartbeats} on C")
        wait_until(lambda: all(count(bootstraps[x], topic) == n for x, topic in
                               ((b, f"{a}.{t}"), (c, f"{a}.{t}"), (c, f"{b}.{u}"))), 120, "the data records")
        time.sleep(3)
        assert all(f.failure is None for f in supervisor.flows.values())

    on_c = admin(bootstraps[c]).topic_partitions()
    assert (remote_heartbeats in on_c) == replicate_heartbeats
    if replicate_heartbeats:  # exactly B's heartbeats, in whatever state B's topic had when they were read
        assert heartbeats_in(bootstraps[c], remote_heartbeats) <= heartbeats_in(bootstraps[b], "heartbeats")
    # Other tests leave heartbeats topics on the shared clusters (A's `heartbeats`, `backup.heartbeats`, ...);
    # with replication on, every flow copies them too. So heartbeats copies are checked by rule, not by name:
    # each one on a target came from one of that target's flows' sources, and none exist with replication off.
    def copies(target: str) -> set[str]:
        return {x for x in topics_of_test(bootstraps[target], unique) if x.endswith(".heartbeats")}

    for target, sources in ((b, (a,)), (c, (a, b))):
        found = copies(target)
        assert all(x.split(".", 1)[0] in sources for x in found), (target, found)
        if not replicate_heartbeats:
            assert not found, (target, found)
        elif target == c:
            assert remote_heartbeats in found, found
    # MM2 keeps each flow's offset syncs on its source cluster, named after the flow's target.
    syncs = {x: f"mm2-offset-syncs.{x}.internal" for x in (b, c)}
    assert topics_of_test(bootstraps[a], unique) == {t, syncs[b], syncs[c]}
    # ... and its checkpoints on its target, named after its source; MM2's internal topics are never copied.
    assert topics_of_test(bootstraps[b], unique) - copies(b) == {u, f"{a}.{t}", syncs[c], f"{a}.checkpoints.internal"}
    assert topics_of_test(bootstraps[c], unique) - copies(c) == {f"{a}.{t}", f"{b}.{u}", f"{a}.checkpoints.internal",
                                                                 f"{b}.checkpoints.internal"}
    assert read_rows(bootstraps[c], f"{a}.{t}") == rows("A", n, 1) == read_rows(bootstraps[b], f"{a}.{t}")
    assert read_rows(bootstraps[c], f"{b}.{u}") == rows("B", n, 1)


# -- 3. the Apache docs' six clusters in three data centres, one process each -----------------------------
def example_flows(path: Path) -> list[tuple[str, str]]:
    """The enabled `X->Y` flows of a properties file, in file order."""
    found = re.findall(r"^\s*([\w.-]+)->([\w.-]+)\.enabled\s*=\s*true\s*$", path.read_text(), re.MULTILINE)
    return [(s, t) for s, t in found]


def stderr_tails(procs: Mapping[str, subprocess.Popen], logs: Mapping[str, Path]) -> str:
    out = []
    for dc, proc in procs.items():
        text = logs[dc].read_text(errors="replace") if logs[dc].exists() else ""
        out.append(f"--- {dc} (exit {proc.poll()}) ---\n{text[-3000:]}")
    return "\n".join(out)


@pytest.mark.timeout(600)  # three Spark JVMs and six brokers on a small machine: about 4 minutes
def test_six_clusters_in_three_data_centres_each_run_by_its_own_process(clusters, more_clusters, tmp_path, unique):
    started = time.monotonic()
    aliases = ["west-1", "west-2", "east-1", "east-2", "north-1", "north-2"]
    bootstraps = dict(zip(aliases, [clusters.source, clusters.target, *more_clusters[:4]], strict=True))
    data_centres = {dc: (f"{dc}-1", f"{dc}-2") for dc in ("west", "east", "north")}
    flows = example_flows(XDCR_EXAMPLE)
    assert len(flows) == 12 and {(s, t) for s, t in flows} >= {("west-1", "east-1"), ("north-2", "north-1")}

    regex = f".*{unique}.*"  # the example replicates every topic; only this test's here
    topic, n, partitions = f"t-{unique}", 20, 2
    expected = expected_topology([(s, t, regex) for s, t in flows], {alias: [topic] for alias in aliases})
    # e.g. west-1's topic reaches north-2 three hops away, as north-1.east-1.west-1.t, and never returns.
    assert expected["north-2"][f"north-1.east-1.west-1.{topic}"] == "west-1"
    for alias, ts in expected.items():  # no topic ever passed through a cluster twice
        assert all(len({alias, *t.split(".")[:-1]}) == len(t.split(".")) for t in ts), alias
    print(f"\nexpected: {sum(len(ts) for ts in expected.values())} topics on 6 clusters, "
          f"{sum(len(ts) - 1 for ts in expected.values())} of them remote")

    path = tmp_path / "xdcr.properties"
    lines = [f"clusters = {', '.join(aliases)}", *(f"{a}.bootstrap.servers = {b}" for a, b in bootstraps.items()),
             *(f"{s}->{t}.enabled = true" for s, t in flows), f"topics = {regex}"]
    path.write_text("\n".join(lines) + "\n" + SINGLE_BROKER + FAST + "tasks.max = 1\n")  # MM2's default

    half = n // 2
    for alias, bootstrap in bootstraps.items():
        create(bootstrap, topic, partitions)
        produce(bootstrap, topic, records(alias, 0, half, partitions))
    written = {alias: rows(alias, n, partitions) for alias in aliases}

    procs: dict[str, subprocess.Popen] = {}
    logs = {dc: tmp_path / f"{dc}.log" for dc in data_centres}
    try:
        for dc, members in data_centres.items():
            with logs[dc].open("wb") as log:
                procs[dc] = subprocess.Popen(
                    [sys.executable, "-m", "sparkmirror", "run", str(path), "--clusters", *members,
                     "--state-dir", str(tmp_path / f"state-{dc}")],
                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=dict(os.environ))

        def present(hops: int | None = None, want_records: bool = False) -> bool:
            """Every expected topic (only those `hops` away from their origin, if given) exists / is complete."""
            for dc, proc in procs.items():
                if proc.poll() is not None:
                    raise AssertionError(f"the {dc} process exited early ({proc.returncode})")
            for alias, topics in expected.items():
                existing = admin(bootstraps[alias]).topic_partitions()
                for t in topics:
                    if hops is not None and t.count(".") != hops:
                        continue
                    if t not in existing or (want_records and count(bootstraps[alias], t) < n):
                        return False
            return True

        wait_until(lambda: present(hops=1), 180, "the first hop's remote topics", poll_s=1)
        for alias, bootstrap in bootstraps.items():  # the second half travels through running flows
            produce(bootstrap, topic, records(alias, half, n, partitions))
        wait_until(lambda: present(), 180, "every expected topic to exist", poll_s=1)
        created_s = time.monotonic() - started
        wait_until(lambda: present(want_records=True), 180, "every expected topic to have all its records",
                   poll_s=1)
        arrived_s = time.monotonic() - started
        time.sleep(5)  # five refreshes: a topic that should not exist would be created meanwhile

        for proc in procs.values():
            os.killpg(proc.pid, signal.SIGTERM)
        codes = {dc: proc.wait(timeout=90) for dc, proc in procs.items()}
        assert codes == {dc: 0 for dc in procs}, "SIGTERM must stop every process cleanly"
        assert_topology(bootstraps, expected, written, unique)
        print(f"every topic created after {created_s:.0f} s, every record there after {arrived_s:.0f} s, "
              f"test took {time.monotonic() - started:.0f} s")
    except BaseException:
        print(stderr_tails(procs, logs))
        raise
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
