"""Taking over a flow from a real MM2 (issue 36): MM2 copies while records are written, is stopped (SIGTERM, or
kill -9), and sparkmirror continues where MM2's Connect offsets and offset syncs say, with no record lost and no
more copied twice than the plan announced; groups fail over across the switch; the way back to MM2."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from sparkmirror.cli.main import cli
from sparkmirror.client import read_checkpoints
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.groups import ConsumerGroups
from sparkmirror.kafka.records import read_topic
from sparkmirror.offsets.connect_offsets import (
    SOURCE_CONNECTOR,
    decode_source_offset,
    dedicated_offsets_topic,
    next_offsets,
)
from sparkmirror.takeover import TakeoverRefused, hand_back, take_over
from sparkmirror.testing.connect_distributed import ConnectWorker, mirror_connector_configs, submit
from sparkmirror.testing.mirror_maker import LocalMirrorMaker
from sparkmirror.testing.records import produce

from .conftest import SteadyProducer, count_records, partition_values, records, trigger_settings, wait_until
from .mm2_interop import MM2_HEAP, MM2_START_TIMEOUT_S, java_translate, mm2_properties, running_mm2

PARTITIONS = 3
BACKLOG = 160_000
WRITTEN_ON = 40_000  # by a producer running through MM2's copy, its stop and the take-over
COPY_TIMEOUT_S = 180.0
CONNECT_BACKLOG = 30_000
WATCH_S = 2.0  # the remote ends must stand still this long: the test's writes move them many times a second


# MM2's exactly once (KIP-618) in dedicated mode: its internal REST server, transactions on B, read_committed on A;
# sparkmirror's flow, from the same file, writes exactly once too.
EXACTLY_ONCE = ("dedicated.mode.enable.internal.rest = true\nlisteners = http://127.0.0.1:0\n"
                "B.exactly.once.source.support = enabled\nA.consumer.isolation.level = read_committed\n")


def _config(tmp_path: Path, source: str, target: str, topic: str, extra: str = "") -> Path:
    """One file for both: MM2 with its default offset.lag.max (sparse syncs) and its worker's offset flush every
    2 s (a worker setting: `B.`), so a kill -9 leaves records on the target past MM2's last commit."""
    text = (mm2_properties(source, target, [topic]).replace("offset.lag.max = 0\n", "offset.lag.max = 100\n")
            .replace("B.offset.flush.interval.ms = 1000\n", "B.offset.flush.interval.ms = 2000\n") + extra)
    path = tmp_path / "mm2.properties"
    path.write_text(text + trigger_settings("micro-batch"))
    return path


def copied_once_in_order(clusters, topic: str, remote: str, duplicates_at_most: dict[int, int]) -> tuple[int, int]:
    """Assert that each partition's source records are all on the target, in order, with no more copied twice
    than `duplicates_at_most[partition]`; returns the source records and those copied twice."""
    read = again = 0
    for p, bound in sorted(duplicates_at_most.items()):
        source = [v for _, v in partition_values(clusters.source, topic, p)]
        copied = [v for _, v in partition_values(clusters.target, remote, p)]
        first = list(dict.fromkeys(copied))  # each value once, where it first arrived
        assert first == source, f"partition {p}: the copy lost or reordered records"
        assert len(copied) - len(first) <= bound, (
            f"partition {p}: {len(copied) - len(first)} copied twice, the plan said at most {bound}")
        read, again = read + len(source), again + len(copied) - len(first)
    return read, again


def mm2_committed(bootstrap: str, topic: str) -> dict[int, int]:
    """Partition -> the next offset MM2 committed for `topic` in its dedicated-mode offsets topic on B."""
    offsets = dedicated_offsets_topic("A")
    admin = ClusterAdmin("B", {"bootstrap.servers": bootstrap})
    partitions = admin.topic_partitions().get(offsets)
    if partitions is None:
        return {}
    marks = admin.watermarks(offsets, partitions)
    entries = [e for r in read_topic({"bootstrap.servers": bootstrap}, offsets, marks)
               if (e := decode_source_offset(r.key, r.value)) is not None]
    return {p: o for (t, p), o in next_offsets(entries, SOURCE_CONNECTOR, "A").items() if t == topic}


