"""Translation from the syncs the writer reports (the rule of offsets.sync_points), checked against the
true mapping of simulated flows."""

import random

import pytest

from sparkmirror.model import PartitionSummary
from sparkmirror.offsets.syncs import SYNC_END, SYNC_GAP, SYNC_RUN, OffsetSync, SyncLink, report_syncs, sync_points
from sparkmirror.offsets.translation import PartitionSyncs, SyncIndex, SyncPoint


def simulate(rng, records=400, batches=12, marker_rate=0.15, foreign_rate=0.1):
    """A source partition with markers (offsets without records), replicated in micro-batches to a target
    that also receives foreign records. Returns ([(upstream, downstream)] of replicated records, syncs)."""
    upstream, up = [], 0
    while len(upstream) < records:
        while rng.random() < marker_rate:
            up += 1  # a transaction marker or a compacted-away record
        upstream.append(up)
        up += 1
    cuts = sorted(rng.sample(range(1, records), batches - 1))
    pairs, index, down = [], SyncIndex(), 0
    for lo, hi in zip([0, *cuts], [*cuts, records], strict=True):
        batch = upstream[lo:hi]
        downs = []
        for _ in batch:
            while rng.random() < foreign_rate:
                down += 1
            downs.append(down)
            down += 1
        pairs += list(zip(batch, downs, strict=True))
        ups, dns, runs = sync_points(batch, downs)
        summary = PartitionSummary("t", 0, len(batch), 0, 0, batch[-1] + 1, tuple(ups), tuple(dns),
                                   tuple(runs))
        index.extend(report_syncs(summary))
    return pairs, index.get("t", 0)


def true_downstream(pairs, committed):
    """The downstream position of the first replicated record at or after `committed`."""
    for up, down in pairs:
        if up >= committed:
            return down
    return pairs[-1][1] + 1


@pytest.mark.parametrize("seed", range(40))
def test_every_committed_offset_translates_to_the_first_unprocessed_record(seed):
    rng = random.Random(seed)  # noqa: S311 - a reproducible simulation
    pairs, syncs = simulate(rng)
    first = pairs[0][0]
    for committed in range(first, pairs[-1][0] + 2):
        t = syncs.downstream(committed)
        expected = true_downstream(pairs, committed)
        # a micro-batch boundary hides the markers in between; the answer then lies in the downstream gap
        # before the right record, with nothing of ours in between, or is exactly right
        assert t.offset is not None
        if t.exact:
            assert t.offset == expected, (committed, t)
        else:
            assert t.offset <= expected and t.offset > max((d for u, d in pairs if u < committed), default=-1)


@pytest.mark.parametrize("seed", range(40))
def test_every_downstream_offset_translates_back_to_the_first_unprocessed_source_record(seed):
    rng = random.Random(seed)  # noqa: S311 - a reproducible simulation
    pairs, syncs = simulate(rng)
    read_to = pairs[-1][0] + 1
    for committed in range(pairs[0][1], pairs[-1][1] + 2):
        t = syncs.upstream(committed)
        after = [u for u, d in pairs if d >= committed]
        expected = after[0] if after else read_to
        consumed = [u for u, d in pairs if d < committed]
        assert t.offset is not None
        if t.exact:
            assert t.offset == expected, (committed, t)
        else:  # never skips a record not yet processed
            assert t.offset <= expected and t.offset > max(consumed, default=-1)


def test_contiguous_batches_merge_into_one_run():
    syncs = PartitionSyncs()
    for start in range(0, 1000, 100):
        summary = PartitionSummary("t", 0, 100, 0, 0, start + 100, (start, start + 99),
                                   (start + 5, start + 104), (True, False))
        for sync, link in report_syncs(summary):
            syncs.add(SyncPoint(sync.upstream_offset, sync.downstream_offset, link))
    assert len(syncs) <= 3
    assert syncs.downstream(555).offset == 560 and syncs.downstream(555).exact
    assert syncs.upstream(560).offset == 555


