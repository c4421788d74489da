"""Hot reload of the properties file while flows run: the watcher, `request_reload()`, valid and invalid edits."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER
from sparkmirror.testing.records import produce, read_all

from .conftest import SteadyProducer, count_records, records, wait_until

FLOW = "A->B"
FAST = "refresh.topics.interval.seconds = 1\nsync.topic.configs.enabled = false\nemit.heartbeats.enabled = false\n"
PICKUP_DEADLINE_S = 90.0  # the watcher notices within two polls (1 s each); the flow then restarts its query
TRANSFER_TIMEOUT_S = 90.0
REFRESH_S = 1  # refresh.topics.interval.seconds in FAST


def properties_text(clusters, flow_lines: str) -> str:
    return (f"clusters = A, B\nA.bootstrap.servers = {clusters.source}\nB.bootstrap.servers = {clusters.target}\n"
            f"{flow_lines}{SINGLE_BROKER}{FAST}")


def rewrite(path: Path, text: str) -> float:
    """Replace the file's content atomically, as an editor or a config-management tool does; returns when."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return time.monotonic()


def keeps_flowing(clusters, topic: str, producer: SteadyProducer, what: str) -> None:
    """Records written from two refreshes after now on reach the target: the flow still runs, and whatever a
    rejected edit would wrongly change (a restart, a stop) has had two refreshes to show."""
    time.sleep(2 * REFRESH_S)
    mark = producer.written + producer.per_round  # a round in flight now may have begun earlier
    wait_until(lambda: count_records(clusters.target, f"A.{topic}") > mark, TRANSFER_TIMEOUT_S, what)


def errors_logged(caplog, *fragments: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.ERROR and all(f in r.getMessage() for f in fragments)]


def test_edits_widen_a_running_flow_invalid_ones_are_rejected_and_disabling_stops_it(
        clusters, create_topic, running, tmp_path, unique, caplog):
    a, b = f"reload-{unique}-a", f"reload-{unique}-b"
    create_topic("A", a, 2)
    create_topic("A", b, 1)
    produce(clusters.source, b, records("b", 50))
    path = tmp_path / "mm2.properties"
    path.write_text(properties_text(clusters, f"{FLOW}.enabled = true\n{FLOW}.topics = {a}\n"))
    producer = SteadyProducer(clusters.source, a, 2, per_round=4)
    try:
        with caplog.at_level(logging.INFO, logger="sparkmirror"), running(path, watch=True) as supervisor:
            wait_until(lambda: count_records(clusters.target, f"A.{a}") > 0, TRANSFER_TIMEOUT_S, "topic a to flow")
            assert f"A.{b}" not in ClusterAdmin("B", {"bootstrap.servers": clusters.target}).topic_partitions()

            # A valid edit: widen the topics; b joins the running flow.
            edited_at = rewrite(path, properties_text(clusters, f"{FLOW}.enabled = true\n"
                                                                f"{FLOW}.topics = reload-{unique}-.*\n"))
            wait_until(lambda: count_records(clusters.target, f"A.{b}") > 0, PICKUP_DEADLINE_S,
                       "the first record of b after widening the topics")
            pickup_s = time.monotonic() - edited_at
            wait_until(lambda: count_records(clusters.target, f"A.{b}") == 50, TRANSFER_TIMEOUT_S, "all of b")
            runner = supervisor.flows[FLOW]
            assert b in runner.assignment and a in runner.assignment
            assert runner.failure is None
            restart = runner.restarts[-1]
            print(f"\nhot reload: first record of b on the target {pickup_s:.1f} s after the edit (watcher poll "
                  f"1 s); query restart: stop {restart.stopped_s:.2f} s + start {restart.started_s:.2f} s")

            # Invalid edits: each is rejected and logged; the flow keeps running with the last good config.
            restarts, assignment = len(runner.restarts), dict(runner.assignment)
            for flow_lines, problem in ((f"{FLOW}.enabled = true\n{FLOW}.topics = [unclosed\n", "[unclosed"),
                                        (f"{FLOW}.enabled = true\n{FLOW}.topics = reload-{unique}-.*\n"
                                         f"A->C.enabled = true\n", "'C'")):
                rewrite(path, properties_text(clusters, flow_lines))
                wait_until(lambda p=problem: errors_logged(caplog, "rejected", p), PICKUP_DEADLINE_S,
                           f"the rejection naming {problem} to be logged at ERROR")
                keeps_flowing(clusters, a, producer, "topic a to keep flowing after an invalid edit")
                assert supervisor.flows[FLOW] is runner and runner.failure is None
                assert len(runner.restarts) == restarts, "a rejected edit must not restart the flow"
                assert runner.assignment == assignment
            print(f"rejections logged: {errors_logged(caplog, 'rejected')}")

            # Every record of a arrived exactly once, across the restart the widening caused.
            written = producer.stop()
            wait_until(lambda: count_records(clusters.target, f"A.{a}") >= written, TRANSFER_TIMEOUT_S,
                       "every record of a")
            time.sleep(1)
            assert count_records(clusters.target, f"A.{a}") == written, "no record of a may be duplicated"
            values = [r.value for rs in read_all(clusters.target, f"A.{a}", 2).values() for r in rs]
            assert len(set(values)) == len(values) == written

            # A valid edit disabling the flow stops it.
            rewrite(path, properties_text(clusters, f"{FLOW}.enabled = false\n{FLOW}.topics = reload-{unique}-.*\n"))
            wait_until(lambda: FLOW not in supervisor.flows, PICKUP_DEADLINE_S, "the disabled flow to stop")
            wait_until(lambda: runner.query is None, 60, "the disabled flow's query to stop")  # popped, then stopped
    finally:
        producer.stop()