@pytest.mark.parametrize("stop", ["sigterm-exactly-once", "kill"])
def test_sparkmirror_continues_a_stopped_mm2s_copy(clusters, create_topic, run_caught_up, tmp_path, unique, stop):
    """SIGTERM with exactly once on both sides (MM2 commits its positions in its transactions; a commit marker
    follows each on B), kill -9 at least once (MM2 has copied past its last commit)."""
    topic = f"takeover-{stop}-{unique}"
    remote = f"A.{topic}"
    create_topic("A", topic, PARTITIONS)
    produce(clusters.source, topic, records("backlog", BACKLOG, PARTITIONS))
    config = _config(tmp_path, clusters.source, clusters.target, topic,
                     EXACTLY_ONCE if stop == "sigterm-exactly-once" else "")
    mm = LocalMirrorMaker(config.read_text(), clusters=("B",), name=f"mm2-takeover-{stop}", heap=MM2_HEAP).start()
    writer = SteadyProducer(clusters.source, topic, PARTITIONS, per_round=2000)
    try:
        wait_until(lambda: count_records(clusters.target, remote) >= BACKLOG // 2, MM2_START_TIMEOUT_S,
                   f"MM2 to copy half of {topic}")
        if stop == "sigterm-exactly-once":
            with pytest.raises(TakeoverRefused, match="MM2 runs A->B: its workers' group 'A-mm2' on 'B' has 1 member"):
                take_over(config, "A", "B", watch_s=WATCH_S)  # MM2 still copies: refused, nothing committed
            forced = take_over(config, "A", "B", force=True, watch_s=0)  # the plan only: says it went past MM2
            assert not forced.applied and any("group 'A-mm2' on 'B' had 1 member(s)" in n and "(--force)" in n
                                              for n in forced.notes), forced.notes
            assert mm.stop() is not None
        else:  # after MM2's first commit (every 2 s), so that it has copied past a commit when killed
            wait_until(lambda: len(mm2_committed(clusters.target, topic)) == PARTITIONS, MM2_START_TIMEOUT_S,
                       f"MM2 to commit positions of {topic}")
            assert mm.process is not None and mm._watchdog is not None
            os.killpg(mm._watchdog.pgid, signal.SIGKILL)
            mm.process.wait(30)
            # The killed worker stays in its group until its session times out (Connect's 10 s): refused till then
            with pytest.raises(TakeoverRefused, match="its workers' group 'A-mm2' on 'B' has 1 member"):
                take_over(config, "A", "B", watch_s=WATCH_S)
            groups = ConsumerGroups("B", {"bootstrap.servers": clusters.target})
            wait_until(lambda: groups.workers_state("A-mm2") == ("EMPTY", 0), COPY_TIMEOUT_S,
                       "the killed MM2 worker to leave group A-mm2")
        wait_until(lambda: writer.written >= WRITTEN_ON, COPY_TIMEOUT_S, f"{WRITTEN_ON} more records on {topic}")
        plan = take_over(config, "A", "B", apply=True, watch_s=WATCH_S)
    finally:
        writer.stop()
        mm.keep_logs = mm.keep_logs or bool(os.environ.get("KEEP_MM2_LOGS"))
        mm.stop()
    assert not writer.errors
    assert plan.applied and {(p.topic, p.partition) for p in plan.partitions} == {(topic, p) for p in range(3)}
    assert all(p.committed is not None for p in plan.partitions), "MM2 committed no position"

    run_caught_up(config, tmp_path / "state")

    read, again = copied_once_in_order(clusters, topic, remote, {p.partition: p.duplicates for p in plan.partitions})
    assert read == BACKLOG + writer.written
    if stop == "sigterm-exactly-once":  # a clean stop commits its last record: nothing is copied twice
        assert again == 0 and plan.duplicates == 0