def test_mm2_syncs_translate_as_mm2_does():
    syncs = PartitionSyncs()
    syncs.add(SyncPoint(100, 200))
    assert syncs.downstream(100).offset == 200 and syncs.downstream(100).exact
    t = syncs.downstream(150)
    assert (t.offset, t.exact) == (201, False)
    t = syncs.downstream(5)
    assert t.offset is None and "older than the oldest offset sync" in t.reason


def test_group_ahead_of_replication_is_reported_with_the_reread_bound():
    syncs = PartitionSyncs()
    syncs.add(SyncPoint(0, 0, SyncLink(SYNC_RUN)))
    syncs.add(SyncPoint(9, 9, SyncLink(SYNC_END, 10)))
    assert syncs.downstream(10).offset == 10 and syncs.downstream(10).exact  # fully consumed: the end
    t = syncs.downstream(14)
    assert (t.offset, t.exact, t.reread) == (10, False, 4) and "ahead of replication" in t.reason


def test_empty_partition_translates_to_zero_and_unreplicated_offsets_are_reported():
    syncs = PartitionSyncs()
    assert (syncs.downstream(0).offset, syncs.downstream(0).exact) == (0, True)
    assert syncs.downstream(7).offset is None and "none of its records" in syncs.downstream(7).reason
    assert syncs.upstream(0).offset == 0


def test_re_replication_after_a_crash_keeps_the_newer_copy():
    # batch 51..60 was written twice: at 51..60 (its syncs written, positions not saved) then at 61..70
    syncs = PartitionSyncs()
    for up, down, link in [(0, 0, SyncLink(SYNC_RUN)), (50, 50, SyncLink(SYNC_END, 51)),
                           (51, 51, SyncLink(SYNC_RUN)), (60, 60, SyncLink(SYNC_END, 61)),
                           (51, 61, SyncLink(SYNC_RUN)), (60, 70, SyncLink(SYNC_END, 61))]:
        syncs.add(SyncPoint(up, down, link))
    assert syncs.downstream(55).offset == 65 and syncs.downstream(55).exact
    assert syncs.downstream(51).offset == 61
    assert syncs.downstream(30).offset == 30 and syncs.downstream(30).exact


def test_a_run_cut_by_a_rewind_keeps_its_first_part():
    syncs = PartitionSyncs()
    syncs.add(SyncPoint(0, 0, SyncLink(SYNC_RUN)))
    syncs.add(SyncPoint(99, 99, SyncLink(SYNC_END, 100)))
    syncs.add(SyncPoint(50, 120, SyncLink(SYNC_END, 51)))
    assert syncs.downstream(30).offset == 30 and syncs.downstream(30).exact
    assert syncs.downstream(50).offset == 120
    assert syncs.upstream(49).offset == 49 and syncs.upstream(70).offset == 50


def test_a_re_created_remote_topic_drops_the_old_mapping():
    syncs = PartitionSyncs()
    syncs.add(SyncPoint(200, 500, SyncLink(SYNC_END, 201)))
    syncs.add(SyncPoint(201, 0, SyncLink(SYNC_END, 202)))
    assert syncs.downstream(200).offset is None
    assert syncs.downstream(201).offset == 0


def test_prune_keeps_what_translating_newer_offsets_needs():
    syncs = PartitionSyncs()
    for i in range(10):
        syncs.add(SyncPoint(i * 10, i * 20, SyncLink(SYNC_GAP)))
    syncs.add(SyncPoint(100, 200, SyncLink(SYNC_END, 101)))
    before = syncs.downstream(55)
    syncs.prune(55)
    assert syncs.downstream(55) == before
    assert syncs.downstream(40).offset is None


def test_index_keys_syncs_by_source_partition():
    index = SyncIndex()
    index.add(OffsetSync("t", 1, 5, 7), SyncLink(SYNC_END, 6))
    assert index.topics() == {"t"}
    assert index.get("t", 1).downstream(5).offset == 7
    assert len(index.get("t", 0)) == 0
