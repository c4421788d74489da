"""`sparkmirror verify` on real copies (issue 34, item 1): a whole copy is whole; each kind of damage is found
with its exact offsets."""

from __future__ import annotations

import time

from confluent_kafka import TIMESTAMP_CREATE_TIME

from sparkmirror.model import KafkaRecord
from sparkmirror.offsets.verification import CHANGED, DUPLICATE, MISSING, OUT_OF_ORDER
from sparkmirror.testing.records import read_all
from sparkmirror.verification import verify

from .conftest import count_records, delete_records, produce, records, wait_until
from .mm2_interop import running_mm2

PARTITIONS = 3


def differences(report, flow: str = "A->B") -> set[tuple[str, int, int | None, int | None]]:
    [verdict] = [f for f in report.flows if f.flow == flow]
    return {(d.kind, p.partition, d.source_offset, d.target_offset) for p in verdict.partitions
            for d in p.differences}


def test_a_sparkmirror_copy_is_whole_and_each_damage_is_found_at_its_offsets(
        clusters, create_topic, mm2_properties, run_caught_up, spark, tmp_path, unique):
    topic = f"verify-{unique}"
    remote = f"A.{topic}"
    create_topic("A", topic, PARTITIONS)
    produce(clusters.source, topic, records("first", 300, PARTITIONS))
    path = mm2_properties(topic)
    run_caught_up(path, tmp_path / "state")

    report = verify(path, spark=spark)
    assert report.whole, report.to_json()
    [flow] = report.flows
    assert sum(p.source_records for p in flow.partitions) == sum(p.target_records for p in flow.partitions) == 300
    assert report.records == 600 and report.records_per_s > 0
    sampled = verify(path, spark=spark, sample=0.5)  # a record and its copy are drawn together: whole still
    assert sampled.whole and 60 < sum(p.matched for p in sampled.flows[0].partitions) < 240  # ~150, 10 sigma
    later = verify(path, spark=spark, from_offset=60)  # each partition's last 40 records, against their copies
    assert later.whole, later.to_json()
    assert sum(p.matched for p in later.flows[0].partitions) == 3 * 40

    # damage: the target's first 5 records of partition 0 deleted; a second copy of a source record written to
    # partition 1 by hand; then, with a mask changing one record on the way, 30 more records copied
    delete_records(clusters.target, remote, 0, 5)
    original = read_all(clusters.source, topic, PARTITIONS)[1][7]
    produce(clusters.target, remote, [KafkaRecord(1, -1, original.key, original.value, original.headers,
                                                  original.timestamp_type, original.timestamp)])
    produce(clusters.source, topic, records("second", 30, PARTITIONS))
    masked = tmp_path / "masked.properties"
    masked.write_text(path.read_text() + "sparkmirror.mask.value = CASE WHEN partition = 2 AND offset = 105 "
                                         "THEN CAST('tampered' AS BINARY) ELSE value END\n")
    run_caught_up(masked, tmp_path / "state")
    # a tail the flow never copied
    produce(clusters.source, topic, [r for r in records("tail", 6, PARTITIONS) if r.partition == 0])

    found = differences(verify(path, spark=spark))
    assert {(MISSING, 0, o, None) for o in range(5)} <= found  # below the target's log start
    assert (DUPLICATE, 1, 7, 100) in found  # the hand-written copy landed at offset 100, after 100 copied ones
    assert (CHANGED, 2, 105, 105) in found
    assert len(found) == 5 + 1 + 1, found  # the tail is the flow's lag here: not a difference
    [flow] = verify(path, spark=spark).flows
    assert [p.not_copied_yet for p in flow.partitions] == [2, 0, 0]

    # a sample finds only damage (a changed record may show as missing plus extra there)
    damaged = {(0, o) for o in range(5)} | {(1, 7), (1, 100), (2, 105)}
    assert all((p, s) in damaged or (p, t) in damaged
               for _, p, s, t in differences(verify(path, spark=spark, sample=0.5)))

    ended = differences(verify(path, spark=spark, to_end=True))
    assert {(MISSING, 0, o, None) for o in (110, 111)} <= ended  # with --to-end the tail is missing

    # the flow's own SQL rules are honoured: with the mask, record 105 is what the flow writes
    assert not any(kind == CHANGED for kind, *_ in differences(verify(masked, spark=spark)))


