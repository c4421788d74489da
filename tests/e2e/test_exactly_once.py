"""`exactly.once.support = required`: the process SIGKILLed mid-copy, again and again, then restarted; a consumer
reading committed records sees every source record once, in order per partition. The records the killed runs had
written but not committed are on the target too (read uncommitted), aborted: without the transactions and the
positions committed in them, each restart would have left them as duplicates (as `test_run_cli`'s at-least-once
kill shows)."""

from __future__ import annotations

import os
import re
import signal
import time

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.groups import ConsumerGroups
from sparkmirror.model import KafkaRecord, NewTopicSpec
from sparkmirror.testing.records import open_transactions, produce, read_all

from .test_run_cli import backlog, wait_for, write_config

RECORDS = 60_000
PARTITIONS = 4
KILLS = 3
MAX_RUNS = 10
POSITIONS_GROUP = "__sparkmirror-positions-A-B"  # FlowConfig.positions_group of A->B
TRANSACTIONAL_ID_PREFIX = "sparkmirror-A-B"  # FlowConfig.transactional_id_prefix of A->B
REPLAYED = 10_000
_COUNTS = re.compile(r"batch \d+: (\d+) records, (\d+) skipped")  # a micro-batch's line in the log
COPY_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 90.0


def test_sigkills_mid_copy_leave_every_record_once_for_read_committed_consumers(clusters, start_cli, tmp_path,
                                                                                unique):
    topic = f"eos-{unique}"
    sent = backlog(clusters.source, topic, PARTITIONS, RECORDS, unique)
    config = write_config(tmp_path / "mm2.properties", clusters.source, clusters.target, topic,
                          "A->B.exactly.once.support = required\nsparkmirror.max.offsets.per.trigger = 4000\n")
    state = str(tmp_path / "state")
    remote = f"A.{topic}"
    target = ClusterAdmin("B", {"bootstrap.servers": clusters.target})

    landed, runs = 0, 0
    while landed < KILLS:  # kills that land inside a transaction: it holds records no consumer may see
        runs += 1
        assert runs <= MAX_RUNS, f"only {landed} of {runs - 1} kills landed inside a transaction"
        run = start_cli("run", "--config", config, "--state-dir", state, log_name=f"killed-{runs}")
        wait_for(lambda: open_transactions(clusters.target, remote, PARTITIONS) if remote in
                 target.topic_partitions() else False, COPY_TIMEOUT_S, f"run {runs} inside a transaction", run)
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
        landed += bool(open_transactions(clusters.target, remote, PARTITIONS))  # it may have committed meanwhile
    last = start_cli("run", "--config", config, "--state-dir", state, log_name="last")

    positions = ConsumerGroups("B", {"bootstrap.servers": clusters.target})

    def all_committed() -> bool:  # the next source offsets the transactions committed: the whole backlog
        committed = positions.committed([POSITIONS_GROUP], [(remote, p) for p in range(PARTITIONS)]).get(
            POSITIONS_GROUP, {})
        return sum(offset for offset, _ in committed.values()) >= RECORDS
    wait_for(all_committed, COPY_TIMEOUT_S, f"positions of all {RECORDS} records committed on B", last)
    os.killpg(last.pid, signal.SIGTERM)
    assert last.wait(STOP_TIMEOUT_S) == 0, last.log_path.read_text()[-3000:]

    copies = read_all(clusters.target, remote, PARTITIONS)
    for p in range(PARTITIONS):
        got = [r.value for r in copies[p]]
        assert got == [r.value for r in sent if r.partition == p], \
            f"{remote}-{p}: {len(got)} committed records, {len(got) - len(set(got))} of them again"
    everything = read_all(clusters.target, remote, PARTITIONS, committed_only=False)
    aborted = sum(len(records) for records in everything.values()) - RECORDS
    print(f"\n{runs} SIGKILLs, {landed} inside a transaction: {aborted} records written and aborted")
    assert aborted > 0


