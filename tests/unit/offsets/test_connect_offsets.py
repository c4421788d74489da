from sparkmirror.offsets.connect_offsets import (
    SOURCE_CONNECTOR,
    SourceOffset,
    decode_source_offset,
    dedicated_offsets_topic,
    encode_source_offset,
    hand_back_entries,
    next_offsets,
)

# As MM2 4.x writes them (a dump of mm2-offsets.primary.internal): key order cluster, partition, topic
MM2_KEY = b'["MirrorSourceConnector",{"cluster":"primary","partition":0,"topic":"orders"}]'
MM2_VALUE = b'{"offset":41}'


def test_an_entry_is_written_byte_for_byte_as_connect_writes_it():
    entry = SourceOffset(SOURCE_CONNECTOR, "primary", "orders", 0, 41)
    assert encode_source_offset(entry) == (MM2_KEY, MM2_VALUE)
    assert decode_source_offset(MM2_KEY, MM2_VALUE) == entry
    assert entry.next_offset == 42  # MM2 seeks to the stored offset + 1


def test_a_tombstone_and_other_connectors_entries():
    assert decode_source_offset(MM2_KEY, None) == SourceOffset(SOURCE_CONNECTOR, "primary", "orders", 0, None)
    checkpoint = b'["MirrorCheckpointConnector",{"partition":0,"topic":"orders","group":"g"}]'
    assert decode_source_offset(checkpoint, b'{"offset":0}') is None
    assert decode_source_offset(b"not json", b"{}") is None
    assert decode_source_offset(MM2_KEY, b'{"offset":"7"}') is None
    assert decode_source_offset(None, MM2_VALUE) is None


def test_the_latest_entry_of_a_partition_wins_and_a_tombstone_removes_it():
    entries = [SourceOffset(SOURCE_CONNECTOR, "A", "t", 0, 9), SourceOffset(SOURCE_CONNECTOR, "A", "t", 1, 4),
               SourceOffset(SOURCE_CONNECTOR, "A", "t", 0, 19), SourceOffset(SOURCE_CONNECTOR, "A", "t", 1, None),
               SourceOffset(SOURCE_CONNECTOR, "B", "t", 2, 5), SourceOffset("other", "A", "t", 3, 5)]
    assert next_offsets(entries, SOURCE_CONNECTOR, "A") == {("t", 0): 20}


def test_hand_back_entries_make_mm2_continue_at_the_positions():
    entries = hand_back_entries({("t", 0): 20, ("t", 1): 0}, SOURCE_CONNECTOR, "A")
    assert next_offsets(entries, SOURCE_CONNECTOR, "A") == {("t", 0): 20}
    assert entries[1].last_copied is None  # nothing copied: a tombstone, MM2 starts at its auto.offset.reset


def test_dedicated_mode_keeps_the_offsets_on_the_target_named_after_the_source():
    assert dedicated_offsets_topic("primary") == "mm2-offsets.primary.internal"
