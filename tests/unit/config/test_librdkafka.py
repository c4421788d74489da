"""Java client settings -> librdkafka settings: the key tables, security.protocol, the public API, librdkafka's verdict.

TLS stores and options are tested in test_tls.py, SASL in test_sasl.py and sasl.jaas.config reading in test_jaas.py.
"""

from __future__ import annotations

import copy
import logging
import pickle

import pytest
from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient

from sparkmirror.config.librdkafka import Translation, librdkafka_settings, rules, translate
from sparkmirror.errors import ConfigError

from .translation_cases import (
    KEY_PASSWORD,
    OAUTH_MODULE,
    SCRAM_JAAS,
    SECRET,
    STORE_PASSWORD,
    Pki,
    only_problem,
    problems_of,
    sasl,
    ssl,
    where,
)


# The keys of ProducerConfig, ConsumerConfig and AdminClientConfig in kafka-clients 4.3.1 (ConfigDef.configKeys()).
def names(text: str) -> frozenset[str]:
    return frozenset(text.split())


COMMON_KEYS = names("""
    bootstrap.servers client.dns.lookup client.id config.providers connections.max.idle.ms
    enable.metrics.push metadata.max.age.ms metadata.recovery.rebootstrap.trigger.ms
    metadata.recovery.strategy metric.reporters metrics.num.samples metrics.recording.level
    metrics.sample.window.ms receive.buffer.bytes reconnect.backoff.max.ms reconnect.backoff.ms
    request.timeout.ms retry.backoff.max.ms retry.backoff.ms sasl.client.callback.handler.class
    sasl.jaas.config sasl.kerberos.kinit.cmd sasl.kerberos.min.time.before.relogin
    sasl.kerberos.service.name sasl.kerberos.ticket.renew.jitter sasl.kerberos.ticket.renew.window.factor
    sasl.login.callback.handler.class sasl.login.class sasl.login.connect.timeout.ms
    sasl.login.read.timeout.ms sasl.login.refresh.buffer.seconds sasl.login.refresh.min.period.seconds
    sasl.login.refresh.window.factor sasl.login.refresh.window.jitter sasl.login.retry.backoff.max.ms
    sasl.login.retry.backoff.ms sasl.mechanism sasl.oauthbearer.assertion.algorithm
    sasl.oauthbearer.assertion.claim.aud sasl.oauthbearer.assertion.claim.exp.seconds
    sasl.oauthbearer.assertion.claim.iss sasl.oauthbearer.assertion.claim.jti.include
    sasl.oauthbearer.assertion.claim.nbf.seconds sasl.oauthbearer.assertion.claim.sub
    sasl.oauthbearer.assertion.file sasl.oauthbearer.assertion.private.key.file
    sasl.oauthbearer.assertion.private.key.passphrase sasl.oauthbearer.assertion.template.file
    sasl.oauthbearer.client.credentials.client.id sasl.oauthbearer.client.credentials.client.secret
    sasl.oauthbearer.clock.skew.seconds sasl.oauthbearer.expected.audience sasl.oauthbearer.expected.issuer
    sasl.oauthbearer.header.urlencode sasl.oauthbearer.jwks.endpoint.refresh.ms
    sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms sasl.oauthbearer.jwks.endpoint.retry.backoff.ms
    sasl.oauthbearer.jwks.endpoint.url sasl.oauthbearer.jwt.retriever.class
    sasl.oauthbearer.jwt.validator.class sasl.oauthbearer.scope sasl.oauthbearer.scope.claim.name
    sasl.oauthbearer.sub.claim.name sasl.oauthbearer.token.endpoint.url security.protocol security.providers
    send.buffer.bytes socket.connection.setup.timeout.max.ms socket.connection.setup.timeout.ms
    ssl.cipher.suites ssl.enabled.protocols ssl.endpoint.identification.algorithm ssl.engine.factory.class
    ssl.key.password ssl.keymanager.algorithm ssl.keystore.certificate.chain ssl.keystore.key
    ssl.keystore.location ssl.keystore.password ssl.keystore.type ssl.protocol ssl.provider
    ssl.secure.random.implementation ssl.trustmanager.algorithm ssl.truststore.certificates
    ssl.truststore.location ssl.truststore.password ssl.truststore.type
""")
PRODUCER_ONLY_KEYS = names("""
    acks batch.size buffer.memory compression.gzip.level compression.lz4.level compression.type
    compression.zstd.level delivery.timeout.ms enable.idempotence interceptor.classes key.serializer
    linger.ms max.block.ms max.in.flight.requests.per.connection max.request.size metadata.max.idle.ms
    partitioner.adaptive.partitioning.enable partitioner.availability.timeout.ms partitioner.class
    partitioner.ignore.keys retries transaction.timeout.ms transaction.two.phase.commit.enable
    transactional.id value.serializer
""")
CONSUMER_ONLY_KEYS = names("""
    allow.auto.create.topics auto.commit.interval.ms auto.offset.reset check.crcs client.rack
    default.api.timeout.ms enable.auto.commit exclude.internal.topics fetch.max.bytes fetch.max.wait.ms
    fetch.min.bytes group.id group.instance.id group.protocol group.remote.assignor heartbeat.interval.ms
    interceptor.classes internal.throw.on.fetch.stable.offset.unsupported isolation.level key.deserializer
    max.partition.fetch.bytes max.poll.interval.ms max.poll.records partition.assignment.strategy
    session.timeout.ms share.acknowledgement.mode share.acquire.mode value.deserializer
""")
ADMIN_ONLY_KEYS = names("""
    bootstrap.controllers default.api.timeout.ms retries
""")
JAVA_CLIENT_KEYS = {"producer": COMMON_KEYS | PRODUCER_ONLY_KEYS, "consumer": COMMON_KEYS | CONSUMER_ONLY_KEYS,
                    "admin": COMMON_KEYS | ADMIN_ONLY_KEYS}