def test_a_hand_made_copy_out_of_order_is_found(clusters, create_topic, mm2_properties, spark, unique):
    """No flow ran: no offset syncs, so both partitions are compared to their ends (as for MM2's sparse ones)."""
    topic = f"verify-order-{unique}"
    create_topic("A", topic, 1)
    create_topic("B", f"A.{topic}", 1)
    sent = records("order", 10)
    produce(clusters.source, topic, sent)
    copy = [*sent[:3], sent[4], sent[3], *sent[5:]]  # offsets 3 and 4 swapped
    produce(clusters.target, f"A.{topic}", copy)
    report = verify(mm2_properties(topic), spark=spark)
    assert differences(report) == {(OUT_OF_ORDER, 0, 4, 3)}
    assert not report.whole


def test_a_copy_made_by_real_mm2_is_whole(clusters, create_topic, spark, tmp_path, unique):
    topic = f"verify-mm2-{unique}"
    create_topic("A", topic, PARTITIONS)
    produce(clusters.source, topic, records("mm2", 300, PARTITIONS))
    with running_mm2(clusters.source, clusters.target, [topic]) as mm2:
        config = tmp_path / "mm2.properties"
        config.write_text(mm2.properties)
        wait_until(lambda: count_records(clusters.target, f"A.{topic}") == 300, 120, "MM2's copy")
        report = verify(config, topics=[topic], spark=spark)  # beside the live MM2, as beside a live flow
    assert report.whole, report.to_json()
    [flow] = report.flows
    assert sum(p.matched for p in flow.partitions) == 300


# The compliance file of issue 32 with an identity policy: verify must compare what the flow writes (no `ssn`,
# no test records, the provenance header that identity names add), not the source's records as they are.
SHAPED = """\
replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy
A->B.transforms = dropPii, noTest
A->B.transforms.dropPii.type = org.apache.kafka.connect.transforms.DropHeaders
A->B.transforms.dropPii.headers = ssn
A->B.transforms.noTest.type = org.apache.kafka.connect.transforms.Filter
A->B.transforms.noTest.predicate = isTest
A->B.predicates = isTest
A->B.predicates.isTest.type = org.apache.kafka.connect.transforms.predicates.HasHeaderKey
A->B.predicates.isTest.name = test
"""


def test_a_copy_through_transforms_and_identity_names_is_compared_as_the_flow_writes_it(
        clusters, create_topic, mm2_properties, run_caught_up, spark, tmp_path, unique):
    topic = f"verify-shaped-{unique}"
    create_topic("A", topic, 2)
    now = int(time.time() * 1000)
    produce(clusters.source, topic, [
        KafkaRecord(i % 2, -1, f"k{i}".encode(), f"v{i}".encode(),
                    (("ssn", b"123-45-6789"), ("trace", f"t{i}".encode()), *((("test", b"1"),) if i % 10 == 0 else ())),
                    TIMESTAMP_CREATE_TIME, now + i) for i in range(200)])
    path = mm2_properties(topic, SHAPED)
    run_caught_up(path, tmp_path / "state")
    assert count_records(clusters.target, topic) == 180  # identity names: the copy has the source's name

    report = verify(path, spark=spark)
    assert report.whole, report.to_json()
    [flow] = report.flows
    assert sum(p.source_records for p in flow.partitions) == sum(p.matched for p in flow.partitions) == 180

    # damage is still found at its offsets: records 0 to 2 of the copy's partition 0 are the source's 1 to 3
    # (source record 0 of partition 0, i = 0, is a test record the flow dropped)
    delete_records(clusters.target, topic, 0, 3)
    assert differences(verify(path, spark=spark)) == {(MISSING, 0, o, None) for o in (1, 2, 3)}
