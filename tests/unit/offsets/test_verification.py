"""verify's ranges and verdicts, from the join's findings (pipeline/verification.py makes them on Spark)."""

from sparkmirror.offsets.flow_report import WrittenSync
from sparkmirror.offsets.syncs import SYNC_END, OffsetSync, SyncLink
from sparkmirror.offsets.verification import (
    CHANGED,
    DUPLICATE,
    EXTRA,
    MISSING,
    OUT_OF_ORDER,
    Comparison,
    Unmatched,
    judge,
    plan_range,
)


def end_sync(up: int, down: int, next_upstream: int) -> WrittenSync:
    return WrittenSync(OffsetSync("orders", 0, up, down), SyncLink(SYNC_END, next_upstream), 0)


def test_sparkmirrors_last_sync_bounds_both_sides_exactly():
    r = plan_range("orders", 0, "A.orders", (0, 120), (0, 105), [end_sync(99, 99, 100)])
    assert (r.source_from, r.source_to, r.target_from, r.target_to, r.not_copied_yet) == (0, 100, 0, 100, 20)
    assert r.exact and not r.tail_is_lag
    to_end = plan_range("orders", 0, "A.orders", (0, 120), (0, 105), [end_sync(99, 99, 100)], to_end=True)
    assert (to_end.source_to, to_end.not_copied_yet) == (120, 0)
    later = plan_range("orders", 0, "A.orders", (10, 120), (0, 105), [end_sync(99, 99, 100)], from_offset=50)
    assert (later.source_from, later.target_from) == (50, 0)  # no sync below 50: the target from its start


def test_from_a_later_offset_the_target_starts_after_the_last_sync_below_it():
    syncs = [end_sync(29, 19, 30), end_sync(59, 49, 60), end_sync(99, 89, 100)]
    r = plan_range("orders", 0, "A.orders", (0, 120), (0, 95), syncs, from_offset=70)
    assert (r.source_from, r.source_to, r.target_from, r.target_to) == (70, 100, 50, 90)
    # the target's copies of source records 60 to 69 come first: an unaligned head, not extra records
    c = Comparison(30, 40, 30, (), tuple(Unmatched(50 + i, i, (-1, -1)) for i in range(10)),
                   unmatched_target_count=10, last_matched=(29, 39))
    verdict = judge(r, c)
    assert verdict.whole and verdict.differences == ()
    assert verdict.notes == ("10 target record(s) before the first one matched could not be aligned: their source "
                             "records are before source offset 70, where the comparison starts",)


def test_mm2s_sparse_syncs_compare_up_to_the_ends_and_the_tail_is_lag():
    mm2 = plan_range("orders", 0, "A.orders", (0, 120), (0, 105),
                     [WrittenSync(OffsetSync("orders", 0, 40, 40), None, 0)])
    assert (mm2.source_to, mm2.target_to, mm2.exact, mm2.tail_is_lag) == (120, 105, False, True)


RANGE = plan_range("orders", 0, "A.orders", (0, 10), (0, 10), [end_sync(9, 9, 10)])


def kinds(verdict) -> list[tuple[str, int | None, int | None]]:
    return [(d.kind, d.source_offset, d.target_offset) for d in verdict.differences]


def test_a_whole_copy():
    verdict = judge(RANGE, Comparison(10, 10, 10, last_matched=(9, 9)))
    assert verdict.whole and verdict.differences == ()


def test_a_record_changed_on_the_way_is_one_difference_at_both_offsets():
    # source offset 4 and target offset 4 both unmatched, after the same matched pair (3, 3)
    c = Comparison(10, 10, 9, (Unmatched(4, 4, (3, 3)),), (Unmatched(4, 4, (3, 3)),), unmatched_source_count=1,
                   unmatched_target_count=1, last_matched=(9, 9))
    verdict = judge(RANGE, c)
    assert kinds(verdict) == [(CHANGED, 4, 4)] and verdict.counts[CHANGED] == 1 and not verdict.whole


def test_missing_extra_and_duplicate_records():
    c = Comparison(10, 10, 8,
                   (Unmatched(2, 2, (1, 1)),),  # source 2: nothing on the target in its place
                   (Unmatched(7, 6, (5, 6)), Unmatched(9, 9, (8, 8), copy_of=3)),
                   unmatched_source_count=1, unmatched_target_count=2, last_matched=(9, 8))
    verdict = judge(RANGE, c)
    assert kinds(verdict) == [(EXTRA, None, 7), (MISSING, 2, None), (DUPLICATE, 3, 9)]
    assert (verdict.counts[MISSING], verdict.counts[EXTRA], verdict.counts[DUPLICATE]) == (1, 1, 1)


def test_records_removed_from_the_targets_head_are_missing_and_said_so():
    r = plan_range("orders", 0, "A.orders", (0, 10), (3, 10), [end_sync(9, 9, 10)])
    c = Comparison(10, 7, 7, tuple(Unmatched(o, o, (-1, -1)) for o in range(3)), unmatched_source_count=3,
                   last_matched=(9, 6))
    verdict = judge(r, c)
    assert [d.source_offset for d in verdict.differences] == [0, 1, 2]
    assert all(d.kind == MISSING and "below the target's log start" in d.note for d in verdict.differences)


def test_a_pair_out_of_order_and_counts_beyond_the_examples():
    c = Comparison(10, 10, 10, out_of_order=((6, 5),), out_of_order_count=1, last_matched=(9, 9))
    assert kinds(judge(RANGE, c)) == [(OUT_OF_ORDER, 6, 5)]
    many = Comparison(10, 10, 5, (Unmatched(0, 0, (-1, -1)),), unmatched_source_count=5, last_matched=(9, 9))
    verdict = judge(RANGE, many)
    assert verdict.counts[MISSING] == 5 and len(verdict.differences) == 1
    assert "all are counted" in verdict.notes[0]


def test_after_mm2s_last_copied_record_the_source_is_not_copied_yet_unless_to_end():
    mm2 = plan_range("orders", 0, "A.orders", (0, 10), (0, 7), [])
    c = Comparison(10, 7, 7, tuple(Unmatched(o, o, (6, 6)) for o in (7, 8, 9)), unmatched_source_count=3,
                   last_matched=(6, 6))
    verdict = judge(mm2, c)
    assert verdict.whole and verdict.not_copied_yet == 3 and "not copied yet" in verdict.notes[0]
    to_end = plan_range("orders", 0, "A.orders", (0, 10), (0, 7), [], to_end=True)
    assert judge(to_end, c).counts[MISSING] == 3