def test_takeover_and_hand_back_with_mm2_on_a_connect_cluster(clusters, create_topic, run_caught_up, tmp_path,
                                                              unique):
    """MM2's three connectors posted to a distributed Connect worker on B, as a Connect cluster runs them; the
    worker is stopped mid-copy with writes going on. sparkmirror takes over from the cluster's offsets topic
    (`--offsets-topic`) and, once it has copied the rest, hands back: the restarted worker's MM2 copies only what
    came after."""
    topic, group = f"takeover-connect-{unique}", f"connect-{unique}"
    remote, offsets_topic = f"A.{topic}", f"{group}-offsets"
    create_topic("A", topic, PARTITIONS)
    produce(clusters.source, topic, records("backlog", CONNECT_BACKLOG, PARTITIONS))
    config = _config(tmp_path, clusters.source, clusters.target, topic)
    connectors = mirror_connector_configs(
        "A", "B", clusters.source, clusters.target, topic, 2,
        {"emit.heartbeats.enabled": "false", "sync.topic.acls.enabled": "false", "sync.group.offsets.enabled": "false",
         "refresh.topics.interval.seconds": "1", "offset.lag.max": "100"})
    worker = ConnectWorker(clusters.target, group, name=f"connect-{unique}", heap=MM2_HEAP,
                           settings={"offset.flush.interval.ms": "2000"})
    try:
        writer = SteadyProducer(clusters.source, topic, PARTITIONS, per_round=200)
        try:
            worker.start().wait_ready()
            submit([worker.rest], connectors)
            wait_until(lambda: count_records(clusters.target, remote) >= CONNECT_BACKLOG // 2, MM2_START_TIMEOUT_S,
                       f"MM2 on Connect to copy half of {topic}")
            with pytest.raises(TakeoverRefused, match=f"the remote topics of A->B on 'B' are being written: {remote}-"):
                take_over(config, "A", "B", offsets_topic=offsets_topic, watch_s=WATCH_S)  # its group is not known
            assert worker.stop() is not None  # SIGTERM: Connect stops its tasks, which commit their positions
            at_stop = writer.written
            wait_until(lambda: writer.written >= at_stop + 2000, COPY_TIMEOUT_S, f"more records on {topic}")
            plan = take_over(config, "A", "B", apply=True, offsets_topic=offsets_topic, watch_s=WATCH_S)
        finally:
            writer.stop()
        assert not writer.errors
        assert plan.applied and plan.offsets_topic == offsets_topic
        assert all(p.committed is not None for p in plan.partitions), f"no MM2 position read from {offsets_topic}"

        run_caught_up(config, tmp_path / "state")
        bounds = {p.partition: p.duplicates for p in plan.partitions}
        assert copied_once_in_order(clusters, topic, remote, bounds) == (CONNECT_BACKLOG + writer.written, 0)
        assert plan.duplicates == 0  # the stopped tasks committed their last positions

        handed = hand_back(config, "A", "B", apply=True, offsets_topic=offsets_topic, watch_s=WATCH_S)
        assert handed.applied and all(p.position is not None for p in handed.partitions)
        copied = count_records(clusters.target, remote)
        produce(clusters.source, topic, records("after", 300, PARTITIONS))
        worker.start().wait_ready()  # its connectors' configs are in the cluster's config topic: they run again
        wait_until(lambda: count_records(clusters.target, remote) >= copied + 300, MM2_START_TIMEOUT_S,
                   f"MM2 on Connect to copy {topic} again")
        time.sleep(2)  # anything more MM2 would copy again
    finally:
        worker.close()
    assert count_records(clusters.target, remote) == copied + 300, "MM2 copied again what sparkmirror had copied"
    copied_once_in_order(clusters, topic, remote, bounds)


def _consume_and_commit(bootstrap: str, group: str, topic: str, per_partition: int) -> dict[int, int]:
    from .test_offsets_interop import commit_consumed

    return commit_consumed(bootstrap, group, topic, dict.fromkeys(range(PARTITIONS), per_partition))


