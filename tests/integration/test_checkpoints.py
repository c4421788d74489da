"""Checkpoints and translation on real clusters: MM2's offset scenarios (MirrorConnectorsIntegrationBaseTest),
then exactness: a group that processed N records on A resumes on B at exactly record N+1."""

from __future__ import annotations

import threading
import time

from confluent_kafka import Consumer, Producer

from sparkmirror import client
from sparkmirror.kafka.internal_log import read_internal_topic
from sparkmirror.offsets.codec import decode_checkpoint
from sparkmirror.testing.records import produce

from .conftest import commit, committed, count_records, partition_values, records, wait_until
from .test_offset_syncs import transactional_writes

FAST = "emit.checkpoints.interval.seconds = 1\nrefresh.groups.interval.seconds = 1\n"


def checkpoints_of(path, group):
    return {(cp.topic, cp.partition): cp for cp in client.read_checkpoints(path, "A", "B", group).values()}


def wait_for_checkpoints(path, group, expected_upstream, timeout_s=60):
    """Until the group's checkpoints carry exactly these upstream offsets ({(remote topic, p): offset})."""
    def ready():
        got = checkpoints_of(path, group)
        return got if {k: got[k].upstream_offset for k in expected_upstream if k in got} == expected_upstream \
            else None
    return wait_until(ready, timeout_s, f"checkpoints of {group} at {expected_upstream}")


def assert_resumes_exactly(clusters, topic, partition, processed, downstream):
    """On B, the records before `downstream` are exactly A's first `processed` records, and the ones from
    it on are all the rest: 0 re-read, 0 missed."""
    upstream_values = [v for _, v in partition_values(clusters.source, topic, partition)]
    remote = partition_values(clusters.target, f"A.{topic}", partition)
    before = [v for o, v in remote if o < downstream]
    after = [v for o, v in remote if o >= downstream]
    assert before == upstream_values[:processed], f"{topic}-{partition}: re-read or missing before {downstream}"
    assert after == upstream_values[processed:], f"{topic}-{partition}: not resuming at record {processed + 1}"


def positions_after(clusters, topic, partition, counts):
    """The offset a consumer commits after processing the first `count` records of a partition."""
    offsets = [o for o, _ in partition_values(clusters.source, topic, partition)]
    return {count: (offsets[count - 1] + 1 if count else 0) for count in counts}


def checkpoint_history(clusters, group):
    records_ = read_internal_topic("B", {"bootstrap.servers": clusters.target}, "A.checkpoints.internal")
    out = {}
    for record in records_:
        cp = decode_checkpoint(record.key, record.value)
        if cp.group == group:
            out.setdefault((cp.topic, cp.partition), []).append(cp)
    return out


def assert_monotonic(history):
    for key, cps in history.items():
        for before, after in zip(cps, cps[1:], strict=False):
            assert after.downstream_offset > before.downstream_offset or \
                after.upstream_offset < before.upstream_offset, f"{key}: {before} then {after}"


def test_checkpoints_cover_every_partition_exactly_and_follow_a_rewind(clusters, create_topic, mm2_properties,
                                                                       running, unique):
    topic, empty_topic, group = f"cp-{unique}", f"cp-empty-{unique}", f"g-{unique}"
    create_topic("A", topic, 4)
    create_topic("A", empty_topic, 1)
    produce(clusters.source, topic, records(unique, 60, 3))  # partitions 0..2 get 20 each; 3 stays empty
    path = mm2_properties(f"{topic}|{empty_topic}", FAST)
    with running(path):
        wait_until(lambda: count_records(clusters.target, f"A.{topic}") == 60, 90, "replication")
        processed = {0: 7, 1: 20, 2: 0, 3: 0}  # the middle, fully consumed, nothing, an empty partition
        commit(clusters.source, group, {(topic, p): n for p, n in processed.items()} | {(empty_topic, 0): 0})
        got = wait_for_checkpoints(path, group, {(f"A.{topic}", p): n for p, n in processed.items()})
        for p, n in processed.items():
            assert_resumes_exactly(clusters, topic, p, n, got[(f"A.{topic}", p)].downstream_offset)
        assert got[(f"A.{topic}", 3)].downstream_offset == 0  # the empty partition syncs to 0
        assert (f"A.{empty_topic}", 0) not in got  # a topic with no mirrored record gets no checkpoint

        # The live translation (the CLI's) agrees with the checkpoints, and says it is exact.
        plan = client.translate_offsets(path, group, "A", "B")
        rows = {(r.topic, r.partition): r for r in plan.partitions}
        assert plan.method == "live"
        for p in processed:
            row = rows[(topic, p)]
            assert (row.remote_topic, row.downstream_offset, row.status) == \
                (f"A.{topic}", got[(f"A.{topic}", p)].downstream_offset, "exact")
            assert row.lag == 20 - processed[p] if p < 3 else row.lag == 0
        assert rows[(empty_topic, 0)].downstream_offset == 0

        # The group commits at 90 %, then rewinds to 10 %: the checkpoints follow it down.
        commit(clusters.source, group, {(topic, 0): 18})
        wait_for_checkpoints(path, group, {(f"A.{topic}", 0): 18})
        commit(clusters.source, group, {(topic, 0): 2})
        got = wait_for_checkpoints(path, group, {(f"A.{topic}", 0): 2})
        assert_resumes_exactly(clusters, topic, 0, 2, got[(f"A.{topic}", 0)].downstream_offset)
    history = checkpoint_history(clusters, group)
    assert [cp.upstream_offset for cp in history[(f"A.{topic}", 0)]] == [7, 18, 2]
    assert_monotonic(history)


