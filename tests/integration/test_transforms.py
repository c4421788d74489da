"""MM2's transforms and predicates on the record path, against real MM2 4.3.1 running the same chain: from the
same source topics, sparkmirror (source alias S) and MM2 (source alias A) write `S.<topic>` and `A.<topic>` on the
target, and the two copies must hold the same records, record for record (key, value, headers in order,
timestamp, partition). Then offset translation over records a transform dropped."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from benchmarks.mm2_offsets import CommittedSourceOffsets

from sparkmirror.client import read_checkpoints
from sparkmirror.model import KafkaRecord
from sparkmirror.runtime.state import POSITIONS_FILE, read_positions
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER
from sparkmirror.testing.records import produce, read_all
from sparkmirror.verification import verify

from .conftest import ONLY_OWN_TOPICS, TRIGGER_MODES, commit, count_records, wait_until
from .mm2_interop import _exactly, java_translate, plugin_jar, running_mm2

PLUGIN_SOURCE = Path(__file__).parent / "plugins" / "UpperCaseValue.java"
COPY_TIMEOUT_S = 120.0
CHECKPOINT_TIMEOUT_S = 120.0

# The compliance team's file of issue 32: drop the `ssn` header everywhere, and every record of `*-test` topics.
COMPLIANCE_CHAIN = """\
{flow}.transforms = dropPii, noTest
{flow}.transforms.dropPii.type = org.apache.kafka.connect.transforms.DropHeaders
{flow}.transforms.dropPii.headers = ssn
{flow}.transforms.noTest.type = org.apache.kafka.connect.transforms.Filter
{flow}.transforms.noTest.predicate = isTest
{flow}.predicates = isTest
{flow}.predicates.isTest.type = org.apache.kafka.connect.transforms.predicates.TopicNameMatches
{flow}.predicates.isTest.pattern = .*-test
"""


def sparkmirror_properties(source: str, target: str, topics: Sequence[str], extra: str) -> str:
    """S->B for the same source topics MM2 reads as A: its copies are `S.<topic>` beside MM2's `A.<topic>`."""
    return (f"clusters = S, B\nS.bootstrap.servers = {source}\nB.bootstrap.servers = {target}\n"
            f"S->B.enabled = true\nS->B.topics = {_exactly(topics)}\nemit.heartbeats.enabled = false\n"
            f"sync.topic.acls.enabled = false\n{SINGLE_BROKER}{ONLY_OWN_TOPICS}{extra}")


def copy_with_mm2(clusters, topics: Sequence[str], last_offsets: dict[tuple[str, int], int], chain: str,
                  classpath: tuple[Path, ...] = ()) -> None:
    """Run real MM2 A->B with `chain` until it has committed the source positions `last_offsets` (the worker's
    offsets are flushed every second, see mm2_properties; MM2 commits none for a partition whose records were all
    dropped, so only partitions with a copied last record can be waited for)."""
    wanted = {(f"A.{t}", p): last + 1 for (t, p), last in last_offsets.items()}
    positions = CommittedSourceOffsets(clusters.target, "A", {f"A.{t}": 1 for t in topics})
    try:
        with running_mm2(clusters.source, clusters.target, list(topics), extra=chain, classpath=classpath):
            wait_until(lambda: positions() >= 0 and positions.positions() == wanted, COPY_TIMEOUT_S,
                       f"MM2 to process source records up to {last_offsets}")
    finally:
        positions.close()


def same_records(target: str, topic: str, partitions: int) -> tuple[dict, dict]:
    """MM2's copy and sparkmirror's, per partition, as (key, value, headers, timestamp) in order."""
    def shape(records: dict[int, list[KafkaRecord]]) -> dict[int, list[tuple]]:
        return {p: [(r.key, r.value, r.headers, r.timestamp) for r in rs] for p, rs in records.items()}
    return (shape(read_all(target, f"A.{topic}", partitions)), shape(read_all(target, f"S.{topic}", partitions)))


