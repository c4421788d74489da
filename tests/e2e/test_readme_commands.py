"""The README's commands for your own clusters, run as written against real clusters.

The README's blocks marked `<!-- commands: run by tests/e2e/test_readme_commands.py -->` are read from README.md
and each line runs in a shell, in a folder holding the README's example file (its bootstrap servers pointed at the
session's clusters, its topics at this test's own), so an edit of the README is what is tested.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from confluent_kafka.admin import AdminClient
from tests.readme_blocks import marked_blocks

from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.groups import ConsumerGroups
from sparkmirror.model import KafkaRecord, NewTopicSpec
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER
from sparkmirror.testing.records import commit_offsets, produce

from .test_run_cli import wait_for

README = Path(__file__).resolve().parents[2] / "README.md"
MARKER = "<!-- commands: run by tests/e2e/test_readme_commands.py -->"
RECORDS, PARTITIONS = 600, 3
GROUP_AT = {0: 50, 1: 120, 2: 7}  # the group's committed offsets on the source, per partition
COMMAND_S = 180


def example_file(text: str) -> str:
    """The README's example properties block."""
    found = re.search(r"```properties\n(.*?)```", text, re.S)
    assert found, "README.md has no properties block"
    return found.group(1)


def test_the_readmes_commands_run_as_written(clusters, tmp_path, unique):
    text = README.read_text()
    commands = [line for block in marked_blocks(text, MARKER) for line in block]
    assert [shlex.split(c)[:2] for c in commands] == [
        ["sparkmirror", "validate"], ["sparkmirror", "plan"], ["sparkmirror", "run"], ["sparkmirror", "status"],
        ["sparkmirror", "verify"], ["sparkmirror", "failover"]], commands
    topic = f"readme-{unique}"
    properties = example_file(text)
    properties = re.sub(r"^primary\.bootstrap\.servers = .*$", f"primary.bootstrap.servers = {clusters.source}",
                        properties, flags=re.M)
    properties = re.sub(r"^backup\.bootstrap\.servers = .*$", f"backup.bootstrap.servers = {clusters.target}",
                        properties, flags=re.M)
    properties = re.sub(r"^primary->backup\.topics = .*$", f"primary->backup.topics = {topic}", properties,
                        flags=re.M)
    # single-broker test clusters; the shared source's `heartbeats` is other tests' (see test_run_cli)
    properties = properties.replace("replication.factor = 3", "")
    (tmp_path / "mm2.properties").write_text(properties + SINGLE_BROKER + "heartbeats.replication.enabled = false\n"
                                             "emit.checkpoints.interval.seconds = 1\n")

    group = re.search(r"--group (\S+)", commands[-1]).group(1)
    source = ClusterAdmin("primary", {"bootstrap.servers": clusters.source})
    assert source.create_topics([NewTopicSpec(topic, PARTITIONS, 1)])[topic] is None
    AdminClient({"bootstrap.servers": clusters.source}).delete_consumer_groups([group])  # a run before this one's
    time.sleep(1)
    produce(clusters.source, topic, (KafkaRecord(i % PARTITIONS, -1, f"k{i}".encode(), f"v{i}".encode(),
                                                 (("h", b"x"),), 0, int(time.time() * 1000))
                                     for i in range(RECORDS)))
    commit_offsets(clusters.source, group, {(topic, p): o for p, o in GROUP_AT.items()})

    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    validate, plan, run, status, verify, failover = commands

    def shell(line: str) -> str:
        result = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True,
                                timeout=COMMAND_S)
        output = result.stdout[-3000:] + result.stderr[-3000:]
        assert result.returncode == 0, f"{line}: exit {result.returncode}\n{output}"
        return result.stdout

    assert "primary->backup" in shell(validate)
    assert f"primary.{topic}" in shell(plan)

    log = open(tmp_path / "run.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(["bash", "-c", f"exec {run}"], cwd=tmp_path, env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    proc.log_path = tmp_path / "run.log"  # type: ignore[attr-defined]
    try:
        remote = ClusterAdmin("backup", {"bootstrap.servers": clusters.target})
        wait_for(lambda: sum(h - lo for lo, h in remote.watermarks(f"primary.{topic}", PARTITIONS).values())
                 == RECORDS if f"primary.{topic}" in remote.topic_partitions() else False, COMMAND_S,
                 "the copy", proc)
        port = re.search(r"--metrics-port (\d+)", run).group(1)
        wait_for(lambda: f'topic="primary.{topic}"' in _scrape(port), 30, "the copy's metrics", proc)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, proc.log_path.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()

    assert "caught up" in shell(status)
    shell(verify)  # exit 0: every copy whole (4 names a difference)
    shell(failover)
    committed = ConsumerGroups("backup", {"bootstrap.servers": clusters.target}).committed(
        [group], [(f"primary.{topic}", p) for p in range(PARTITIONS)]).get(group, {})
    assert {p: offset for (_, p), (offset, _) in committed.items()} == GROUP_AT  # exact: the copy kept offsets


def _scrape(port: str) -> str:
    try:
        with urllib.request.urlopen(f"http://localhost:{port}/metrics", timeout=5) as response:
            return response.read().decode()
    except OSError:
        return ""
