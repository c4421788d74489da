"""Secrets never appear while flows run (issue 16, item 5): logs at DEBUG, librdkafka's own included, `plan`,
`status --json`, `/metrics` and `/api/status` of a running process, and a refused login.

The source is the SCRAM cluster, its password read through a config provider: it reaches librdkafka and Spark's
Java consumer. The PLAINTEXT target carries canaries, inline and from the env provider, in settings that its
listener ignores (TLS and SASL keys on PLAINTEXT) and one that is no Kafka setting at all: every client of the
target, the JVM writer's producer too, is given them.
"""

from __future__ import annotations

import json
import logging
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from sparkmirror.cli.exit_codes import ExitStatus
from sparkmirror.cli.main import cli
from sparkmirror.config.mm2 import load_config
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.produce import AcknowledgedProducer, Message
from sparkmirror.model import NewTopicSpec
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER
from sparkmirror.web.server import MetricsServer

from .conftest import ONLY_OWN_TOPICS, count_records, trigger_settings, wait_until

CANARY = "S3cr3t-canary"
RECORDS = 200
REPLICATED_S = 120
ENV = {"MIRROR_TRUSTSTORE_PASSWORD": f"{CANARY}-env-truststore"}


def mm2_file(folder: Path, sasl_cluster, target: str, topic: str, password: str) -> Path:
    (folder / "secrets.properties").write_text(f"password = {password}\n")
    path = folder / "mm2.properties"
    path.write_text(
        "config.providers = file, env\n"
        "config.providers.file.class = org.apache.kafka.common.config.provider.FileConfigProvider\n"
        "config.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider\n"
        "clusters = A, B\n"
        f"A.bootstrap.servers = {sasl_cluster.bootstrap}\n"
        "A.security.protocol = SASL_PLAINTEXT\n"
        "A.sasl.mechanism = SCRAM-SHA-512\n"
        "A.sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{sasl_cluster.username}" password="${{file:{folder}/secrets.properties:password}}";\n'
        f"A.ssl.keystore.password = {CANARY}-source-keystore\n"
        f"B.bootstrap.servers = {target}\n"
        f"B.ssl.key.password = {CANARY}-inline-key\n"
        "B.ssl.truststore.password = ${env:MIRROR_TRUSTSTORE_PASSWORD}\n"
        "B.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="mirror" password="{CANARY}-inline-jaas";\n'
        f"B.producer.basic.auth.user.info = mirror:{CANARY}-basic-auth\n"
        "A->B.enabled = true\n"
        f"A->B.topics = {topic}\n"
        "emit.checkpoints.interval.seconds = 1\n"
        "emit.heartbeats.interval.seconds = 1\n"
        "sparkmirror.measure.lag.interval.seconds = 1\n"
        f"{SINGLE_BROKER}{ONLY_OWN_TOPICS}{trigger_settings('micro-batch')}")
    return path


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch):
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="sparkmirror")
    caplog.set_level(logging.DEBUG, logger="sparkmirror.librdkafka")
    root, before = logging.getLogger(), list(logging.getLogger().handlers)
    yield caplog
    for handler in root.handlers:  # the CLI's console handler
        if handler not in before:
            root.removeHandler(handler)


def invoke(*args: str):
    return CliRunner().invoke(cli, ["-v", *args])


def get(port: int, path: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as answer:
        return answer.read().decode()


def assert_hidden(secrets: tuple[str, ...], *texts: str) -> None:
    for text in texts:
        for secret in secrets:
            at = text.find(secret)
            assert at < 0, f"a secret is shown: ...{text[max(0, at - 200):at + 100]}..."


def test_a_running_flow_shows_no_secret(sasl_cluster, clusters, running, logs, tmp_path, unique):
    topic = f"secrets-{unique}"
    source = sasl_cluster.librdkafka_settings()
    assert ClusterAdmin("A", source).create_topics([NewTopicSpec(topic, 2, 1)])[topic] is None
    AcknowledgedProducer({**source, "linger.ms": "5"}).write(
        topic, (Message(i % 2, f"k{i}".encode(), f"v{i}".encode()) for i in range(RECORDS)), 60)
    path = mm2_file(tmp_path, sasl_cluster, clusters.target, topic, sasl_cluster.password)
    secrets = (CANARY, sasl_cluster.password)
    flow = load_config(path).flow("A", "B")
    assert sasl_cluster.password in flow.source_consumer.rdkafka["sasl.password"]
    assert all(CANARY in flow.target_producer[k] for k in ("ssl.key.password", "ssl.truststore.password",
                                                            "sasl.jaas.config", "basic.auth.user.info"))

    planned = invoke("plan", str(path))
    assert planned.exit_code == 0, planned.output
    assert f"{topic} (2 partitions) -> A.{topic}" in planned.stdout
    with running(path) as supervisor, MetricsServer(supervisor.status, 0, host="127.0.0.1") as server:
        wait_until(lambda: count_records(clusters.target, f"A.{topic}") == RECORDS, REPLICATED_S,
                   f"{RECORDS} records replicated to B")
        wait_until(lambda: supervisor.status().flow("A->B").lag is not None, REPLICATED_S, "lag measured once")
        metrics, document = get(server.port, "/metrics"), get(server.port, "/api/status")
        status = invoke("status", "--config", str(path), "--json")
        assert status.exit_code == 0, status.output
        lines = supervisor.status().lines()
    assert "sparkmirror_flow_state" in metrics and json.loads(document)["flows"][0]["name"] == "A->B"
    assert json.loads(status.stdout)["flows"][0]["flow"] == "A->B"
    assert any(r.name.startswith("sparkmirror.") and r.levelno == logging.DEBUG for r in logs.records)
    assert_hidden(secrets, planned.output, metrics, document, status.output, "\n".join(lines), logs.text)


def test_a_refused_login_shows_no_secret(sasl_cluster, clusters, logs, tmp_path, unique):
    wrong = f"{CANARY}-wrong-password"
    path = mm2_file(tmp_path, sasl_cluster, clusters.target, f"secrets-{unique}", wrong)

    planned = invoke("plan", str(path))

    assert planned.exit_code == ExitStatus.AUTHENTICATION_FAILED, planned.output
    assert "cluster 'A'" in planned.stderr and "'A.sasl.jaas.config'" in planned.stderr
    assert_hidden((CANARY, sasl_cluster.password), planned.output, logs.text)
