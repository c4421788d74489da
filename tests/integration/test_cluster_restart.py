"""LocalKafkaCluster.restart(): a crashed broker comes back on the same folder and ports with its data."""

from __future__ import annotations

import pytest

from sparkmirror.errors import EmbeddedSetupError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import NewTopicSpec
from sparkmirror.testing.kafka_cluster import LocalKafkaCluster
from sparkmirror.testing.records import produce, read_all

from .conftest import records


def values(bootstrap: str, topic: str) -> list[bytes | None]:
    return [r.value for r in read_all(bootstrap, topic, 1)[0]]


def test_killed_cluster_restarts_with_its_records_and_takes_new_writes(unique):
    cluster = LocalKafkaCluster(f"test-restart-{unique}").start()
    try:
        bootstrap, topic = cluster.bootstrap_servers, f"restart-{unique}"
        error = ClusterAdmin("R", {"bootstrap.servers": bootstrap}).create_topics(
            [NewTopicSpec(topic, 1, 1, {})])[topic]
        assert error is None
        produce(bootstrap, topic, records("before", 5))

        cluster.kill()
        cluster.restart()

        assert cluster.bootstrap_servers == bootstrap
        assert values(bootstrap, topic) == [f"before-{i}".encode() for i in range(5)]
        produce(bootstrap, topic, records("after", 3))
        assert values(bootstrap, topic)[5:] == [f"after-{i}".encode() for i in range(3)]
    finally:
        cluster.stop()
    assert cluster.dir is not None and not cluster.dir.exists()


def test_restart_without_a_folder_says_to_start():
    with pytest.raises(EmbeddedSetupError, match="cannot restart.*start()"):
        LocalKafkaCluster("never-started").restart()
