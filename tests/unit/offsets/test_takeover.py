from dataclasses import replace

from sparkmirror.model import KafkaRecord
from sparkmirror.offsets.syncs import OffsetSync
from sparkmirror.offsets.takeover import (
    FROM_COMMIT,
    FROM_RESET,
    FROM_SYNC,
    FROM_TAIL,
    match_tail,
    plan_partition,
)


def plan(committed, sync, source=(0, 1000), remote=(0, 600), latest=False):
    return plan_partition("t", 0, "A.t", committed, None if sync is None else OffsetSync("t", 0, *sync), source,
                          remote, latest)


def test_a_clean_stop_committed_and_synced_its_last_record():
    p = plan(600, (599, 599))
    assert (p.start, p.basis, p.duplicates) == (600, FROM_COMMIT, 0)


def test_a_sync_newer_than_the_commit_moves_the_start_and_bounds_the_duplicates():
    p = plan(400, (549, 549))  # killed: committed at 400, synced up to 549, 600 records on the target
    assert (p.start, p.basis, p.duplicates) == (550, FROM_SYNC, 50)


def test_an_older_sync_leaves_the_commit():
    p = plan(500, (399, 399))
    assert (p.start, p.basis) == (500, FROM_COMMIT)
    assert p.duplicates == 600 - 399 - 1  # all the target holds after the sync may be at or after 500


def test_a_sync_outside_the_remote_partition_is_not_used():
    p = plan(500, (699, 699), remote=(0, 600))  # the remote topic was re-created since
    assert (p.start, p.basis, p.duplicates) == (500, FROM_COMMIT, 500)  # at most what the source has left


def test_without_commit_or_sync_the_reset_policy_decides():
    assert (plan(None, None, source=(10, 1000)).start, plan(None, None).basis) == (10, FROM_RESET)
    assert plan(None, None, latest=True).start == 1000
    assert plan(None, None, remote=(0, 0)).duplicates == 0


def record(offset, value, ts=1):
    return KafkaRecord(0, offset, b"k", value, (), 0, ts)


def test_a_remote_tail_that_is_the_sources_next_records_leaves_no_duplicates():
    p = plan(None, (99, 99), source=(0, 110), remote=(0, 103))  # 3 records after the sync
    source = [record(100, b"a"), record(102, b"b"), record(103, b"c"), record(104, b"d")]  # 101: a marker
    remote = [record(100, b"a"), record(101, b"b"), record(102, b"c")]
    narrowed = match_tail(p, source, remote)
    assert (narrowed.start, narrowed.duplicates, narrowed.basis) == (104, 0, FROM_TAIL)


def test_a_tail_that_differs_keeps_the_bound():
    p = plan(None, (99, 99), source=(0, 110), remote=(0, 103))
    source = [record(100, b"a"), record(101, b"b"), record(102, b"c")]
    for remote in ([record(100, b"a"), record(101, b"X"), record(102, b"c")],  # a transform changed one
                   [record(100, b"a"), record(101, b"b", ts=2), record(102, b"c")]):
        assert match_tail(p, source, remote) == p
    assert match_tail(p, source[:2], source) == p  # fewer source records than remote ones
    assert p.duplicates == 3


def test_transaction_markers_on_the_target_are_not_copies():
    """Exactly-once MM2: a commit marker follows each transaction, so the remote end is past the last record."""
    p = plan(600, (599, 610), remote=(0, 612))  # the last record at 610, its marker at 611
    assert (p.start, p.basis, p.duplicates) == (600, FROM_COMMIT, 1)  # the marker may be a record: the bound
    assert match_tail(p, [], []) == replace(p, duplicates=0)  # read to the end: no record after the sync
    p = plan(None, (99, 99), source=(0, 110), remote=(0, 105))  # 100, 102: records; 101, 103, 104: markers
    narrowed = match_tail(p, [record(100, b"a"), record(101, b"b")], [record(100, b"a"), record(102, b"b")])
    assert (narrowed.start, narrowed.duplicates, narrowed.basis) == (102, 0, FROM_TAIL)


def test_a_tail_past_an_older_sync_is_compared_from_the_sync():
    p = plan(500, (399, 399), source=(0, 1000), remote=(0, 420))  # 20 records after the sync; commit at 500
    source = [record(o, b"v%d" % o) for o in range(400, 420)]
    remote = [record(o, b"v%d" % (o,)) for o in range(400, 420)]
    assert p.duplicates == 20 and match_tail(p, source, remote) == replace(p, duplicates=0)  # start stays 500
    p = plan(410, (399, 399), source=(0, 1000), remote=(0, 420))
    assert (match_tail(p, source, remote).start, match_tail(p, source, remote).basis) == (420, FROM_TAIL)


def test_no_tail_is_compared_past_a_sync_the_remote_partition_does_not_hold():
    p = plan(500, (699, 699), remote=(0, 600))  # the remote topic was re-created since
    assert p.tail is None and match_tail(p, [], []) == p
