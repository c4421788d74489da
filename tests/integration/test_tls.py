"""Replication over TLS, written the MM2 way: SSL (server authentication), mTLS (client certificates from an
encrypted PEM key or a PKCS12 key store) and SASL_SSL, both clusters secured and under StandardAuthorizer.

Every client of the flow goes through the secured listeners: Spark's Kafka source and the JVM writer (Java
settings as written), the control plane's admins, offset-syncs and checkpoint writers and the Python client's
readers (the same settings translated to librdkafka). The tests set up and check data through each broker's
own PLAINTEXT listener only.
"""

from __future__ import annotations

import time

import pytest

from sparkmirror import client
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord, NewTopicSpec
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER
from sparkmirror.testing.records import produce, read_all

from .conftest import ONLY_OWN_TOPICS, commit, trigger_settings, wait_until

RECORDS = 600
PARTITIONS = 2
COMMITTED = {0: 120, 1: 257}  # the group's committed offset on A, per partition
COPY_TIMEOUT_S = 120.0
CHECKPOINT_TIMEOUT_S = 90.0
FAST = "emit.checkpoints.interval.seconds = 1\nrefresh.groups.interval.seconds = 1\n"


def mm2_file(path, secured, mode: str, topic: str, group: str):
    path.write_text("clusters = A, B\n" + secured.mm2_lines("A", mode) + secured.mm2_lines("B", mode)
                    + f"A->B.enabled = true\nA->B.topics = {topic}\nA->B.groups = {group}\n"
                    + SINGLE_BROKER + ONLY_OWN_TOPICS + FAST + trigger_settings("micro-batch"))
    return path


def source_records(tag: str) -> list[KafkaRecord]:
    now = int(time.time() * 1000)
    return [KafkaRecord(i % PARTITIONS, -1, f"k{i % 17}".encode(), f"{tag}-{i}".encode(), (("n", str(i).encode()),),
                        0, now - RECORDS + i) for i in range(RECORDS)]


@pytest.mark.parametrize("mode", ["ssl-pem", "mtls-pem", "mtls-pkcs12", "sasl_ssl"])
def test_replication_syncs_checkpoints_and_failover_over_tls(secured_clusters, running, tmp_path, unique, mode):
    secured = secured_clusters
    topic, group = f"tls-{mode}-{unique}", f"app-{mode}-{unique}"
    assert ClusterAdmin("A", {"bootstrap.servers": secured.source.internal}).create_topics(
        [NewTopicSpec(topic, PARTITIONS, 1)])[topic] is None
    sent = source_records(topic)
    assert produce(secured.source.internal, topic, sent) == RECORDS
    commit(secured.source.internal, group, {(topic, p): offset for p, offset in COMMITTED.items()})
    path = mm2_file(tmp_path / "mm2.properties", secured, mode, topic, group)
    remote = f"A.{topic}"

    with running(path):
        def copied():
            topics = ClusterAdmin("B", {"bootstrap.servers": secured.target.internal}).topic_partitions()
            if remote not in topics:
                return None
            ends = ClusterAdmin("B", {"bootstrap.servers": secured.target.internal}).watermarks(remote, PARTITIONS)
            return sum(high for _, high in ends.values()) == RECORDS
        wait_until(copied, COPY_TIMEOUT_S, f"{RECORDS} records of {topic} on B over {mode}")

        def checkpointed():
            got = {(k[1], k[2]): c.upstream_offset for k, c in client.read_checkpoints(path, "A", "B", group).items()}
            return got == {(remote, p): offset for p, offset in COMMITTED.items()}
        wait_until(checkpointed, CHECKPOINT_TIMEOUT_S, f"checkpoints of {group} over {mode}")

    copies = read_all(secured.target.internal, remote, PARTITIONS)
    for p in range(PARTITIONS):
        expected = [(r.key, r.value, r.headers, r.timestamp) for r in sent if r.partition == p]
        assert [(r.key, r.value, r.headers, r.timestamp) for r in copies[p]] == expected, f"{remote}-{p} differs"

    syncs = client.read_offset_syncs(path, "A", "B")
    assert {s.partition for s in syncs if s.topic == topic} == set(range(PARTITIONS)), "no offset syncs over TLS"
    assert all(s.upstream_offset == s.downstream_offset for s in syncs if s.topic == topic)

    translation = client.translate_offsets(path, group, "A", "B")
    assert translation.method == "live", translation.warnings
    resumes = {(t.remote_topic, t.partition): (t.downstream_offset, t.status) for t in translation.partitions}
    assert resumes == {(remote, p): (offset, "exact") for p, offset in COMMITTED.items()}, translation


@pytest.mark.parametrize("listener", ["MTLS", "SASL_SSL"])
def test_the_authorizer_admits_the_super_user_and_denies_others(secured_clusters, unique, listener):
    """StandardAuthorizer is on: `mirror` (super user) may create a topic, `app` (no ACLs) may not."""
    secured = secured_clusters

    def settings(principal: str) -> dict[str, str]:
        base = {"bootstrap.servers": secured.source.bootstraps[listener], "security.protocol": "SSL",
                "ssl.ca.location": str(secured.trust.pem)}
        if listener == "MTLS":
            identity = str(secured.identities[principal].pem)
            return {**base, "ssl.certificate.location": identity, "ssl.key.location": identity}
        return {**base, "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.username": principal, "sasl.password": secured.users[principal]}

    topic = f"authz-{listener.lower()}-{unique}"
    denied = ClusterAdmin("A", settings("app")).create_topics([NewTopicSpec(topic, 1, 1)])[topic]
    assert denied is not None and "AUTHORIZATION_FAILED" in str(denied), denied
    assert ClusterAdmin("A", settings("mirror")).create_topics([NewTopicSpec(topic, 1, 1)])[topic] is None