def test_request_reload_applies_an_edit_without_the_file_watcher(clusters, create_topic, running, tmp_path, unique,
                                                                  caplog):
    a, c = f"reload-{unique}-a", f"reload-{unique}-c"
    create_topic("A", a, 1)
    create_topic("A", c, 1)
    produce(clusters.source, a, records("a", 10))
    produce(clusters.source, c, records("c", 20))
    path = tmp_path / "mm2.properties"
    path.write_text(properties_text(clusters, f"{FLOW}.enabled = true\n{FLOW}.topics = {a}\n"))
    with caplog.at_level(logging.INFO, logger="sparkmirror"), running(path, watch=True) as supervisor:
        wait_until(lambda: count_records(clusters.target, f"A.{a}") == 10, TRANSFER_TIMEOUT_S, "topic a")
        # Only request_reload (what SIGHUP calls) may apply the edit: stop the polling watcher first.
        supervisor.hot_reload.stop_watching()
        rewrite(path, properties_text(clusters, f"{FLOW}.enabled = true\n{FLOW}.topics = {a}, {c}\n"))
        time.sleep(3)  # longer than the watcher would need
        assert c not in supervisor.flows[FLOW].assignment, "nothing may apply the edit before request_reload"

        requested_at = time.monotonic()
        supervisor.request_reload()
        wait_until(lambda: c in supervisor.flows[FLOW].assignment, 30, "request_reload to apply the edit")
        wait_until(lambda: count_records(clusters.target, f"A.{c}") == 20, TRANSFER_TIMEOUT_S, "topic c")
        print(f"\nrequest_reload: topic c's records on the target {time.monotonic() - requested_at:.1f} s after "
              f"the request")
        assert supervisor.flows[FLOW].failure is None
    assert any(f"flow {FLOW}: topics changed" in r.getMessage() and "applied live" in r.getMessage()
               for r in caplog.records), "the applied change must be logged"
    assert count_records(clusters.target, f"A.{a}") == 10, "the restart must not copy a again"


def test_turning_checkpoints_on_while_running_starts_them(clusters, create_topic, running, tmp_path, unique):
    from sparkmirror import client

    from .conftest import commit

    topic, group = f"reload-cp-{unique}", f"g-{unique}"
    create_topic("A", topic, 1)
    produce(clusters.source, topic, records(unique, 20))
    path = tmp_path / "mm2.properties"
    flow = f"{FLOW}.enabled = true\n{FLOW}.topics = {topic}\n"
    path.write_text(properties_text(clusters, flow + "emit.checkpoints.enabled = false\n"))
    with running(path, watch=True):
        wait_until(lambda: count_records(clusters.target, f"A.{topic}") == 20, TRANSFER_TIMEOUT_S, "replication")
        commit(clusters.source, group, {(topic, 0): 11})
        rewrite(path, properties_text(clusters, flow + "emit.checkpoints.interval.seconds = 1\n"))
        got = wait_until(lambda: client.read_checkpoints(path, "A", "B", group), PICKUP_DEADLINE_S,
                         "a checkpoint after checkpoints were turned on")
        assert [(c.topic, c.upstream_offset, c.downstream_offset) for c in got.values()] == [(f"A.{topic}", 11, 11)]


