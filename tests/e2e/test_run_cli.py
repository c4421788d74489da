"""`sparkmirror run` as an operator runs it (`sparkmirror demo`: test_wheel.py runs the README's, from the wheel)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter

from confluent_kafka import TIMESTAMP_CREATE_TIME

from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord, NewTopicSpec
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER, LocalKafkaCluster, free_port
from sparkmirror.testing.records import produce, read_all

from .conftest import cli_command

ONLY_OWN_TOPICS = "heartbeats.replication.enabled = false\n"  # shared clusters: see tests/integration

RECORDS = 30_000
PARTITIONS = 3
KILL_WINDOW_S = 180
CATCH_UP_S = 180
UNREACHABLE_LIMIT_S = 30


def write_config(path, source: str, target: str, topics: str, extra: str = "", own_topics_only: bool = True) -> str:
    """`own_topics_only`: leave the source's `heartbeats` topic out (shared clusters: other tests write it)."""
    path.write_text(f"clusters = A, B\nA.bootstrap.servers = {source}\nB.bootstrap.servers = {target}\n"
                    f"A->B.enabled = true\nA->B.topics = {topics}\n{SINGLE_BROKER}"
                    f"{ONLY_OWN_TOPICS if own_topics_only else ''}{extra}")
    return str(path)


def backlog(source: str, topic: str, partitions: int, records: int, tag: str) -> list[KafkaRecord]:
    """A new topic on `source` holding `records` records (key `k<i>`, value `<tag>-<i>`, round robin over its
    partitions, recent timestamps); returns them as sent."""
    created = ClusterAdmin("A", {"bootstrap.servers": source}).create_topics([NewTopicSpec(topic, partitions, 1)])
    assert created[topic] is None, created
    now = int(time.time() * 1000)
    sent = [KafkaRecord(i % partitions, -1, f"k{i}".encode(), f"{tag}-{i}".encode(), (), 0, now - records + i)
            for i in range(records)]
    assert produce(source, topic, sent) == records
    return sent


def copied(target: ClusterAdmin, topic: str, partitions: int = PARTITIONS) -> int:
    """Records in `topic` on `target` (0 before it exists), duplicates included."""
    if topic not in target.topic_partitions():
        return 0
    return sum(high - low for low, high in target.watermarks(topic, partitions).values())


def wait_for(predicate, timeout_s: float, what: str, proc=None) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"sparkmirror exited ({proc.returncode}) while waiting for {what}:\n"
                                 f"{proc.log_path.read_text()[-4000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.2)


def test_sigkill_mid_stream_then_restart_loses_nothing(clusters, start_cli, tmp_path, unique):
    topic = f"killed-{unique}"
    source_admin = ClusterAdmin("A", {"bootstrap.servers": clusters.source})
    target_admin = ClusterAdmin("B", {"bootstrap.servers": clusters.target})
    assert source_admin.create_topics([NewTopicSpec(topic, PARTITIONS, 1)])[topic] is None
    now_ms = int(time.time() * 1000)  # timestamps older than retention.ms would be deleted by the broker
    produce(clusters.source, topic, (KafkaRecord(i % PARTITIONS, -1, str(i).encode(), b"v" * 200,
                                                 (("seq", str(i).encode()),), TIMESTAMP_CREATE_TIME,
                                                 now_ms - RECORDS + i) for i in range(RECORDS)))
    config = write_config(tmp_path / "mm2.properties", clusters.source, clusters.target, topic,
                          "sparkmirror.max.offsets.per.trigger = 600\n")
    state = str(tmp_path / "state")

    first = start_cli("run", "--config", config, "--state-dir", state, log_name="first")
    wait_for(lambda: copied(target_admin, f"A.{topic}") > 0, KILL_WINDOW_S, "the first records on B", first)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    at_kill = copied(target_admin, f"A.{topic}")
    assert 0 < at_kill < RECORDS, f"the kill must land mid-stream, B had {at_kill} of {RECORDS}"

    second = start_cli("run", "--config", config, "--state-dir", state, log_name="second")
    expected = {(i % PARTITIONS, str(i).encode()) for i in range(RECORDS)}

    def on_b() -> Counter:
        target = read_all(clusters.target, f"A.{topic}", PARTITIONS)
        return Counter((p, r.key) for p, records in target.items() for r in records)

    # Counting records is not enough: the restart re-sends the uncommitted batch (duplicates).
    wait_for(lambda: copied(target_admin, f"A.{topic}") >= RECORDS and set(on_b()) >= expected,
             CATCH_UP_S, "every distinct record on B", second)
    target = read_all(clusters.target, f"A.{topic}", PARTITIONS)
    seen = Counter((p, r.key) for p, records in target.items() for r in records)
    assert set(seen) == expected, f"missing {len(expected - set(seen))}, unexpected {len(set(seen) - expected)}"
    duplicates = sum(n - 1 for n in seen.values())
    print(f"\nSIGKILL at {at_kill} of {RECORDS} records on B; after restart {duplicates} duplicates "
          f"(at-least-once)")
    for p, records in target.items():  # per partition, first occurrences stay in source order
        firsts = list(dict.fromkeys(int(r.key) for r in records))
        assert firsts == sorted(firsts), f"partition {p} out of order"

    os.killpg(second.pid, signal.SIGTERM)
    assert second.wait(timeout=60) == 0, second.log_path.read_text()[-3000:]