def test_a_run_whose_state_dir_is_lost_continues_from_the_positions_committed_on_the_target(clusters, start_cli,
                                                                                          tmp_path, unique):
    """A new state dir (a new driver machine: Spark's and sparkmirror's state lost) starts every partition at the
    position committed on the target with its records: nothing is read again, nothing written twice."""
    topic = f"eos-replay-{unique}"
    sent = backlog(clusters.source, topic, PARTITIONS, REPLAYED, unique)
    config = write_config(tmp_path / "mm2.properties", clusters.source, clusters.target, topic,
                          "A->B.exactly.once.support = required\nsparkmirror.max.offsets.per.trigger = 2000\n")
    first = start_cli("run", "--config", config, "--state-dir", str(tmp_path / "first"), log_name="first")
    wait_for(lambda: passed(first.log_path.read_text()) >= REPLAYED, COPY_TIMEOUT_S,
             f"first: all {REPLAYED} records written", first)
    os.killpg(first.pid, signal.SIGTERM)
    assert first.wait(STOP_TIMEOUT_S) == 0, first.log_path.read_text()[-3000:]

    replay = start_cli("run", "--config", config, "--state-dir", str(tmp_path / "replay"), log_name="replay")
    taken = f"{PARTITIONS} partition(s) continue from the positions committed on the target"
    wait_for(lambda: "replicating 1 topic(s)" in replay.log_path.read_text(), COPY_TIMEOUT_S, "replay started",
             replay)
    more = [KafkaRecord(i % PARTITIONS, -1, b"k", f"more-{i}".encode(), (), 0, int(time.time() * 1000))
            for i in range(PARTITIONS * 10)]
    assert produce(clusters.source, topic, more) == len(more)  # and then new records, and only they, are copied
    wait_for(lambda: passed(replay.log_path.read_text()) >= len(more), COPY_TIMEOUT_S, "new records written",
             replay)
    os.killpg(replay.pid, signal.SIGTERM)
    assert replay.wait(STOP_TIMEOUT_S) == 0, replay.log_path.read_text()[-3000:]
    log = replay.log_path.read_text()
    assert taken in log
    counts = [(int(w), int(s)) for w, s in _COUNTS.findall(log)]
    assert sum(w for w, _ in counts) == len(more) and sum(s for _, s in counts) == 0, counts
    copies = read_all(clusters.target, f"A.{topic}", PARTITIONS)
    for p in range(PARTITIONS):
        assert [r.value for r in copies[p]] == [r.value for r in [*sent, *more] if r.partition == p]


def test_a_task_of_an_earlier_run_left_behind_cannot_commit_after_a_start(clusters, start_cli, tmp_path, unique):
    """A writer of an earlier run still alive somewhere (a lost executor's task, under an id no task of the new
    run takes: tasks.max shrank) with an open transaction: the start fences every id of the flow, so the
    leftover's records and positions never become visible, and its open transaction holds nothing up."""
    topic = f"eos-zombie-{unique}"
    records = 2_000
    sent = backlog(clusters.source, topic, 2, records, unique)
    remote = f"A.{topic}"
    target = ClusterAdmin("B", {"bootstrap.servers": clusters.target})
    assert target.create_topics([NewTopicSpec(remote, 2, 1)]).get(remote) is None
    zombie = Producer({"bootstrap.servers": clusters.target, "transactional.id": f"{TRANSACTIONAL_ID_PREFIX}-7",
                       "transaction.timeout.ms": "600000"})
    zombie.init_transactions(30)
    zombie.begin_transaction()
    zombie.produce(remote, b"from a zombie", partition=0)
    zombie.flush(30)
    group = Consumer({"bootstrap.servers": clusters.target, "group.id": POSITIONS_GROUP})
    try:
        zombie.send_offsets_to_transaction([TopicPartition(remote, 0, records)], group.consumer_group_metadata(), 30)
    finally:
        group.close()
    assert open_transactions(clusters.target, remote, 2) == [0]

    config = write_config(tmp_path / "mm2.properties", clusters.source, clusters.target, topic,
                          "A->B.exactly.once.support = required\ntasks.max = 1\n")
    run = start_cli("run", "--config", config, "--state-dir", str(tmp_path / "state"), log_name="run")
    wait_for(lambda: passed(run.log_path.read_text()) >= records, COPY_TIMEOUT_S, f"all {records} records written",
             run)
    with pytest.raises(KafkaException, match="(?i)fenc"):
        zombie.commit_transaction(30)
    os.killpg(run.pid, signal.SIGTERM)
    assert run.wait(STOP_TIMEOUT_S) == 0, run.log_path.read_text()[-3000:]
    copies = read_all(clusters.target, remote, 2)
    for p in range(2):
        assert [r.value for r in copies[p]] == [r.value for r in sent if r.partition == p]


def passed(log: str) -> int:
    """Records the run's reports passed: written or skipped."""
    return sum(int(written) + int(skipped) for written, skipped in _COUNTS.findall(log))