def test_the_compliance_file_gives_the_records_mm2_gives(clusters, create_topic, run_caught_up, tmp_path, unique):
    orders, tests = f"orders-{unique}", f"pii-{unique}-test"
    create_topic("A", orders, 2)
    create_topic("A", tests, 1)
    now = int(time.time() * 1000)
    data = [KafkaRecord(i % 2, -1, f"k{i}".encode(), None if i % 97 == 0 else f"order-{i}".encode(),
                        (("trace", f"t{i}".encode()), ("ssn", b"123-45-6789"), ("ssn", b"again"), ("n", None)),
                        1, now + i) for i in range(1000)]
    produce(clusters.source, orders, data)
    produce(clusters.source, tests, [KafkaRecord(0, -1, b"k", f"test-{i}".encode(), (("ssn", b"1"),), 1, now)
                                     for i in range(200)])
    copy_with_mm2(clusters, [orders, tests], {(orders, 0): 499, (orders, 1): 499},
                  COMPLIANCE_CHAIN.format(flow="A->B"))
    path = tmp_path / "sparkmirror.properties"
    path.write_text(sparkmirror_properties(clusters.source, clusters.target, [orders, tests],
                                           COMPLIANCE_CHAIN.format(flow="S->B")))
    supervisor = run_caught_up(path, tmp_path / "state")

    mm2, ours = same_records(clusters.target, orders, 2)
    assert sum(len(v) for v in ours.values()) == 1000
    assert ours == mm2
    assert all(name != "ssn" for rs in ours.values() for _, _, headers, _ in rs for name, _ in headers)
    assert ours[0][0][2] == (("trace", b"t0"), ("n", None))
    assert count_records(clusters.target, f"S.{tests}") == 0
    # The dropped records moved the partition's position and were counted as dropped.
    assert supervisor.status().flow("S->B").progress.partitions[(tests, 0)].dropped == 200
    positions = read_positions(tmp_path / "state" / "flows" / "S-to-B" / POSITIONS_FILE)
    assert positions is not None and positions[tests].next_offsets == {0: 200}


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory) -> Path:
    """plugin.path with a jar holding the test's own transform (UpperCaseValue.java), compiled here."""
    root = tmp_path_factory.mktemp("plugins") / "path"
    plugin_jar([PLUGIN_SOURCE], root / "upper-case", "upper-case-value.jar")
    return root


CHAIN = """\
plugin.path = {plugins}
{flow}.errors.tolerance = all
{flow}.transforms = noTombstones, upper, mark
{flow}.transforms.noTombstones.type = Filter
{flow}.transforms.noTombstones.predicate = tombstone
{flow}.transforms.upper.type = com.example.shaping.UpperCaseValue
{flow}.transforms.upper.suffix = !
{flow}.transforms.upper.predicate = keep
{flow}.transforms.upper.negate = true
{flow}.transforms.mark.type = org.apache.kafka.connect.transforms.InsertHeader
{flow}.transforms.mark.header = mirrored
{flow}.transforms.mark.value.literal = yes
{flow}.transforms.mark.predicate = marked
{flow}.predicates = tombstone, keep, marked
{flow}.predicates.tombstone.type = org.apache.kafka.connect.transforms.predicates.RecordIsTombstone
{flow}.predicates.keep.type = org.apache.kafka.connect.transforms.predicates.HasHeaderKey
{flow}.predicates.keep.name = keep
{flow}.predicates.marked.type = HasHeaderKey
{flow}.predicates.marked.name = mark
"""


