"""Taking over a flow from a real MM2 (issue 36): MM2 copies while records are written, is stopped (SIGTERM, or
kill -9), and sparkmirror continues where MM2's Connect offsets and offset syncs say, with no record lost and no
more copied twice than the plan announced."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.records import read_topic
from sparkmirror.offsets.connect_offsets import (
    SOURCE_CONNECTOR,
    decode_source_offset,
    dedicated_offsets_topic,
    next_offsets,
)
from sparkmirror.takeover import TakeoverRefused, take_over
from sparkmirror.testing.mirror_maker import LocalMirrorMaker
from sparkmirror.testing.records import produce

from .conftest import SteadyProducer, count_records, partition_values, records, trigger_settings, wait_until
from .mm2_interop import MM2_HEAP, MM2_START_TIMEOUT_S, mm2_properties

PARTITIONS = 3
BACKLOG = 160_000
WRITTEN_ON = 40_000  # by a producer running through MM2's copy, its stop and the take-over
COPY_TIMEOUT_S = 180.0


def _config(tmp_path: Path, source: str, target: str, topic: str) -> Path:
    """One file for both: MM2 with its default offset.lag.max (sparse syncs) and its worker's offset flush every
    5 s (a worker setting: `B.`), so a kill -9 leaves records on the target past MM2's last commit."""
    text = (mm2_properties(source, target, [topic]).replace("offset.lag.max = 0\n", "offset.lag.max = 100\n")
            + "B.offset.flush.interval.ms = 5000\n")
    path = tmp_path / "mm2.properties"
    path.write_text(text + trigger_settings("micro-batch"))
    return path


def mm2_committed(bootstrap: str, topic: str) -> dict[int, int]:
    """Partition -> the next offset MM2 committed for `topic` in its dedicated-mode offsets topic on B."""
    offsets = dedicated_offsets_topic("A")
    partitions = ClusterAdmin("B", {"bootstrap.servers": bootstrap}).topic_partitions().get(offsets)
    if partitions is None:
        return {}
    marks = ClusterAdmin("B", {"bootstrap.servers": bootstrap}).watermarks(offsets, partitions)
    entries = [e for r in read_topic({"bootstrap.servers": bootstrap}, offsets, marks)
               if (e := decode_source_offset(r.key, r.value)) is not None]
    return {p: o for (t, p), o in next_offsets(entries, SOURCE_CONNECTOR, "A").items() if t == topic}


@pytest.mark.parametrize("stop", ["sigterm", "kill"])
def test_sparkmirror_continues_a_stopped_mm2s_copy(clusters, create_topic, run_caught_up, tmp_path, unique, stop):
    topic = f"takeover-{stop}-{unique}"
    remote = f"A.{topic}"
    create_topic("A", topic, PARTITIONS)
    produce(clusters.source, topic, records("backlog", BACKLOG, PARTITIONS))
    config = _config(tmp_path, clusters.source, clusters.target, topic)
    mm = LocalMirrorMaker(config.read_text(), clusters=("B",), name=f"mm2-takeover-{stop}", heap=MM2_HEAP).start()
    writer = SteadyProducer(clusters.source, topic, PARTITIONS, per_round=2000)
    try:
        wait_until(lambda: count_records(clusters.target, remote) >= BACKLOG // 2, MM2_START_TIMEOUT_S,
                   f"MM2 to copy half of {topic}")
        if stop == "sigterm":
            with pytest.raises(TakeoverRefused, match="being written"):
                take_over(config, "A", "B")  # MM2 still copies: refused, nothing committed
            assert mm.stop() is not None
        else:  # after MM2's first commit (every 5 s), so that it has copied past a commit when killed
            wait_until(lambda: len(mm2_committed(clusters.target, topic)) == PARTITIONS, MM2_START_TIMEOUT_S,
                       f"MM2 to commit positions of {topic}")
            assert mm.process is not None and mm._watchdog is not None
            os.killpg(mm._watchdog.pgid, signal.SIGKILL)
            mm.process.wait(30)
        wait_until(lambda: writer.written >= WRITTEN_ON, COPY_TIMEOUT_S, f"{WRITTEN_ON} more records on {topic}")
        plan = take_over(config, "A", "B", apply=True)
    finally:
        writer.stop()
        mm.keep_logs = mm.keep_logs or bool(os.environ.get("KEEP_MM2_LOGS"))
        mm.stop()
    assert not writer.errors
    assert plan.applied and {(p.topic, p.partition) for p in plan.partitions} == {(topic, p) for p in range(3)}
    assert all(p.committed is not None for p in plan.partitions), "MM2 committed no position"

    run_caught_up(config, tmp_path / "state")

    again = read = 0
    for p in plan.partitions:
        source = [v for _, v in partition_values(clusters.source, topic, p.partition)]
        read += len(source)
        copied = [v for _, v in partition_values(clusters.target, remote, p.partition)]
        first = list(dict.fromkeys(copied))  # each value once, where it first arrived
        assert first == source, f"partition {p.partition}: the copy lost or reordered records"
        again += len(copied) - len(first)
        assert len(copied) - len(first) <= p.duplicates, (
            f"partition {p.partition}: {len(copied) - len(first)} copied twice, the plan said at most "
            f"{p.duplicates}")
    assert read == BACKLOG + writer.written
    if stop == "sigterm":  # a clean stop commits and syncs its last record: nothing is copied twice
        assert again == 0 and plan.duplicates == 0
