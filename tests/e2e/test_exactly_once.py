"""`exactly.once.support = required`: the process SIGKILLed mid-copy, again and again, then restarted; a consumer
reading committed records sees every source record once, in order per partition. The records the killed runs had
written but not committed are on the target too (read uncommitted), aborted: without the transactions and the
positions committed in them, each restart would have left them as duplicates (as `test_run_cli`'s at-least-once
kill shows)."""

from __future__ import annotations

import os
import re
import signal

from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.groups import ConsumerGroups
from sparkmirror.testing.records import open_transactions, read_all

from .test_run_cli import backlog, wait_for, write_config

RECORDS = 60_000
PARTITIONS = 4
KILLS = 3
MAX_RUNS = 10
POSITIONS_GROUP = "__sparkmirror-positions-A-B"  # FlowConfig.positions_group of A->B
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
        committed = positions.committed([POSITIONS_GROUP]).get(POSITIONS_GROUP, {})
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


def test_a_replay_from_the_start_writes_nothing_twice(clusters, start_cli, tmp_path, unique):
    """A run whose state dir is lost (a new driver machine) reads the backlog again from the start: every record
    is below the positions committed on the target, so each is skipped, not written."""
    topic = f"eos-replay-{unique}"
    sent = backlog(clusters.source, topic, PARTITIONS, REPLAYED, unique)
    config = write_config(tmp_path / "mm2.properties", clusters.source, clusters.target, topic,
                          "A->B.exactly.once.support = required\nsparkmirror.max.offsets.per.trigger = 2000\n")
    for state in ("first", "replay"):  # the same file, a new state dir: Spark's and sparkmirror's state lost
        run = start_cli("run", "--config", config, "--state-dir", str(tmp_path / state), log_name=state)
        wait_for(lambda run=run: passed(run.log_path.read_text()) >= REPLAYED,
                 COPY_TIMEOUT_S, f"{state}: all {REPLAYED} records passed", run)
        os.killpg(run.pid, signal.SIGTERM)
        assert run.wait(STOP_TIMEOUT_S) == 0, run.log_path.read_text()[-3000:]
    skipped = sum(int(m.group(2)) for m in _COUNTS.finditer(run.log_path.read_text()))
    assert skipped == REPLAYED, f"the replay skipped {skipped} of {REPLAYED} records"
    copies = read_all(clusters.target, f"A.{topic}", PARTITIONS)
    for p in range(PARTITIONS):
        assert [r.value for r in copies[p]] == [r.value for r in sent if r.partition == p]


def passed(log: str) -> int:
    """Records the run's reports passed: written or skipped."""
    return sum(int(written) + int(skipped) for written, skipped in _COUNTS.findall(log))
