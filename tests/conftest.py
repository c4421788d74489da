"""Shared fixtures. Real clusters start once per session; every test uses unique names.

Set SPARKMIRROR_TEST_SOURCE_BOOTSTRAP and SPARKMIRROR_TEST_TARGET_BOOTSTRAP to use your own clusters.
Without them, two local KRaft clusters are started from the cached jars; if Java or the jars are
missing the integration tests fail (they never skip silently).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class ClusterPair:
    source: str  # bootstrap servers of the source cluster (alias A in tests)
    target: str  # bootstrap servers of the target cluster (alias B in tests)


@pytest.fixture(scope="session")
def clusters() -> Iterator[ClusterPair]:
    source = os.environ.get("SPARKMIRROR_TEST_SOURCE_BOOTSTRAP")
    target = os.environ.get("SPARKMIRROR_TEST_TARGET_BOOTSTRAP")
    if source and target:
        yield ClusterPair(source, target)
        return
    from sparkmirror.embedded.kafka_cluster import start_clusters

    a, b = start_clusters(["test-A", "test-B"], keep_logs=True)
    failed = False
    try:
        yield ClusterPair(a.bootstrap_servers, b.bootstrap_servers)
    except BaseException:
        failed = True
        raise
    finally:
        a.stop()
        b.stop()
        if not failed:
            import shutil

            for c in (a, b):
                if c.dir is not None:
                    shutil.rmtree(c.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def spark():
    from sparkmirror.pipeline.session import build_spark_session

    session = build_spark_session({"spark.master": "local[2,4]"})
    yield session
    session.stop()


@pytest.fixture
def unique() -> str:
    """A short unique suffix for topic, group and folder names."""
    return uuid.uuid4().hex[:8]