# -- general table ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("role", ["producer", "consumer", "admin"])
def test_the_table_knows_exactly_the_java_clients_keys_of_each_role(role: str) -> None:
    table = {key for key, (roles, _) in rules.RULES.items() if role[0] in roles}
    assert table - {"auto.include.jmx.reporter"} == JAVA_CLIENT_KEYS[role]  # that one was removed in Kafka 4.0


@pytest.mark.parametrize(("role", "java", "expected"), [
    ("admin", {"bootstrap.servers": " a:1,b:2 ", "client.id": "mm2"},
     {"bootstrap.servers": "a:1,b:2", "client.id": "mm2"}),
    ("admin", {"reconnect.backoff.ms": "50", "reconnect.backoff.max.ms": "1000", "retry.backoff.ms": "100",
               "retry.backoff.max.ms": "1000", "socket.connection.setup.timeout.ms": "10000",
               "connections.max.idle.ms": "540000", "metadata.recovery.rebootstrap.trigger.ms": "300000"},
     {"reconnect.backoff.ms": "50", "reconnect.backoff.max.ms": "1000", "retry.backoff.ms": "100",
      "retry.backoff.max.ms": "1000", "socket.connection.setup.timeout.ms": "10000",
      "connections.max.idle.ms": "540000", "metadata.recovery.rebootstrap.trigger.ms": "300000"}),
    ("admin", {"client.dns.lookup": "USE_ALL_DNS_IPS", "metadata.recovery.strategy": "none",
               "enable.metrics.push": "False"},
     {"client.dns.lookup": "use_all_dns_ips", "metadata.recovery.strategy": "none", "enable.metrics.push": "false"}),
    ("admin", {"metadata.max.age.ms": "60000"}, {"topic.metadata.refresh.interval.ms": "60000"}),
    ("admin", {"receive.buffer.bytes": "-1", "send.buffer.bytes": "131072"},
     {"socket.receive.buffer.bytes": "0", "socket.send.buffer.bytes": "131072"}),
    ("admin", {"request.timeout.ms": "20000"}, {"socket.timeout.ms": "20000"}),
    ("consumer", {"request.timeout.ms": "20000"}, {"socket.timeout.ms": "20000"}),
    ("producer", {"request.timeout.ms": "20000"}, {"request.timeout.ms": "20000"}),
    ("producer", {"retries": "7", "linger.ms": "20", "delivery.timeout.ms": "30000", "transactional.id": "t",
                  "transaction.timeout.ms": "60000", "acks": "ALL", "compression.type": "ZSTD"},
     {"retries": "7", "linger.ms": "20", "delivery.timeout.ms": "30000", "transactional.id": "t",
      "transaction.timeout.ms": "60000", "acks": "all", "compression.type": "zstd"}),
    ("producer", {"max.request.size": "2097152", "buffer.memory": "1025", "batch.size": "0"},
     {"message.max.bytes": "2097152", "queue.buffering.max.kbytes": "2", "batch.size": "1"}),
    ("producer", {"buffer.memory": "33554432", "batch.size": "16384"},
     {"queue.buffering.max.kbytes": "32768", "batch.size": "16384"}),
    ("producer", {"compression.type": "gzip", "compression.gzip.level": "9"}, {"compression.level": "9"}),
    ("producer", {"partitioner.ignore.keys": "true"}, {"partitioner": "random"}),
    ("producer", {"partitioner.ignore.keys": "false"}, {"partitioner": "murmur2_random"}),
    ("consumer", {"group.id": "g", "group.instance.id": "i", "client.rack": "r1", "fetch.min.bytes": "1",
                  "fetch.max.bytes": "52428800", "max.partition.fetch.bytes": "1048576",
                  "max.poll.interval.ms": "300000", "auto.commit.interval.ms": "5000", "session.timeout.ms": "45000",
                  "heartbeat.interval.ms": "3000", "enable.auto.commit": "FALSE", "check.crcs": "false",
                  "allow.auto.create.topics": "false", "isolation.level": "READ_COMMITTED"},
     {"group.id": "g", "group.instance.id": "i", "client.rack": "r1", "fetch.min.bytes": "1",
      "fetch.max.bytes": "52428800", "max.partition.fetch.bytes": "1048576", "max.poll.interval.ms": "300000",
      "auto.commit.interval.ms": "5000", "session.timeout.ms": "45000", "heartbeat.interval.ms": "3000",
      "enable.auto.commit": "false", "check.crcs": "false", "allow.auto.create.topics": "false",
      "isolation.level": "read_committed"}),
    ("consumer", {"fetch.max.wait.ms": "10"}, {"fetch.wait.max.ms": "10"}),
    ("consumer", {"auto.offset.reset": "earliest"}, {"auto.offset.reset": "earliest"}),
    ("consumer", {"auto.offset.reset": "none"}, {"auto.offset.reset": "error"}),
    ("consumer", {"group.protocol": "consumer", "group.remote.assignor": "uniform"},
     {"group.protocol": "consumer", "group.remote.assignor": "uniform"}),
    ("consumer", {"partition.assignment.strategy": "org.apache.kafka.clients.consumer.RoundRobinAssignor"},
     {"partition.assignment.strategy": "roundrobin"}),
    ("consumer", {"partition.assignment.strategy": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"},
     {"partition.assignment.strategy": "cooperative-sticky"}),
    # Java's default pair: librdkafka cannot mix eager and cooperative, and the group elects RangeAssignor anyway.
    ("consumer", {"partition.assignment.strategy": "org.apache.kafka.clients.consumer.RangeAssignor, "
                                                   "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"},
     {"partition.assignment.strategy": "range"}),
])
def test_java_settings_become_librdkafka_settings(role: str, java: dict[str, str], expected: dict[str, str]) -> None:
    translation = translate(java, role)
    assert {k: translation.settings[k] for k in expected} == expected
    assert translation.ignored == () and translation.unknown == ()


@pytest.mark.parametrize(("role", "key", "value"), [
    ("admin", "request.timeout.ms", "600000"),
    ("admin", "enable.metrics.push", "yes"),
    ("admin", "receive.buffer.bytes", "lots"),
    ("admin", "bootstrap.controllers", "c:9093"),
    ("producer", "acks", "2all"),
    ("producer", "compression.type", "brotli"),
    ("producer", "buffer.memory", "32m"),
    ("producer", "transaction.two.phase.commit.enable", "true"),
    ("consumer", "auto.offset.reset", "by_duration:PT1H"),
    ("consumer", "isolation.level", "serializable"),
    ("consumer", "partition.assignment.strategy", "org.apache.kafka.clients.consumer.StickyAssignor"),
    ("consumer", "partition.assignment.strategy", "com.example.MyAssignor"),
    ("consumer", "group.remote.assignor", "uniform"),
])
def test_untranslatable_values_are_problems_naming_the_key(role: str, key: str, value: str) -> None:
    only_problem({"bootstrap.servers": "a:1", key: value}, key, role)


@pytest.mark.parametrize("key", ["session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"])
def test_classic_group_settings_are_problems_with_the_consumer_group_protocol(key: str) -> None:
    value = "org.apache.kafka.clients.consumer.RangeAssignor" if key == "partition.assignment.strategy" else "3000"
    text = only_problem({"group.protocol": "consumer", key: value}, key, "consumer")
    assert "group.protocol=consumer" in text


def test_compression_levels_of_other_codecs_are_ignored_and_out_of_range_levels_are_problems() -> None:
    translation = translate({"compression.type": "lz4", "compression.zstd.level": "3",
                             "compression.gzip.level": "5"}, "producer")
    assert "compression.level" not in translation.settings
    assert translation.ignored == ("compression.zstd.level", "compression.gzip.level")
    assert "-1..12" in only_problem({"compression.type": "zstd", "compression.zstd.level": "19"},
                                    "compression.zstd.level", "producer")


@pytest.mark.parametrize(("role", "present", "absent"), [
    ("admin", {"bootstrap.servers"}, {"linger.ms", "group.id", "isolation.level", "acks", "fetch.max.wait.ms"}),
    ("producer", {"linger.ms", "acks"}, {"group.id", "fetch.wait.max.ms", "client.rack"}),
    ("consumer", {"group.id", "fetch.wait.max.ms", "client.rack"}, {"linger.ms", "acks", "retries"}),
])
def test_settings_of_other_roles_are_dropped_silently(role: str, present: set[str], absent: set[str]) -> None:
    java = {"bootstrap.servers": "a:1", "linger.ms": "20", "acks": "all", "retries": "3", "group.id": "g",
            "isolation.level": "read_committed", "fetch.max.wait.ms": "10", "client.rack": "r1"}
    translation = translate(java, role)
    assert present <= set(translation.settings)
    assert not absent & set(translation.settings)
    assert not absent & set(translation.ignored) and translation.unknown == ()


def test_bad_values_of_other_roles_settings_are_not_problems() -> None:
    assert translate({"partition.assignment.strategy": "com.example.Custom"}, "producer").settings
    assert translate({"transaction.two.phase.commit.enable": "true", "bootstrap.controllers": "c:1"},
                     "consumer").ignored == ()


def test_jvm_only_settings_are_ignored_and_non_client_keys_are_unknown() -> None:
    java = {"bootstrap.servers": "a:1", "key.serializer": "x.S", "value.serializer": "x.S",
            "interceptor.classes": "x.I", "metric.reporters": "x.R", "metrics.num.samples": "2",
            "auto.include.jmx.reporter": "false", "max.block.ms": "60000", "partitioner.class": "x.P",
            "ssl.keymanager.algorithm": "SunX509", "sasl.login.class": "x.L", "retries": "3",
            "replication.factor": "3", "lingerms": "5", "ssl.ca.location": "/etc/ca.pem"}
    producer = translate(java, "producer")
    assert producer.ignored == ("key.serializer", "value.serializer", "interceptor.classes", "metric.reporters",
                                "metrics.num.samples", "auto.include.jmx.reporter", "max.block.ms",
                                "partitioner.class", "ssl.keymanager.algorithm", "sasl.login.class")
    assert producer.unknown == ("replication.factor", "lingerms", "ssl.ca.location")
    admin = translate(java, "admin")
    assert "retries" in admin.ignored and "retries" not in admin.settings  # no admin retry setting in librdkafka
    assert "max.block.ms" not in admin.ignored


def test_consumer_keeps_java_defaults_where_librdkafkas_differ() -> None:
    defaults = translate({"bootstrap.servers": "a:1", "group.id": "g"}, "consumer").settings
    assert defaults["isolation.level"] == "read_uncommitted"
    assert defaults["check.crcs"] == "true" and defaults["allow.auto.create.topics"] == "true"
    assert "enable.auto.commit" not in defaults  # same default (true) on both sides
    given = translate({"isolation.level": "read_committed", "enable.auto.commit": "false"}, "consumer").settings
    assert given["isolation.level"] == "read_committed" and given["enable.auto.commit"] == "false"


def test_producer_keeps_java_defaults_where_librdkafkas_differ() -> None:
    defaults = translate({"bootstrap.servers": "a:1"}, "producer").settings
    assert defaults["enable.idempotence"] == "true"
    assert defaults["partitioner"] == "murmur2_random"
    assert defaults["delivery.timeout.ms"] == "120000"
    assert defaults["message.max.bytes"] == "1048576"
    assert defaults["max.in.flight.requests.per.connection"] == "5"
    assert "isolation.level" not in defaults
    assert "enable.idempotence" not in translate({"acks": "1"}, "producer").settings  # Java drops it silently
    assert "enable.idempotence" not in translate({"max.in.flight.requests.per.connection": "10"}, "producer").settings
    assert translate({"max.request.size": "5000000"}, "producer").settings["message.max.bytes"] == "5000000"


def test_explicit_idempotence_that_java_would_refuse_is_a_problem() -> None:
    text = only_problem({"enable.idempotence": "true", "acks": "1", "retries": "0"}, "enable.idempotence", "producer")
    assert "acks=all" in text and "retries > 0" in text
    only_problem({"enable.idempotence": "false", "transactional.id": "t"}, "enable.idempotence", "producer")


def test_transactional_producers_keep_the_delivery_timeout_within_the_transaction_timeout() -> None:
    assert translate({"transactional.id": "t"}, "producer").settings["delivery.timeout.ms"] == "60000"
    assert translate({"transactional.id": "t", "transaction.timeout.ms": "900000"},
                     "producer").settings["delivery.timeout.ms"] == "120000"
    only_problem({"transactional.id": "t", "delivery.timeout.ms": "90000"}, "delivery.timeout.ms", "producer")


def test_every_problem_is_reported_at_once_each_with_its_key() -> None:
    problems = problems_of({"request.timeout.ms": "0", "bootstrap.controllers": "c:1",
                            "security.protocol": "SSL", "ssl.truststore.location": "/nonexistent/ts.jks"})
    assert [p.split(": ", 1)[0] for p in problems] == [
        where("request.timeout.ms"), where("bootstrap.controllers"), where("ssl.truststore.location")]


def test_role_must_be_a_client_role() -> None:
    with pytest.raises(ValueError, match="role"):
        translate({}, "connector")


# -- security.protocol and what it switches on -----------------------------------------------------------------------

def test_security_protocol_is_case_insensitive_and_checked() -> None:
    assert translate({"security.protocol": "sasl_ssl", "sasl.mechanism": "PLAIN", "sasl.jaas.config":
                      'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";'},
                     "admin").settings["security.protocol"] == "SASL_SSL"
    assert "PLAINTEXT, SSL" in only_problem({"security.protocol": "TLS"}, "security.protocol")


def test_tls_and_sasl_keys_a_protocol_does_not_use_are_ignored_without_reading_them() -> None:
    java = {"security.protocol": "PLAINTEXT", "ssl.truststore.location": "/nonexistent/ts.jks",
            "sasl.mechanism": "PLAIN", "sasl.jaas.config": "not even JAAS"}
    translation = translate(java, "admin")
    assert translation.settings == {"security.protocol": "PLAINTEXT"}
    assert set(translation.ignored) == {"ssl.truststore.location", "sasl.mechanism", "sasl.jaas.config"}
    assert "ssl.truststore.location" in translate({**java, "security.protocol": "SASL_PLAINTEXT",
                                                   "sasl.jaas.config": SCRAM_JAAS, "sasl.mechanism": "SCRAM-SHA-256"},
                                                  "admin").ignored


# -- secrets, the public API and logging -----------------------------------------------------------------------------

def test_secrets_never_show_in_reprs_or_problems(pki: Pki) -> None:
    java = {**sasl("SCRAM-SHA-512", SCRAM_JAAS), "ssl.keystore.location": pki.pkcs12_keystore(),
            "ssl.keystore.password": STORE_PASSWORD, "ssl.key.password": STORE_PASSWORD}
    translation = translate(java, "producer")
    assert translation.settings["sasl.password"] == SECRET
    assert isinstance(translation, Translation)
    for text in (repr(translation), str(translation), repr(translation.settings), str(translation.settings)):
        assert SECRET not in text
    assert "sasl.password" in repr(translation)
    with pytest.raises(TypeError):
        translation.settings["sasl.password"] = "x"  # type: ignore[index]
    assert pickle.loads(pickle.dumps(translation)) == translation == copy.deepcopy(translation)  # noqa: S301
    broken = {**java, "ssl.truststore.location": pki.pkcs12_truststore(), "ssl.truststore.password": SECRET + "!",
              "sasl.mechanism": "PLAIN", "bootstrap.controllers": SECRET}
    assert len(problems_of(broken, "admin")) == 3  # problems_of checks the secret is absent


def test_librdkafka_settings_keeps_the_one_argument_call_and_logs_keys_not_values(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="sparkmirror.config.librdkafka.translation")
    settings = librdkafka_settings({"bootstrap.servers": "a:1", "linger.ms": "5", "metric.reporters": SECRET,
                                    "mystery.key": SECRET})
    assert settings == {"bootstrap.servers": "a:1"} and type(settings) is dict
    levels = {r.levelno: r.getMessage() for r in caplog.records}
    assert "mystery.key" in levels[logging.WARNING] and "metric.reporters" in levels[logging.INFO]
    assert SECRET not in caplog.text
    with pytest.raises(ConfigError):
        librdkafka_settings({"security.protocol": "bogus"}, "producer", where)


# -- librdkafka's own verdict: construction validates every property name ----------------------------------------------

def _construct(role: str, java: dict[str, str]) -> None:
    """Build the real client from the translation itself; librdkafka rejects unknown property names here."""
    settings = translate({"group.id": "g", **java, "bootstrap.servers": "127.0.0.1:1"}, role).settings
    if role == "producer":
        Producer(settings).flush(0)
    elif role == "consumer":
        Consumer(settings).close()
    else:
        AdminClient(settings)


def test_construction_fails_on_a_property_librdkafka_does_not_know() -> None:
    with pytest.raises(KafkaException, match="No such configuration property"):
        Producer({"bootstrap.servers": "127.0.0.1:1", "max.block.ms": "60000"})


@pytest.mark.parametrize("role", ["producer", "consumer", "admin"])
def test_librdkafka_accepts_a_sasl_ssl_pkcs12_config(pki: Pki, role: str) -> None:
    java = {**sasl("SCRAM-SHA-512", SCRAM_JAAS), "bootstrap.servers": "127.0.0.1:1",
            "ssl.truststore.location": pki.pkcs12_truststore(), "ssl.truststore.password": STORE_PASSWORD,
            "ssl.keystore.location": pki.pkcs12_keystore(), "ssl.keystore.password": STORE_PASSWORD,
            "ssl.endpoint.identification.algorithm": "", "ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            "client.id": "mm2", "linger.ms": "20", "isolation.level": "read_committed"}
    _construct(role, java)


def test_librdkafka_reads_keytool_pkcs12_keystores(keytool_stores: dict[str, str]) -> None:
    java = ssl(**{"ssl.keystore.location": keytool_stores["key-PKCS12"], "ssl.keystore.password": STORE_PASSWORD})
    _construct("admin", java)


@pytest.mark.parametrize("role", ["producer", "consumer", "admin"])
def test_librdkafka_accepts_every_general_setting_we_produce(pki: Pki, role: str) -> None:
    java = {"client.id": "c", "client.dns.lookup": "use_all_dns_ips", "connections.max.idle.ms": "540000",
            "metadata.max.age.ms": "300000", "metadata.recovery.strategy": "rebootstrap",
            "metadata.recovery.rebootstrap.trigger.ms": "300000", "enable.metrics.push": "false",
            "receive.buffer.bytes": "-1", "send.buffer.bytes": "131072", "reconnect.backoff.ms": "50",
            "reconnect.backoff.max.ms": "1000", "request.timeout.ms": "30000", "retry.backoff.ms": "100",
            "retry.backoff.max.ms": "1000", "socket.connection.setup.timeout.ms": "10000", "retries": "10",
            "acks": "all", "batch.size": "16384", "buffer.memory": "33554432", "compression.type": "lz4",
            "compression.lz4.level": "9", "delivery.timeout.ms": "120000", "enable.idempotence": "true",
            "linger.ms": "5", "max.in.flight.requests.per.connection": "5", "max.request.size": "1048576",
            "partitioner.ignore.keys": "false", "transaction.timeout.ms": "120000", "transactional.id": "tx",
            "allow.auto.create.topics": "false", "auto.commit.interval.ms": "5000", "auto.offset.reset": "none",
            "check.crcs": "true", "client.rack": "r", "enable.auto.commit": "false", "fetch.max.bytes": "52428800",
            "fetch.max.wait.ms": "500", "fetch.min.bytes": "1", "group.id": "g", "group.instance.id": "i",
            "group.protocol": "classic", "heartbeat.interval.ms": "3000", "isolation.level": "read_committed",
            "max.partition.fetch.bytes": "1048576", "max.poll.interval.ms": "300000", "session.timeout.ms": "45000",
            "partition.assignment.strategy": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
            **ssl(**{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": pki.ca_pem,
                     "ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": pki.client_pem,
                     "ssl.keystore.key": pki.key_pem(KEY_PASSWORD), "ssl.key.password": KEY_PASSWORD})}
    assert translate(java, role).unknown == ()
    _construct(role, java)


@pytest.mark.parametrize("jaas_and_extra", [
    (f'{OAUTH_MODULE} required clientId="mm2" clientSecret="{SECRET}" scope="s" extension_a="b";',
     {"sasl.oauthbearer.token.endpoint.url": "https://127.0.0.1:1/token", "sasl.oauthbearer.sub.claim.name": "sub"}),
    (f'{OAUTH_MODULE} required unsecuredLoginStringClaim_sub="alice" unsecuredLoginLifetimeSeconds="60";', {}),
])
def test_librdkafka_accepts_the_oauthbearer_settings(pki: Pki,
                                                     jaas_and_extra: tuple[str, dict[str, str]]) -> None:
    jaas, extra = jaas_and_extra
    _construct("admin", sasl("OAUTHBEARER", jaas, **extra, **{"security.protocol": "SASL_PLAINTEXT"}))