def test_groups_fail_over_across_the_take_over_and_mm2_continues_after_a_hand_back(
        clusters, create_topic, running, tmp_path, unique):
    """MM2 copies and checkpoints group `before` (committed at the end of its copy, where MM2's newest sync makes
    its translation exact: MM2 keeps no older sync it read at start); sparkmirror takes over, copies on and
    checkpoints `after` (committed past the switch). MM2's Java client translates both to the record after the
    consumed ones. Then the way back: sparkmirror stops, hands back, and a restarted MM2 copies only the new
    records."""
    topic, before, after = f"takeover-groups-{unique}", f"before-{unique}", f"after-{unique}"
    remote = f"A.{topic}"
    create_topic("A", topic, PARTITIONS)
    produce(clusters.source, topic, records("first", 3000, PARTITIONS))
    text = mm2_properties(clusters.source, clusters.target, [topic], [before, after])
    config = tmp_path / "mm2.properties"
    config.write_text(text + trigger_settings("micro-batch"))

    def checkpointed(group: str, offsets: dict[int, int]) -> bool:
        """The group's checkpoints have its committed offsets, translated to the same offsets on B (the copy is
        whole and once, so a remote offset is its source offset)."""
        found = read_checkpoints(config, "A", "B", group)
        return {(c.topic, c.partition): (c.upstream_offset, c.downstream_offset) for c in found.values()} == {
            (remote, p): (o, o) for p, o in offsets.items()}

    with running_mm2(clusters.source, clusters.target, [topic], [before, after]):
        wait_until(lambda: count_records(clusters.target, remote) == 3000, COPY_TIMEOUT_S, f"MM2 to copy {topic}")
        committed_before = _consume_and_commit(clusters.source, before, topic, 1000)
        wait_until(lambda: checkpointed(before, committed_before), COPY_TIMEOUT_S, f"MM2's checkpoints of {before}")
    dry = CliRunner().invoke(cli, ["takeover", "--config", str(config), "--from", "A", "--to", "B"])
    assert dry.exit_code == 0, dry.output
    assert f"{topic}-0 -> {remote}: mm2 committed 1000, newest sync 999->999, remote end 1000: start at 1000 " \
           f"(mm2 commit), at most 0 copied again" in dry.output
    assert "dry run: nothing changed" in dry.output
    plan = take_over(config, "A", "B", apply=True, watch_s=WATCH_S)
    assert plan.duplicates == 0 and [p.start for p in plan.partitions] == [1000] * PARTITIONS

    produce(clusters.source, topic, records("second", 3000, PARTITIONS))
    committed_after = _consume_and_commit(clusters.source, after, topic, 1500)
    with running(config):
        wait_until(lambda: count_records(clusters.target, remote) == 6000, COPY_TIMEOUT_S,
                   f"sparkmirror to copy {topic}")
        wait_until(lambda: checkpointed(after, committed_after), COPY_TIMEOUT_S,
                   f"sparkmirror's checkpoints of {after}")
    # MM2's own client reads the same: each group resumes at its next record.
    for group, consumed in ((before, committed_before), (after, committed_after)):
        assert java_translate(clusters.target, "A", group) == {(remote, p): o for p, o in consumed.items()}, group

    handed = hand_back(config, "A", "B", apply=True, watch_s=WATCH_S)
    assert handed.applied and {p.position for p in handed.partitions} == {2000}
    produce(clusters.source, topic, records("third", 300, PARTITIONS))
    with running_mm2(clusters.source, clusters.target, [topic], [before, after]) as mm:
        wait_until(lambda: count_records(clusters.target, remote) >= 6300, COPY_TIMEOUT_S,
                   f"MM2 to copy {topic} again")
        time.sleep(2)  # anything more MM2 would copy again
        assert mm._watchdog is not None
        os.killpg(mm._watchdog.pgid, signal.SIGKILL)  # what it copied is checked below; no clean stop needed
    for p in range(PARTITIONS):
        source = [v for _, v in partition_values(clusters.source, topic, p)]
        assert [v for _, v in partition_values(clusters.target, remote, p)] == source, f"partition {p}"


def test_the_command_names_a_missing_offsets_topic_and_how_to_give_it(clusters, create_topic, tmp_path, unique):
    topic = f"takeover-cli-{unique}"
    create_topic("A", topic, 1)
    config = tmp_path / "mm2.properties"
    config.write_text(mm2_properties(clusters.source, clusters.target, [topic]))
    result = CliRunner().invoke(cli, ["takeover", "--config", str(config), "--from", "A", "--to", "B",
                                      "--offsets-topic", f"connect-offsets-{unique}"])
    assert result.exit_code == 1
    assert f"no topic 'connect-offsets-{unique}' on cluster 'B'" in result.output
    assert "--offsets-topic" in result.output
