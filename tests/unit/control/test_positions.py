from sparkmirror.control.positions import (
    TopicPosition,
    advance,
    from_json,
    plan_start,
    to_json,
    with_committed,
    written_again,
)
from sparkmirror.model import PartitionSummary


def summary(topic, partition, next_upstream):
    return PartitionSummary(topic, partition, 1, 0, 1, next_upstream, (next_upstream - 1,), (0,))


def test_first_start_follows_auto_offset_reset():
    marks = {"t": {0: (5, 50), 1: (0, 0)}}
    earliest = plan_start({"t": 2}, {"t": "id1"}, marks, None, "earliest", "A->B")
    latest = plan_start({"t": 2}, {"t": "id1"}, marks, None, "latest", "A->B")
    assert earliest.offsets == {"t": {0: 5, 1: 0}}
    assert latest.offsets == {"t": {0: 50, 1: 0}}
    assert not earliest.warnings and not earliest.notes


def test_stored_positions_continue_and_new_topics_and_partitions_start_at_their_beginning():
    stored = {"t": TopicPosition("id1", {0: 30})}
    plan = plan_start({"t": 2, "new": 1}, {"t": "id1", "new": "id2"},
                      {"t": {0: (0, 50), 1: (3, 9)}, "new": {0: (2, 4)}}, stored, "latest", "A->B")
    assert plan.offsets == {"t": {0: 30, 1: 3}, "new": {0: 2}}  # reset=latest only applies on the first start
    assert plan.notes == ("flow A->B: new source topic 'new' (1 partitions), replicating from its start",)


def test_a_recreated_topic_starts_from_its_beginning_with_a_warning():
    stored = {"t": TopicPosition("old-id", {0: 500})}
    plan = plan_start({"t": 1}, {"t": "new-id"}, {"t": {0: (0, 7)}}, stored, "earliest", "A->B")
    assert plan.offsets == {"t": {0: 0}}
    assert plan.warnings == ("flow A->B: source topic 't' was deleted and re-created (topic id old-id -> new-id); "
                             "replicating it from its start",)


def test_records_lost_to_retention_or_truncation_are_named_never_silently_skipped():
    stored = {"t": TopicPosition("id", {0: 10, 1: 90})}
    plan = plan_start({"t": 2}, {"t": "id"}, {"t": {0: (25, 40), 1: (0, 60)}}, stored, "earliest", "A->B")
    assert plan.offsets == {"t": {0: 25, 1: 60}}
    assert "15 records of t-0 (offsets 10 to 24) were removed by retention" in plan.warnings[0]
    assert "t-1 ends at 60 but was read up to 90" in plan.warnings[1]
    assert (plan.removed, plan.removed_records()) == ({("t", 0): (10, 24)}, 15)  # counted, not only logged


def test_advance_moves_forward_only_and_round_trips_through_json():
    positions = {"t": TopicPosition("id", {0: 10, 1: 4})}
    moved = advance(positions, [summary("t", 0, 20), summary("t", 1, 3), summary("u", 0, 8)])
    assert moved["t"] == TopicPosition("id", {0: 20, 1: 4})  # a stale summary never moves a partition back
    assert moved["u"].next_offsets == {0: 8}
    assert from_json(to_json(moved)) == moved


def test_records_at_offsets_already_passed_are_counted_as_written_again():
    positions = {"orders": TopicPosition("id", {0: 100, 1: 50})}
    retried = PartitionSummary("orders", 0, 30, 0, 30, 110, (80, 109), (500, 529))  # 80..99 were written before
    fresh = PartitionSummary("orders", 1, 10, 0, 10, 60, (50, 59), (70, 79))
    unknown = PartitionSummary("payments", 0, 5, 0, 5, 5, (0, 4), (0, 4))  # no position yet: a first start
    assert written_again(positions, [retried, fresh, unknown]) == 20
    within = PartitionSummary("orders", 0, 5, 0, 5, 90, (85, 89), (600, 604))  # all of it before the position
    assert written_again(positions, [within]) == 5


def test_committed_positions_win_over_the_state_dirs_and_a_note_says_so():
    stored = {"t": TopicPosition("id1", {0: 10, 1: 20})}
    committed = {("A.t", 0): (15, "id1"), ("A.t", 1): (20, "id1"), ("A.gone", 0): (9, "x")}
    out, notes = with_committed(stored, committed, {"t": "A.t"}, {"t": "id1"}, "A->B", "__sparkmirror-positions-A-B")
    assert out == {"t": TopicPosition("id1", {0: 15, 1: 20})}
    assert notes == ("flow A->B: 1 partition(s) continue from the positions committed on the target (group "
                     "__sparkmirror-positions-A-B), not from the state dir's",)


def test_a_lost_state_dir_continues_from_the_committed_positions():
    out, _ = with_committed(None, {("A.t", 0): (15, "id1")}, {"t": "A.t"}, {"t": "id1"}, "A->B")
    assert out == {"t": TopicPosition("id1", {0: 15})}
    assert with_committed(None, {}, {"t": "A.t"}, {"t": "id1"}, "A->B") == (None, ())


def test_positions_committed_for_a_deleted_topic_of_the_same_name_do_not_count():
    stored = {"t": TopicPosition("old", {0: 500})}
    out, notes = with_committed(stored, {("A.t", 0): (500, "old")}, {"t": "A.t"}, {"t": "new"}, "A->B")
    assert out == stored and notes == ()  # plan_start then restarts the re-created topic from its beginning
    out, _ = with_committed(stored, {("A.t", 0): (4, "new")}, {"t": "A.t"}, {"t": "new"}, "A->B")
    assert out == {"t": TopicPosition("new", {0: 4})}  # committed after the re-creation: it wins
