from sparkmirror.offsets.syncs import sync_points


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
