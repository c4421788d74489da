"""Shared fixtures. Real clusters start once per session; every test uses unique names.

Set SPARKMIRROR_TEST_SOURCE_BOOTSTRAP and SPARKMIRROR_TEST_TARGET_BOOTSTRAP to use your own clusters.
Without them, two local KRaft clusters are started from the cached jars; if Java or the jars are
missing the integration tests fail (they never skip silently). Tests that need a SASL_PLAINTEXT (SCRAM-SHA-512)
cluster get a third, started on first use; SPARKMIRROR_TEST_SASL_BOOTSTRAP, SPARKMIRROR_TEST_SASL_USERNAME and
SPARKMIRROR_TEST_SASL_PASSWORD name one of your own instead.
"""

from __future__ import annotations

import os
import secrets
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
    from sparkmirror.testing.kafka_cluster import start_clusters

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


@dataclass(frozen=True)
class SaslCluster:
    bootstrap: str  # a SASL_PLAINTEXT listener accepting SCRAM-SHA-512
    username: str
    password: str

    def librdkafka_settings(self, password: str | None = None) -> dict[str, str]:
        """confluent-kafka settings for this cluster, as `username` (with another password if given)."""
        return {"bootstrap.servers": self.bootstrap, "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": self.username,
                "sasl.password": self.password if password is None else password}


@pytest.fixture(scope="session")
def sasl_cluster() -> Iterator[SaslCluster]:
    """A cluster whose clients must authenticate; only started when a test asks for it."""
    bootstrap = os.environ.get("SPARKMIRROR_TEST_SASL_BOOTSTRAP")
    if bootstrap:
        yield SaslCluster(bootstrap, os.environ["SPARKMIRROR_TEST_SASL_USERNAME"],
                          os.environ["SPARKMIRROR_TEST_SASL_PASSWORD"])
        return
    from sparkmirror.testing.kafka_cluster import LocalKafkaCluster

    username, password = "mirror", f"pw-{secrets.token_urlsafe(12)}"
    cluster = LocalKafkaCluster("test-sasl", keep_logs=True, sasl_users={username: password}).start()
    failed = False
    try:
        yield SaslCluster(cluster.bootstrap_servers, username, password)
    except BaseException:
        failed = True
        raise
    finally:
        cluster.stop()
        if not failed and cluster.dir is not None:
            import shutil

            shutil.rmtree(cluster.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def more_clusters() -> Iterator[list[str]]:
    """Four more local clusters (bootstrap servers) for topologies beyond two; started on first use."""
    from sparkmirror.testing.kafka_cluster import start_clusters

    started = start_clusters(["test-C", "test-D", "test-E", "test-F"], keep_logs=True)
    try:
        yield [c.bootstrap_servers for c in started]
    finally:
        for c in started:
            c.stop()


@pytest.fixture(scope="session")
def spark():
    from sparkmirror.pipeline.session import build_spark_session

    # Enough slots for the Real-Time Mode tests (a long task per source partition); micro-batch flows still use
    # at most tasks.max (default: the cores) tasks per batch.
    session = build_spark_session({"spark.master": "local[12,4]"})
    yield session
    session.stop()


@pytest.fixture
def unique() -> str:
    """A short unique suffix for topic, group and folder names."""
    return uuid.uuid4().hex[:8]
