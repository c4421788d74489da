"""Everything under tests/integration needs real clusters (and a local Spark)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkmirror.config.mm2 import load_config
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import NewTopicSpec
from sparkmirror.runtime.supervisor import Supervisor


def pytest_collection_modifyitems(items):
    for item in items:
        if "/integration/" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture
def create_topic(clusters):
    def create(side: str, name: str, partitions: int) -> None:
        bootstrap = clusters.source if side == "A" else clusters.target
        for error in ClusterAdmin(side, {"bootstrap.servers": bootstrap}).create_topics(
                [NewTopicSpec(name, partitions, 1)]).values():
            if error:
                raise error
    return create


@pytest.fixture
def replicate(clusters, spark, tmp_path):
    """Run A->B with the given topics regex until the backlog is copied; returns the Supervisor."""
    def run(topics: str, extra: str = "") -> Supervisor:
        path: Path = tmp_path / "mm2.properties"
        path.write_text(f"clusters = A, B\nA.bootstrap.servers = {clusters.source}\n"
                        f"B.bootstrap.servers = {clusters.target}\nA->B.enabled = true\n"
                        f"A->B.topics = {topics}\nreplication.factor = 1\n{extra}")
        supervisor = Supervisor(load_config(path), tmp_path / "state", until_caught_up=True)
        try:
            supervisor.start()
            supervisor.wait()
        finally:
            supervisor.stop()
        return supervisor
    return run
