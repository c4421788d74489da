"""The checkpointer against in-memory clusters: translation, monotonic checkpoints, group offset sync."""

from __future__ import annotations

from tests.unit.fakes import FakeClients, FakeCluster, FakeReader, FakeWriter, load

from sparkmirror.control.checkpointer import Checkpointer
from sparkmirror.model import PartitionSummary
from sparkmirror.offsets.codec import Checkpoint, decode_checkpoint, encode_checkpoint
from sparkmirror.offsets.syncs import sync_records

TEXT = """\
clusters = A, B
A.bootstrap.servers = a:9092
B.bootstrap.servers = b:9092
A->B.enabled = true
"""
SYNCS, CHECKPOINTS = "mm2-offset-syncs.B.internal", "A.checkpoints.internal"


def setup(extra: str = ""):
    flow = load(TEXT + extra).flow("A", "B")
    a, b = FakeCluster("A"), FakeCluster("B")
    return flow, a, b


def checkpointer(flow, a, b) -> Checkpointer:
    clients = FakeClients(a, b)
    made = Checkpointer(flow, a, b, FakeReader(a, SYNCS), FakeWriter(b),
                        lambda: clients.read_all("B", {}, CHECKPOINTS), lambda: {"orders": "A.orders"},
                        a.topic_partitions)
    made.load()
    return made


def replicated(a: FakeCluster, upstream: range, downstream_start: int) -> None:
    """Offset syncs as the record path writes them for records replicated one after the other."""
    ups = (upstream.start, upstream.stop - 1)
    summary = PartitionSummary("orders", 0, len(upstream), 0, 0, upstream.stop, ups,
                               (downstream_start, downstream_start + len(upstream) - 1), (True, False))
    for key, value, headers in sync_records([summary]):
        a.append(SYNCS, key, value, headers)


def written(b: FakeCluster) -> list[Checkpoint]:
    return [decode_checkpoint(r.key, r.value) for r in b.logs.get(CHECKPOINTS, [])]


def test_committed_offsets_are_translated_exactly_and_written_once():
    flow, a, b = setup()
    replicated(a, range(0, 100), 1000)
    a.committed_offsets["app"] = {("orders", 0): (40, "meta")}
    cp = checkpointer(flow, a, b)
    assert cp.emit() == 1
    assert [(c.group, c.topic, c.upstream_offset, c.downstream_offset, c.metadata) for c in written(b)] == [
        ("app", "A.orders", 40, 1040, "meta")]
    assert cp.emit() == 0  # nothing moved: nothing new is written


def test_filtered_groups_get_no_checkpoint():
    flow, a, b = setup("A->B.groups.exclude = app.*\n")
    replicated(a, range(0, 10), 0)
    a.committed_offsets["app-1"] = {("orders", 0): (5, "")}
    assert checkpointer(flow, a, b).emit() == 0


def test_a_restart_reads_its_checkpoints_back_and_writes_only_what_moved():
    flow, a, b = setup()
    replicated(a, range(0, 100), 0)
    b.append(CHECKPOINTS, *encode_checkpoint(Checkpoint("app", "A.orders", 0, 60, 60)))
    a.committed_offsets["app"] = {("orders", 0): (60, "")}  # what was checkpointed before the restart
    cp = checkpointer(flow, a, b)
    assert cp.emit() == 0
    a.committed_offsets["app"] = {("orders", 0): (70, "")}
    assert cp.emit() == 1 and written(b)[-1].downstream_offset == 70


def test_records_that_are_not_syncs_are_skipped_with_a_warning(caplog):
    flow, a, b = setup()
    a.append(SYNCS, b"junk", b"junk")
    replicated(a, range(0, 10), 0)
    a.committed_offsets["app"] = {("orders", 0): (5, "")}
    assert checkpointer(flow, a, b).emit() == 1
    assert "offset 0 is not an offset sync, skipped" in caplog.text


def test_group_offsets_move_only_for_idle_groups_on_the_target():
    flow, a, b = setup("sync.group.offsets.enabled = true\n")
    replicated(a, range(0, 100), 0)
    a.committed_offsets.update({"idle": {("orders", 0): (30, "")}, "busy": {("orders", 0): (30, "")}})
    b.members["busy"] = 2
    cp = checkpointer(flow, a, b)
    cp.emit()
    assert cp.sync_group_offsets() == 1
    assert b.committed_offsets["idle"] == {("A.orders", 0): (30, "")}
    assert "busy" not in b.committed_offsets


def test_only_the_partitions_of_replicated_topics_with_offset_syncs_are_asked_for():
    flow, a, b = setup()
    a.add_topic("orders", 3)
    a.add_topic("other", 1)
    a.committed_offsets["app"] = {("orders", 0): (5, ""), ("orders", 2): (0, ""), ("other", 0): (3, "")}
    cp = checkpointer(flow, a, b)
    assert cp.emit() == 0
    assert a.committed_calls == []  # nothing replicated yet: nothing to checkpoint, nothing read
    replicated(a, range(0, 10), 0)  # syncs for orders-0 only
    assert cp.emit() == 2
    assert a.committed_calls == [(["app"], {("orders", 0), ("orders", 1), ("orders", 2)})]
    # A partition without syncs where the group consumed nothing is checkpointed at 0.
    assert sorted((c.topic, c.partition, c.downstream_offset) for c in written(b)) == [
        ("A.orders", 0, 5), ("A.orders", 2, 0)]


def test_group_sync_reads_the_target_offsets_of_the_idle_groups_checkpointed_partitions_only():
    flow, a, b = setup("sync.group.offsets.enabled = true\n")
    replicated(a, range(0, 100), 0)
    a.committed_offsets.update({"idle": {("orders", 0): (30, "")}, "busy": {("orders", 0): (30, "")}})
    b.members["busy"] = 2
    b.committed_offsets["idle"] = {("A.orders", 0): (10, ""), ("A.orders", 1): (4, ""), ("A.other", 0): (1, "")}
    cp = checkpointer(flow, a, b)
    cp.emit()
    assert cp.sync_group_offsets() == 1
    assert b.committed_calls == [(["idle"], {("A.orders", 0)})]
    assert b.committed_offsets["idle"] == {("A.orders", 0): (30, ""), ("A.orders", 1): (4, ""), ("A.other", 0): (1, "")}