def test_unreachable_bootstrap_names_the_cluster_alias_quickly(clusters, tmp_path):
    dead = f"127.0.0.1:{free_port()}"
    config = write_config(tmp_path / "mm2.properties", clusters.source, dead, "anything")
    started = time.monotonic()
    result = subprocess.run(cli_command("run", "--config", config, "--state-dir", str(tmp_path / "s")),
                            capture_output=True, text=True, timeout=UNREACHABLE_LIMIT_S)
    elapsed = time.monotonic() - started
    assert result.returncode == 3, result.stderr
    assert f"cluster 'B' is unreachable at bootstrap.servers={dead}" in result.stderr
    assert "B.bootstrap.servers" in result.stderr
    assert "Traceback" not in result.stderr and "java." not in result.stderr
    assert elapsed < UNREACHABLE_LIMIT_S


def test_broken_properties_file_exits_2_naming_the_problem(tmp_path):
    path = tmp_path / "bad.properties"
    path.write_text("clusters = A, B\nA.bootstrap.servers = a:1\nA->C.enabled = true\n")
    result = subprocess.run(cli_command("run", "--config", str(path)), capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "B.bootstrap.servers: missing" in result.stderr
    assert "A->C.enabled: unknown cluster alias 'C'" in result.stderr
    assert "Traceback" not in result.stderr


REFRESH_S = 2


def test_a_one_way_run_does_not_restart_its_query_for_its_own_heartbeats_topic(start_cli, clusters, tmp_path,
                                                                                unique):
    """The flow replicates its source's `heartbeats` topic, which on a new source only this process writes (the
    heartbeat-only pair B->A). Created at its first beat, it appeared a second after the flow's first plan, so a
    topic refresh restarted the query (in Real-Time Mode every partition stalled for about a second)."""
    topic = f"once-{unique}"
    with LocalKafkaCluster(f"fresh-{unique}") as fresh:  # a source where no `heartbeats` topic exists yet
        backlog(fresh.bootstrap_servers, topic, PARTITIONS, 300, "once")
        target = ClusterAdmin("B", {"bootstrap.servers": clusters.target})
        config = write_config(tmp_path / "mm2.properties", fresh.bootstrap_servers, clusters.target, topic,
                              f"refresh.topics.interval.seconds = {REFRESH_S}\n"
                              f"replication.policy.separator = .{unique}.\n",  # remote topics of this test's own
                              own_topics_only=False)
        proc = start_cli("run", "--config", config, "--state-dir", str(tmp_path / "state"))
        remote_heartbeats = f"A.{unique}.heartbeats"
        wait_for(lambda: copied(target, f"A.{unique}.{topic}") == 300 and copied(target, remote_heartbeats, 1) > 0,
                 CATCH_UP_S, "the records and a heartbeat on B", proc)
        time.sleep(3 * REFRESH_S)  # refreshes that would find a new topic and restart the query
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, proc.log_path.read_text()[-3000:]
    plans = [line for line in proc.log_path.read_text().splitlines() if "replicating" in line and "topic(s)" in line]
    assert len(plans) == 1 and "(start)" in plans[0], plans
    assert f"heartbeats->{remote_heartbeats}" in plans[0], plans


def test_a_refused_record_is_one_log_line_per_attempt_and_nothing_is_written_twice(clusters, start_cli, tmp_path):
    """A record larger than its remote topic accepts, retried by Spark (4 task attempts a query) and by the flow
    (a new query after back-off): each attempt says so in one line naming the record, no stack trace, and the
    records before it are on the target once."""
    topic = f"refusal-{time.time_ns()}"
    remote = f"A.{topic}"
    assert ClusterAdmin("A", {"bootstrap.servers": clusters.source}).create_topics(
        [NewTopicSpec(topic, 1, 1)])[topic] is None
    target = ClusterAdmin("B", {"bootstrap.servers": clusters.target})
    assert target.create_topics([NewTopicSpec(remote, 1, 1, {"max.message.bytes": "2000"})])[remote] is None
    values = [f"small-{i}".encode() for i in range(5)] + [b"x" * 10_000] + [b"after"] * 5
    now = int(time.time() * 1000)
    produce(clusters.source, topic, [KafkaRecord(0, -1, None, v, (), TIMESTAMP_CREATE_TIME, now) for v in values])
    config = write_config(tmp_path / "mm2.properties", clusters.source, clusters.target, topic,
                          "sync.topic.configs.enabled = false\n")
    proc = start_cli("run", config, "--state-dir", str(tmp_path / "state"))
    flow_failed = f"flow A->B failed: record {topic}-0@5"
    wait_for(lambda: proc.log_path.read_text(errors="replace").count(flow_failed) >= 2, CATCH_UP_S,
             "the flow to fail, and fail again after its retry", proc)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
    log = proc.log_path.read_text(errors="replace")
    about = [line for line in log.splitlines() if f"{topic}-0@5" in line]
    tasks = [line for line in about if "WARN MirrorWriter: flow task failed: record" in line]
    failures = log.count(flow_failed)
    # Each query's task is tried 4 times (local[*,4]): one line each; a third query may have begun at the stop.
    assert 4 * failures <= len(tasks) <= 4 * (failures + 1), "\n".join(about)
    # The rest are sparkmirror's own lines (the flow's failure, its retry, the status at stop); none of Spark's.
    others = [line for line in about if line not in tasks]
    assert all(" sparkmirror.runtime." in line or line.startswith("flow A->B: ") for line in others), others
    assert "\tat " not in log and "RecordPathException" not in log, log[-4000:]
    assert [r.value for r in read_all(clusters.target, remote, 1)[0]] == values[:5]