def test_restart_keeps_checkpoints_monotonic_and_catches_up(clusters, create_topic, mm2_properties, running,
                                                            unique, tmp_path):
    topic, group = f"cp-restart-{unique}", f"g-{unique}"
    create_topic("A", topic, 2)
    produce(clusters.source, topic, records(f"{unique}a", 40, 2))
    path = mm2_properties(topic, FAST)
    state = tmp_path / "state"
    with running(path, state_dir=state):
        wait_until(lambda: count_records(clusters.target, f"A.{topic}") == 40, 90, "replication")
        commit(clusters.source, group, {(topic, 0): 10, (topic, 1): 15})
        wait_for_checkpoints(path, group, {(f"A.{topic}", 0): 10, (f"A.{topic}", 1): 15})
    produce(clusters.source, topic, records(f"{unique}b", 40, 2))
    commit(clusters.source, group, {(topic, 0): 35})  # while no checkpointer runs
    with running(path, state_dir=state):
        wait_until(lambda: count_records(clusters.target, f"A.{topic}") == 80, 90, "replication after restart")
        wait_for_checkpoints(path, group, {(f"A.{topic}", 0): 35, (f"A.{topic}", 1): 15})
        # A round that ran before it read the restarted query's offset syncs translated 35 conservatively
        # (to the end of the syncs it knew, as MM2 does): correct, re-reading some records. The next round
        # has the syncs and supersedes it; wait for the checkpoint to agree with the live translation once
        # that is exact...
        live = lambda: {(r.remote_topic, r.partition): r.downstream_offset  # noqa: E731
                        for r in client.translate_offsets(path, group, "A", "B").partitions if r.status == "exact"}
        got = wait_until(lambda: (cps := checkpoints_of(path, group))[(f"A.{topic}", 0)].downstream_offset
                         == live().get((f"A.{topic}", 0)) and cps, 60, "the checkpoint of the restarted syncs")
        # ...which must then resume exactly.
        assert_resumes_exactly(clusters, topic, 0, 35, got[(f"A.{topic}", 0)].downstream_offset)
    history = checkpoint_history(clusters, group)
    assert_monotonic(history)
    # the unchanged partition was not checkpointed again after the restart: its checkpoint was reloaded
    assert [cp.upstream_offset for cp in history[(f"A.{topic}", 1)]] == [15]


