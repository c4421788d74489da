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
    def create(side: str, name: str, partitions: int, configs: dict[str, str] | None = None) -> None:
        bootstrap = clusters.source if side == "A" else clusters.target
        for error in ClusterAdmin(side, {"bootstrap.servers": bootstrap}).create_topics(
                [NewTopicSpec(name, partitions, 1, configs or {})]).values():
            if error:
                raise error
    return create


@pytest.fixture
def mm2_properties(clusters, tmp_path):
    """Write an A->B properties file for the test clusters replicating `topics`; returns its path."""
    def write(topics: str, extra: str = "") -> Path:
        path: Path = tmp_path / "mm2.properties"
        path.write_text(f"clusters = A, B\nA.bootstrap.servers = {clusters.source}\n"
                        f"B.bootstrap.servers = {clusters.target}\nA->B.enabled = true\n"
                        f"A->B.topics = {topics}\nreplication.factor = 1\n{extra}")
        return path
    return write


@pytest.fixture
def run_caught_up(spark):
    """Run the enabled flows of a properties file until their backlog is copied; returns the Supervisor."""
    def run(path: Path, state_dir: Path) -> Supervisor:
        supervisor = Supervisor(load_config(path), state_dir, until_caught_up=True)
        try:
            supervisor.start()
            supervisor.wait()
        finally:
            supervisor.stop()
        return supervisor
    return run


@pytest.fixture
def replicate(mm2_properties, run_caught_up, tmp_path):
    """Run A->B with the given topics regex until the backlog is copied; returns the Supervisor."""
    def run(topics: str, extra: str = "") -> Supervisor:
        return run_caught_up(mm2_properties(topics, extra), tmp_path / "state")
    return run
