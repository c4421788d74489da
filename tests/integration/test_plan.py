"""`sparkmirror plan` against two real clusters shows exactly what `run` then creates, and changes nothing."""

from __future__ import annotations

import re
import time

from click.testing import CliRunner
from confluent_kafka import TIMESTAMP_CREATE_TIME
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, ResourceType

from sparkmirror.cli.main import cli
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord
from sparkmirror.testing.records import produce


def topic_configs(bootstrap: str, topic: str) -> dict[str, str]:
    resource = ConfigResource(ResourceType.TOPIC, topic)
    admin = AdminClient({"bootstrap.servers": bootstrap})  # must outlive the future
    entries = admin.describe_configs([resource])[resource].result(timeout=30)
    return {k: e.value for k, e in entries.items() if e.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value}


def test_plan_lists_topics_and_names_that_run_then_creates(clusters, create_topic, mm2_properties, replicate,
                                                           unique):
    plain, compacted, grow, skipped = (f"{n}-{unique}" for n in ("orders", "ledger", "audit", "scratch"))
    create_topic("A", plain, 3)
    create_topic("A", compacted, 2, {"cleanup.policy": "compact", "retention.ms": "86400000",
                                     "min.insync.replicas": "1"})
    create_topic("A", grow, 4)
    create_topic("B", f"A.{grow}", 2)
    create_topic("A", skipped, 1)
    now = int(time.time() * 1000)
    for topic in (plain, compacted, grow):
        produce(clusters.source, topic, [KafkaRecord(0, -1, b"k", b"v", (), TIMESTAMP_CREATE_TIME, now)])
    topics = f"{plain}, {compacted}, audit-{unique}"
    path = mm2_properties(topics)

    result = CliRunner().invoke(cli, ["plan", str(path), "--clusters", "B"])

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert f"  {plain} (3 partitions) -> A.{plain}  [create: 3 partitions, replication.factor 1, " \
           f"configs: broker defaults]" in lines
    # min.insync.replicas is in MM2's config.properties.exclude default, so it is not copied
    assert f"  {compacted} (2 partitions) -> A.{compacted}  [create: 2 partitions, replication.factor 1, " \
           f"configs: cleanup.policy=compact, retention.ms=86400000]" in lines
    assert f"  {grow} (4 partitions) -> A.{grow}  [add partitions: 2 -> 4]" in lines
    assert "flow A->B: 3 topic(s) on A replicate to B" in lines
    assert skipped not in result.output
    target = ClusterAdmin("B", {"bootstrap.servers": clusters.target})
    before = target.topic_partitions()
    assert f"A.{plain}" not in before and f"A.{compacted}" not in before, "plan must not create topics"
    assert before[f"A.{grow}"] == 2, "plan must not add partitions"

    replicate(topics)

    after = target.topic_partitions()
    planned = {m.group(1): int(m.group(2)) for m in re.finditer(r"-> (\S+)  \[(?:create: |add partitions: \d+ -> )"
                                                                 r"(\d+)", result.output)}
    assert planned == {f"A.{plain}": 3, f"A.{compacted}": 2, f"A.{grow}": 4}
    assert {name: after[name] for name in planned} == planned
    assert topic_configs(clusters.target, f"A.{compacted}") == {"cleanup.policy": "compact",
                                                                "retention.ms": "86400000"}
    assert topic_configs(clusters.target, f"A.{plain}") == {}
