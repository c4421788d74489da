"""How the benchmark reads MM2's committed source offsets (Connect's offsets topic, JSON) and tells a
transactional copy from a plain one; no broker."""

from __future__ import annotations

import json

from benchmarks.mm2_offsets import (
    SourcePartition,
    offsets_topic,
    parse_offset_record,
    untransactional_partitions,
)


def key(connector: str, topic: str, partition: int, cluster: str = "mm2eossrc") -> bytes:
    return json.dumps([connector, {"cluster": cluster, "partition": partition, "topic": topic}]).encode()


def test_offsets_topic_is_the_dedicated_mode_default():
    assert offsets_topic("mm2eossrc") == "mm2-offsets.mm2eossrc.internal"


def test_a_source_offset_is_the_last_copied_record_so_the_next_is_one_more():
    parsed = parse_offset_record(key("MirrorSourceConnector", "bench", 3), b'{"offset":41}')
    assert parsed == (SourcePartition("mm2eossrc", "bench", 3), 42)


def test_a_tombstone_forgets_the_partition():
    assert parse_offset_record(key("MirrorSourceConnector", "bench", 0), None) == (
        SourcePartition("mm2eossrc", "bench", 0), None)


def test_other_connectors_and_keyless_records_are_skipped():
    assert parse_offset_record(key("MirrorCheckpointConnector", "bench", 0), b'{"offset":1}') is None
    assert parse_offset_record(None, b'{"offset":1}') is None


def test_a_partition_without_a_marker_past_its_records_was_written_without_transactions():
    positions = {("mm2eossrc.bench", 0): 1000, ("mm2eossrc.bench", 1): 1000, ("mm2eossrc.bench", 2): 0}
    ends = {("mm2eossrc.bench", 0): 1002, ("mm2eossrc.bench", 1): 1000, ("mm2eossrc.bench", 2): 0}
    assert untransactional_partitions(positions, ends) == [("mm2eossrc.bench", 1)]