def test_transactional_source_translates_exactly_at_every_position(clusters, create_topic, mm2_properties,
                                                                   run_caught_up, unique, tmp_path):
    """Markers and aborted records leave offset gaps upstream: a group that processed `count` committed
    records still resumes on B at exactly the next one, at the start, in the middle and at the head."""
    topic, group = f"cp-tx-{unique}", f"g-{unique}"
    create_topic("A", topic, 2)
    transactional_writes(clusters.source, topic, 2)
    path = mm2_properties(topic)
    run_caught_up(path, tmp_path / "state")
    for p in (0, 1):
        offsets = [o for o, _ in partition_values(clusters.source, topic, p)]
        assert offsets != list(range(len(offsets))), "the source has no offset gaps"
        for count in sorted({0, 1, len(offsets) // 2, len(offsets) - 1, len(offsets)}):
            commit(clusters.source, group, {(topic, p): positions_after(clusters, topic, p, [count])[count]})
            row = next(r for r in client.translate_offsets(path, group, "A", "B").partitions
                       if (r.topic, r.partition) == (topic, p))
            assert row.downstream_offset is not None, row
            assert_resumes_exactly(clusters, topic, p, count, row.downstream_offset)
    # a fully consumed partition resumes at the remote end: no negative lag
    assert row.lag == 0


def test_group_offset_sync_skips_active_groups_and_never_rewinds(clusters, create_topic, mm2_properties, running,
                                                                unique):
    topic, idle, active = f"cp-sync-{unique}", f"idle-{unique}", f"active-{unique}"
    create_topic("A", topic, 1)
    produce(clusters.source, topic, records(unique, 30))
    path = mm2_properties(topic, FAST + "sync.group.offsets.enabled = true\n"
                                        "sync.group.offsets.interval.seconds = 1\n")
    remote = (f"A.{topic}", 0)
    stop = threading.Event()
    member = Consumer({"bootstrap.servers": clusters.target, "group.id": active, "enable.auto.commit": "false",
                       "auto.offset.reset": "latest"})
    member.subscribe([f"A.{topic}"])

    def poll_member() -> None:
        while not stop.is_set():
            member.poll(0.2)

    thread = threading.Thread(target=poll_member, daemon=True)
    thread.start()
    try:
        with running(path):
            wait_until(lambda: count_records(clusters.target, f"A.{topic}") == 30, 90, "replication")
            commit(clusters.source, idle, {(topic, 0): 12})
            commit(clusters.source, active, {(topic, 0): 12})
            wait_for_checkpoints(path, active, {remote: 12})
            wait_until(lambda: committed(clusters.target, idle, [remote])[remote] == 12, 60,
                       "the idle group's offset on B")
            assert committed(clusters.target, active, [remote])[remote] < 0  # never written while it has a member

            # B's group moved ahead on its own; A's group rewinds: B's offset is not moved back.
            commit(clusters.target, idle, {remote: 25})
            commit(clusters.source, idle, {(topic, 0): 4})
            wait_for_checkpoints(path, idle, {remote: 4})
            time.sleep(3)  # three sync rounds
            assert committed(clusters.target, idle, [remote])[remote] == 25
            commit(clusters.source, idle, {(topic, 0): 28})
            wait_until(lambda: committed(clusters.target, idle, [remote])[remote] == 28, 60, "moving forward")
    finally:
        stop.set()
        thread.join(10)
        member.close()


def aborted_transaction(bootstrap: str, topic: str, partitions: int, tag: str) -> None:
    """Records of an aborted transaction in every partition: offsets a read_committed consumer never sees."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"aborted-{tag}"})
    producer.init_transactions(30)
    producer.begin_transaction()
    for p in range(partitions):
        for i in range(3):
            producer.produce(topic, key=b"k", value=f"aborted-{tag}-{i}".encode(), partition=p)
    producer.abort_transaction(30)


def test_exactly_once_translates_exactly_across_its_markers_and_aborted_records(clusters, create_topic,
                                                                               mm2_properties, run_caught_up,
                                                                               unique, tmp_path):
    """With exactly once, the remote topic holds a commit marker after every transaction and the records of
    aborted ones (here written beside sparkmirror's, as a killed run leaves them): a group that processed
    `count` records on A still resumes on B at exactly the next one."""
    topic, group = f"cp-eos-{unique}", f"g-{unique}"
    remote = f"A.{topic}"
    create_topic("A", topic, 2)
    create_topic("B", remote, 2)
    aborted_transaction(clusters.target, remote, 2, f"{unique}-first")
    produce(clusters.source, topic, records(f"{unique}a", 30, 2))
    path = mm2_properties(topic, "A->B.exactly.once.support = required\nsparkmirror.max.offsets.per.trigger = 6\n")
    run_caught_up(path, tmp_path / "state")
    aborted_transaction(clusters.target, remote, 2, f"{unique}-middle")
    produce(clusters.source, topic, records(f"{unique}b", 30, 2))
    run_caught_up(path, tmp_path / "state")
    for p in (0, 1):
        downstream = [o for o, _ in partition_values(clusters.target, remote, p)]
        assert len(downstream) == 30 and downstream != list(range(30)), "no markers or aborted records on B"
        for count in (0, 1, 7, 15, 16, 29, 30):
            commit(clusters.source, group, {(topic, p): positions_after(clusters, topic, p, [count])[count]})
            row = next(r for r in client.translate_offsets(path, group, "A", "B").partitions
                       if (r.topic, r.partition) == (topic, p))
            assert row.downstream_offset is not None, row
            assert_resumes_exactly(clusters, topic, p, count, row.downstream_offset)
