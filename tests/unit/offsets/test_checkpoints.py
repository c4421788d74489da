"""MM2's checkpoint, group-sync and move rules, without a broker."""

from sparkmirror.offsets.checkpoints import is_more_recent, latest_checkpoints, plan_checkpoints, plan_group_sync
from sparkmirror.offsets.codec import Checkpoint
from sparkmirror.offsets.failover import FlowSyncs, plan_move, unreplicated_offsets, with_lag
from sparkmirror.offsets.syncs import SYNC_END, SYNC_RUN, OffsetSync, SyncLink
from sparkmirror.offsets.translation import SyncIndex


def index(*syncs):
    out = SyncIndex()
    for topic, partition, up, down, link in syncs:
        out.add(OffsetSync(topic, partition, up, down), link)
    return out


RUN, END = SyncLink(SYNC_RUN), SyncLink(SYNC_END, 100)
SYNCS = index(("t", 0, 0, 0, RUN), ("t", 0, 99, 99, END))


def test_a_checkpoint_is_emitted_first_on_rewind_and_on_progress_only():
    last = Checkpoint("g", "A.t", 0, 50, 50)
    assert is_more_recent(last, None)
    assert is_more_recent(Checkpoint("g", "A.t", 0, 10, 10), last)  # the group rewound
    assert is_more_recent(Checkpoint("g", "A.t", 0, 60, 60), last)
    assert not is_more_recent(Checkpoint("g", "A.t", 0, 50, 50), last)  # repeated
    assert not is_more_recent(Checkpoint("g", "A.t", 0, 60, 49), last)  # would rewind downstream


def test_checkpoints_cover_replicated_topics_and_empty_partitions_only():
    groups = {"g": {("t", 0): (40, "m"), ("t", 1): (0, ""), ("t", 2): (5, ""), ("other", 0): (3, ""),
                    ("unmirrored", 0): (0, "")}}
    plan = plan_checkpoints(groups, {"t": "A.t", "unmirrored": "A.unmirrored"}, SYNCS, {})
    assert plan.emit == [Checkpoint("g", "A.t", 0, 40, 40, "m"), Checkpoint("g", "A.t", 1, 0, 0)]
    assert set(plan.untranslated) == {("g", "t", 2)}  # offset 5 of a partition nothing was replicated from
    again = plan_checkpoints(groups, {"t": "A.t"}, SYNCS, latest_checkpoints(plan.emit))
    assert again.emit == []


def test_latest_checkpoint_per_key_wins():
    cps = [Checkpoint("g", "A.t", 0, 1, 1), Checkpoint("h", "A.t", 0, 7, 7), Checkpoint("g", "A.t", 0, 2, 2)]
    assert list(latest_checkpoints(cps, "g").values()) == [Checkpoint("g", "A.t", 0, 2, 2)]


def test_group_sync_skips_active_groups_and_never_moves_back():
    cps = latest_checkpoints([Checkpoint("idle", "A.t", 0, 30, 30, "m"), Checkpoint("idle", "A.t", 1, 5, 5),
                              Checkpoint("busy", "A.t", 0, 9, 9)])
    plan = plan_group_sync(cps, {"busy": "STABLE"}, {"idle": {("A.t", 1): (8, "")}})
    assert plan.commit == {"idle": {("A.t", 0): (30, "m")}}
    assert "STABLE on the target, with consumers in it" in plan.skipped["busy"]


def flow(source, target, syncs, replicated=()):
    return FlowSyncs(source, target, lambda t: f"{source}.{t}",
                     lambda t: t.split(".", 1)[1] if t.startswith(f"{source}.") else None, syncs,
                     lambda t: t in replicated)


def test_a_move_translates_forward_copies_back_and_reports_the_rest():
    forward = flow("A", "B", SYNCS, replicated={"fresh"})
    reverse = flow("B", "A", index(("u", 0, 0, 10, RUN), ("u", 0, 9, 19, SyncLink(SYNC_END, 10))))
    rows = plan_move({("t", 0): (40, ""), ("B.u", 0): (15, ""), ("fresh", 0): (0, ""), ("x", 0): (3, "")},
                     "A", "B", forward, reverse)
    got = {(r.topic, r.partition): (r.remote_topic, r.downstream_offset, r.status) for r in rows}
    assert got == {("t", 0): ("A.t", 40, "exact"), ("B.u", 0): ("u", 5, "exact"),
                   ("fresh", 0): ("A.fresh", 0, "exact"), ("x", 0): (None, None, "untranslatable")}
    lagged = with_lag(rows, {("A.t", 0): 100, ("u", 0): 12}, unreplicated_offsets(forward, {("t", 0): 130}))
    by_topic = {r.topic: r for r in lagged}
    assert (by_topic["t"].lag, by_topic["t"].unreplicated) == (60, 30)
    assert by_topic["B.u"].lag == 7
