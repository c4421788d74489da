import pytest

from sparkmirror.model import PartitionSummary
from sparkmirror.offsets.codec import OffsetCodecError
from sparkmirror.offsets.syncs import (
    SYNC_END,
    SYNC_GAP,
    SYNC_LINK_HEADER,
    SYNC_RUN,
    OffsetSync,
    SyncLink,
    decode_offset_sync,
    decode_sync_link,
    encode_offset_sync,
    encode_sync_link,
    report_syncs,
    sync_points,
    sync_records,
)


def test_a_contiguous_stretch_needs_only_its_first_and_last_pair():
    assert sync_points([10, 11, 12, 13], [0, 1, 2, 3]) == ([10, 13], [0, 3], [True, False])
    assert sync_points([7], [3]) == ([7], [3], [False])
    assert sync_points([], []) == ([], [], [])


def test_both_records_around_every_gap_are_synced_so_each_offset_maps_exactly():
    # upstream gaps (a transaction marker at 12, a compacted range 15..19) and a foreign record downstream
    up = [10, 11, 13, 14, 20, 21, 22]
    down = [0, 1, 2, 3, 4, 6, 7]
    ups, downs, runs = sync_points(up, down)
    assert list(zip(ups, downs, strict=True)) == [(10, 0), (11, 1), (13, 2), (14, 3), (20, 4), (21, 6), (22, 7)]
    assert runs == [True, False, True, False, False, True, False]


def test_between_synced_pairs_offsets_advance_together():
    up = list(range(100, 150)) + list(range(160, 200))
    ups, downs, runs = sync_points(up, list(range(90)))
    assert list(zip(ups, downs, strict=True)) == [(100, 0), (149, 49), (160, 50), (199, 89)]
    assert runs == [True, False, True, False]


def test_an_equal_jump_on_both_sides_is_a_gap_not_a_run():
    # upstream skips a marker at 11 while downstream skips one at 1 (a transactional target): the offsets
    # advance by the same amount, yet no record lies between, so offset 11 must not map to 1.
    ups, downs, runs = sync_points([10, 12, 13], [0, 2, 3])
    assert list(zip(ups, downs, strict=True)) == [(10, 0), (12, 2), (13, 3)]
    assert runs == [False, True, False]


def _summaries() -> list[PartitionSummary]:
    return [PartitionSummary("orders", 0, 5, 0, 50, 31, (10, 11, 13, 30), (0, 1, 2, 3), (True, False, False)),
            PartitionSummary("pay", 3, 0, 0, 0, 7),  # nothing written: no sync
            PartitionSummary("pay", 4, 1, 0, 9, 8, (7,), (0,), (False,))]


def test_the_records_of_a_report_are_each_sync_with_its_link_to_the_next():
    """sync_records (one key per partition, packed values, constant links) against the one-by-one encoders."""
    expected = [(*encode_offset_sync(sync), [(SYNC_LINK_HEADER, encode_sync_link(link))])
                for s in _summaries() for sync, link in report_syncs(s)]
    assert sync_records(_summaries()) == expected
    assert [decode_sync_link(h[0][1]) for _, _, h in expected] == [
        SyncLink(SYNC_RUN), SyncLink(SYNC_GAP), SyncLink(SYNC_GAP), SyncLink(SYNC_END, 31), SyncLink(SYNC_END, 8)]
    assert decode_offset_sync(*expected[2][:2]) == OffsetSync("orders", 0, 13, 2)


def test_an_offset_out_of_int64_range_is_refused_naming_the_field():
    huge = PartitionSummary("orders", 0, 1, 0, 1, 2**63, (2**63,), (0,), (False,))
    with pytest.raises(OffsetCodecError, match="upstreamOffset"):
        sync_records([huge])