def test_a_chain_with_a_users_own_transform_gives_the_records_mm2_gives(clusters, create_topic, run_caught_up,
                                                                         spark, tmp_path, plugin_dir, unique):
    """Tombstones dropped; values upper-cased by the jar's class unless the record has a `keep` header (a negated
    predicate); InsertHeader on records with a `mark` header, whose string header MM2's ByteArrayConverter refuses,
    so with errors.tolerance = all both skip exactly those records."""
    topic = f"chain-{unique}"
    create_topic("A", topic, 2)
    now = int(time.time() * 1000)

    def headers(i: int) -> tuple:
        return ((("keep", b"1"),) if i % 3 == 0 else ()) + ((("mark", b"1"),) if i % 10 == 7 else ())

    data = [KafkaRecord(i % 2, -1, f"k{i}".encode(), None if i % 11 == 0 else f"value-{i}".encode(), headers(i), 1,
                        now + i) for i in range(300)]
    produce(clusters.source, topic, data)
    # MM2 4.3.1's dedicated mode registers the plugin.path class but refuses it when it validates the connector
    # ("Class ... could not be found"): its users put such jars on its classpath, as here.
    copy_with_mm2(clusters, [topic], {(topic, 0): 149, (topic, 1): 149},
                  CHAIN.format(flow="A->B", plugins=plugin_dir), classpath=tuple(plugin_dir.rglob("*.jar")))
    path = tmp_path / "sparkmirror.properties"
    path.write_text(sparkmirror_properties(clusters.source, clusters.target, [topic],
                                           CHAIN.format(flow="S->B", plugins=plugin_dir)))
    supervisor = run_caught_up(path, tmp_path / "state")

    mm2, ours = same_records(clusters.target, topic, 2)
    assert ours == mm2
    copied = [r for rs in ours.values() for r in rs]
    tombstones = sum(1 for i in range(300) if i % 11 == 0)
    marked = sum(1 for i in range(300) if i % 10 == 7 and i % 11 != 0)
    assert len(copied) == 300 - tombstones - marked
    assert {v for _, v, h, _ in copied if not h} >= {b"VALUE-1!", b"VALUE-2!"}
    assert b"value-3" in {v for _, v, _, _ in copied}
    partitions = supervisor.status().flow("S->B").progress.partitions
    assert sum(p.dropped for p in partitions.values()) == tombstones
    assert sum(p.failed for p in partitions.values()) == marked

    # `verify` runs the same chain, the user's class from the plugin path included: the copy is whole
    report = verify(path, spark=spark)
    assert report.whole, report.to_json()
    assert sum(p.matched for p in report.flows[0].partitions) == len(copied)


@pytest.fixture(params=TRIGGER_MODES)
def trigger_mode(request) -> str:
    """The dropped-stretch test runs in both record-path modes (the transform step is the writer's in both)."""
    return request.param


def test_a_group_committed_inside_a_dropped_stretch_fails_over_with_nothing_read_twice_or_missed(
        clusters, create_topic, mm2_properties, running, unique):
    """Source offsets 10-19 are dropped by a filter: a group at 15 resumes on the target at the copy of offset 20,
    in sparkmirror's checkpoint and in MM2's RemoteClusterUtils.translateOffsets alike."""
    topic, group = f"gap-{unique}", f"gap-{unique}"
    create_topic("A", topic, 1)
    now = int(time.time() * 1000)
    produce(clusters.source, topic, [KafkaRecord(0, -1, None, f"v{i}".encode(),
                                                 (("drop", b"1"),) if 10 <= i < 20 else (), 1, now)
                                     for i in range(30)])
    config = mm2_properties(topic, f"A->B.groups = {group}\nemit.checkpoints.interval.seconds = 1\n"
                                   "A->B.transforms = gap\nA->B.transforms.gap.type = Filter\n"
                                   "A->B.transforms.gap.predicate = marked\nA->B.predicates = marked\n"
                                   "A->B.predicates.marked.type = HasHeaderKey\n"
                                   "A->B.predicates.marked.name = drop\n")
    remote = f"A.{topic}"
    with running(config):
        wait_until(lambda: count_records(clusters.target, remote) == 20, COPY_TIMEOUT_S, "20 records copied")
        commit(clusters.source, group, {(topic, 0): 15})

        def checkpointed() -> int | None:
            cp = read_checkpoints(config, "A", "B", group).get((group, remote, 0))
            return cp.downstream_offset if cp is not None and cp.upstream_offset == 15 else None

        downstream = wait_until(checkpointed, CHECKPOINT_TIMEOUT_S, f"a checkpoint of {group} at 15")
    assert downstream == 10
    assert java_translate(clusters.target, "A", group) == {(remote, 0): 10}
    values = [r.value for r in read_all(clusters.target, remote, 1)[0]]
    assert values[10] == b"v20"  # the first record the group had not consumed: nothing read twice, nothing missed
    assert values[:10] == [f"v{i}".encode() for i in range(10)]