def test_unreadable_edits_and_a_deleted_file_are_rejected_while_records_keep_flowing(
        clusters, create_topic, running, tmp_path, unique, caplog):
    a, b = f"reload-bad-{unique}-a", f"reload-bad-{unique}-b"
    create_topic("A", a, 2)
    create_topic("A", b, 1)
    produce(clusters.source, b, records("b", 30))
    path = tmp_path / "mm2.properties"
    good = properties_text(clusters, f"{FLOW}.enabled = true\n{FLOW}.topics = {a}\n")
    path.write_text(good)
    flow_line = good.index(f"{FLOW}.enabled")
    broken = [  # (bytes written over the file, None: the file deleted), what the rejection names
        (b"\x89PNG\r\n\x1a\n\x00\xff\xfe" + os.urandom(64), "not UTF-8 text"),
        (b"lorem ipsum dolor sit amet\n%%% ::: ===\n", "clusters: missing"),
        (good.encode()[:flow_line + len(f"{FLOW}.ena")], "looks cut off mid-write"),
        (None, "No such file or directory"),
    ]
    producer = SteadyProducer(clusters.source, a, 2, per_round=4)
    try:
        with caplog.at_level(logging.INFO, logger="sparkmirror"), running(path, watch=True) as supervisor:
            wait_until(lambda: count_records(clusters.target, f"A.{a}") > 0, TRANSFER_TIMEOUT_S, "topic a to flow")
            runner = supervisor.flows[FLOW]
            restarts, assignment = len(runner.restarts), dict(runner.assignment)
            for content, problem in broken:
                if content is None:
                    path.unlink()
                else:
                    tmp = path.with_name(path.name + ".tmp")
                    tmp.write_bytes(content)
                    os.replace(tmp, path)
                [rejection] = wait_until(lambda p=problem: errors_logged(caplog, "rejected", p), PICKUP_DEADLINE_S,
                                         f"the rejection naming {problem!r} to be logged at ERROR")
                assert str(path) in rejection and "previous configuration keeps running" in rejection
                keeps_flowing(clusters, a, producer, f"topic a to keep flowing after the edit rejected for {problem!r}")
                assert supervisor.flows[FLOW] is runner and runner.failure is None
                assert len(runner.restarts) == restarts and runner.assignment == assignment
            print(f"\nrejections logged: {errors_logged(caplog, 'rejected')}")

            # The file comes back, valid and widened: the loop that rejected the broken ones applies it.
            rewrite(path, properties_text(clusters, f"{FLOW}.enabled = true\n{FLOW}.topics = reload-bad-{unique}-.*\n"))
            wait_until(lambda: count_records(clusters.target, f"A.{b}") == 30, PICKUP_DEADLINE_S + TRANSFER_TIMEOUT_S,
                       "topic b, added by the file re-created after its deletion")
            assert supervisor.flows[FLOW].failure is None
            written = producer.stop()
            wait_until(lambda: count_records(clusters.target, f"A.{a}") >= written, TRANSFER_TIMEOUT_S,
                       "every record of a")
    finally:
        producer.stop()


def test_an_edit_while_a_flow_waits_for_its_retry_keeps_the_retry(clusters, create_topic, running, tmp_path,
                                                                   unique):
    """A flow failed (the target refuses a record) and waits for its retry; an edit that changes it without a
    restart (a wider topics regex) must not drop that retry: once the target accepts the record, it copies."""
    from confluent_kafka import TIMESTAMP_CREATE_TIME

    from sparkmirror.control.configs import ConfigAlteration
    from sparkmirror.model import KafkaRecord, NewTopicSpec

    topic = f"retry-{unique}-a"
    create_topic("A", topic, 1)
    target = ClusterAdmin("B", {"bootstrap.servers": clusters.target})
    remote = f"A.{topic}"
    assert target.create_topics([NewTopicSpec(remote, 1, 1, {"max.message.bytes": "2000"})])[remote] is None
    now = int(time.time() * 1000)
    values = [f"r{i}".encode() * (2_000 if i == 3 else 1) for i in range(6)]
    produce(clusters.source, topic, [KafkaRecord(0, -1, None, v, (), TIMESTAMP_CREATE_TIME, now) for v in values])
    path = tmp_path / "mm2.properties"
    def text(topics: str) -> str:  # refresh every 600 s: only the retry can start the failed flow again
        return properties_text(clusters, f"{FLOW}.enabled = true\n{FLOW}.topics = {topics}\n").replace(
            "refresh.topics.interval.seconds = 1", "refresh.topics.interval.seconds = 600")

    path.write_text(text(topic))
    with running(path, watch=True) as supervisor:
        wait_until(lambda: supervisor.flows[FLOW].failure is not None, TRANSFER_TIMEOUT_S, "the flow to fail")
        rewrite(path, text(f"retry-{unique}-.*"))
        wait_until(lambda: f"retry-{unique}-.*" in str(supervisor.flows[FLOW].flow.topics), PICKUP_DEADLINE_S,
                   "the edit to be applied")
        alteration = ConfigAlteration("max.message.bytes", "SET", "50000")
        assert target.alter_topic_configs({remote: [alteration]}) == {remote: None}
        wait_until(lambda: {r.value for r in read_all(clusters.target, remote, 1)[0]} == set(values),
                   TRANSFER_TIMEOUT_S, "the retry to copy every record")
        assert supervisor.flows[FLOW].failure is None
