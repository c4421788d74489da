"""The per-key rules of the Java -> librdkafka translation: which client roles read each Java key, and how.

The tables follow the ConfigDefs of kafka-clients 4.3 (ProducerConfig, ConsumerConfig, AdminClientConfig) and
librdkafka 2.16's CONFIGURATION.md. A rule's action is SAME (copied), IGNORE (JVM-only, or without effect here),
SECURITY (handled by tls.py and sasl.py) or a converter that returns the librdkafka settings or raises Unfit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import NamedTuple


class Unfit(Exception):
    """A value that cannot be translated; the message says why and what to do, without the value."""


class Ctx(NamedTuple):
    """What a converter may look at besides the value: the other Java settings and the client role."""

    java: Mapping[str, str]
    role: str


Convert = Callable[[str, Ctx], dict[str, str]]
SAME, IGNORE, SECURITY = "same", "ignore", "security"


def _rename(name: str) -> Convert:
    return lambda value, ctx: {name: value}


def _bool(name: str) -> Convert:
    def convert(value: str, ctx: Ctx) -> dict[str, str]:
        if value.lower() not in ("true", "false"):
            raise Unfit("must be true or false")
        return {name: value.lower()}
    return convert


def _enum(name: str, *allowed: str) -> Convert:
    def convert(value: str, ctx: Ctx) -> dict[str, str]:
        if value.lower() not in allowed:
            raise Unfit(f"must be one of {', '.join(allowed)}")
        return {name: value.lower()}
    return convert


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise Unfit("must be an integer") from None


def _socket_buffer(name: str) -> Convert:
    """Java's -1 (operating-system default) is librdkafka's 0."""
    return lambda value, ctx: {name: "0" if _int(value) < 0 else value}


def _batch_size(value: str, ctx: Ctx) -> dict[str, str]:
    """Java's 0 disables batching; librdkafka's minimum of 1 byte gives the same one-record batches."""
    return {"batch.size": str(max(1, _int(value)))}


def _buffer_memory(value: str, ctx: Ctx) -> dict[str, str]:
    return {"queue.buffering.max.kbytes": str(max(1, math.ceil(_int(value) / 1024)))}


def _compression_level(codec: str) -> Convert:
    """librdkafka has one level for the configured codec; Java's levels of other codecs have no effect."""
    def convert(value: str, ctx: Ctx) -> dict[str, str]:
        if ctx.java.get("compression.type", "none").strip().lower() != codec:
            return {}
        if not -1 <= _int(value) <= 12:
            raise Unfit("librdkafka's compression.level accepts -1..12; choose a level in that range")
        return {"compression.level": value}
    return convert


def _request_timeout(value: str, ctx: Ctx) -> dict[str, str]:
    """Producer: the produce-ack timeout; other roles: librdkafka's general network request timeout."""
    if ctx.role == "producer":
        return {"request.timeout.ms": value}
    if not 10 <= _int(value) <= 300_000:
        raise Unfit("librdkafka's socket.timeout.ms, its equivalent, accepts 10..300000 ms")
    return {"socket.timeout.ms": value}


def _retries(value: str, ctx: Ctx) -> dict[str, str]:
    return {"retries": value} if ctx.role == "producer" else {}


def _auto_offset_reset(value: str, ctx: Ctx) -> dict[str, str]:
    mapped = {"earliest": "earliest", "latest": "latest", "none": "error"}.get(value.lower())
    if mapped is None:
        raise Unfit("librdkafka supports earliest, latest and none only (not by_duration:); use one of them")
    return {"auto.offset.reset": mapped}


def _classic_only(name: str) -> Convert:
    def convert(value: str, ctx: Ctx) -> dict[str, str]:
        if ctx.java.get("group.protocol", "classic").strip().lower() == "consumer":
            raise Unfit("cannot be set when group.protocol=consumer (the broker decides it); remove it")
        return {name: value}
    return convert


def _remote_assignor(value: str, ctx: Ctx) -> dict[str, str]:
    if not value:
        return {}
    if ctx.java.get("group.protocol", "classic").strip().lower() != "consumer":
        raise Unfit("can only be set with group.protocol=consumer; remove it")
    return {"group.remote.assignor": value}


_ASSIGNORS = {"org.apache.kafka.clients.consumer.RangeAssignor": "range",
              "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
              "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky"}


def _assignors(value: str, ctx: Ctx) -> dict[str, str]:
    """librdkafka cannot mix eager and cooperative assignors, so Java's default pair becomes its first one.

    A group of such members elects the first common assignor, RangeAssignor, as the Java members would.
    """
    names = [n.strip().removeprefix("class ") for n in value.split(",") if n.strip()]
    unmapped = [n for n in names if n not in _ASSIGNORS]
    if unmapped:
        raise Unfit(f"librdkafka has no assignor like {', '.join(unmapped)}; use RangeAssignor, RoundRobinAssignor "
                     "or CooperativeStickyAssignor (the nearest to StickyAssignor)")
    mapped = [_ASSIGNORS[n] for n in names]
    cooperative = mapped[:1] == ["cooperative-sticky"]
    kept = [m for m in mapped if (m == "cooperative-sticky") == cooperative]
    return _classic_only("partition.assignment.strategy")(",".join(kept), ctx) if kept else {}


def _partitioner(value: str, ctx: Ctx) -> dict[str, str]:
    """Java hashes keys with murmur2 unless told to ignore them; librdkafka's default hash is CRC32."""
    ignore_keys = _bool("partitioner.ignore.keys")(value, ctx)["partitioner.ignore.keys"] == "true"
    return {"partitioner": "random" if ignore_keys else "murmur2_random"}


def _only_false(hint: str) -> Convert:
    def convert(value: str, ctx: Ctx) -> dict[str, str]:
        if value.lower() == "true":
            raise Unfit(hint)
        return {}
    return convert


def _unsupported(hint: str) -> Convert:
    def convert(value: str, ctx: Ctx) -> dict[str, str]:
        raise Unfit(hint)
    return convert


Action = str | Convert
_JVM_ONLY = ("config.providers", "metric.reporters", "metrics.num.samples", "metrics.recording.level",
             "metrics.sample.window.ms", "auto.include.jmx.reporter", "security.providers",
             "socket.connection.setup.timeout.max.ms", "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm",
             "ssl.provider", "ssl.secure.random.implementation", "ssl.engine.factory.class", "sasl.login.class",
             "sasl.login.connect.timeout.ms", "sasl.login.read.timeout.ms", "sasl.login.retry.backoff.ms",
             "sasl.login.retry.backoff.max.ms", "sasl.login.refresh.buffer.seconds",
             "sasl.login.refresh.min.period.seconds", "sasl.login.refresh.window.factor",
             "sasl.login.refresh.window.jitter", "sasl.kerberos.ticket.renew.jitter",
             "sasl.kerberos.ticket.renew.window.factor", "sasl.oauthbearer.scope.claim.name",
             "sasl.oauthbearer.clock.skew.seconds", "sasl.oauthbearer.expected.audience",
             "sasl.oauthbearer.expected.issuer", "sasl.oauthbearer.jwks.endpoint.url",
             "sasl.oauthbearer.jwks.endpoint.refresh.ms", "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
             "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", "sasl.oauthbearer.jwt.validator.class")
_SSL_KEYS = ("ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
             "ssl.truststore.certificates", "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password",
             "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.key.password",
             "ssl.endpoint.identification.algorithm", "ssl.protocol", "ssl.enabled.protocols", "ssl.cipher.suites")
_SASL_KEYS = ("sasl.mechanism", "sasl.jaas.config", "sasl.client.callback.handler.class",
              "sasl.login.callback.handler.class", "sasl.kerberos.service.name", "sasl.kerberos.kinit.cmd",
              "sasl.kerberos.min.time.before.relogin", "sasl.oauthbearer.token.endpoint.url",
              "sasl.oauthbearer.jwt.retriever.class", "sasl.oauthbearer.client.credentials.client.id",
              "sasl.oauthbearer.client.credentials.client.secret", "sasl.oauthbearer.scope",
              "sasl.oauthbearer.sub.claim.name", "sasl.oauthbearer.header.urlencode",
              "sasl.oauthbearer.assertion.algorithm", "sasl.oauthbearer.assertion.claim.aud",
              "sasl.oauthbearer.assertion.claim.exp.seconds", "sasl.oauthbearer.assertion.claim.iss",
              "sasl.oauthbearer.assertion.claim.jti.include", "sasl.oauthbearer.assertion.claim.nbf.seconds",
              "sasl.oauthbearer.assertion.claim.sub", "sasl.oauthbearer.assertion.file",
              "sasl.oauthbearer.assertion.private.key.file", "sasl.oauthbearer.assertion.private.key.passphrase",
              "sasl.oauthbearer.assertion.template.file")

# key -> (roles that read it: p/c/a, action). Keys of other roles are dropped, as those Java clients ignore them.
RULES: dict[str, tuple[str, Action]] = {
    **dict.fromkeys(_JVM_ONLY, ("pca", IGNORE)),
    **dict.fromkeys(("security.protocol", *_SSL_KEYS, *_SASL_KEYS), ("pca", SECURITY)),
    **dict.fromkeys(("bootstrap.servers", "client.id", "connections.max.idle.ms", "reconnect.backoff.ms",
                     "reconnect.backoff.max.ms", "retry.backoff.ms", "retry.backoff.max.ms",
                     "socket.connection.setup.timeout.ms", "metadata.recovery.rebootstrap.trigger.ms"),
                    ("pca", SAME)),
    "client.dns.lookup": ("pca", _enum("client.dns.lookup", "use_all_dns_ips",
                                       "resolve_canonical_bootstrap_servers_only")),
    "metadata.recovery.strategy": ("pca", _enum("metadata.recovery.strategy", "none", "rebootstrap")),
    "enable.metrics.push": ("pca", _bool("enable.metrics.push")),
    # Java's metadata.max.age.ms is the forced refresh period; librdkafka's key of that name is a cache limit.
    "metadata.max.age.ms": ("pca", _rename("topic.metadata.refresh.interval.ms")),
    "receive.buffer.bytes": ("pca", _socket_buffer("socket.receive.buffer.bytes")),
    "send.buffer.bytes": ("pca", _socket_buffer("socket.send.buffer.bytes")),
    "request.timeout.ms": ("pca", _request_timeout),
    "retries": ("pa", _retries),
    "default.api.timeout.ms": ("ca", IGNORE),  # confluent-kafka takes a timeout per call instead
    "interceptor.classes": ("pc", IGNORE),
    "bootstrap.controllers": ("a", _unsupported("librdkafka cannot talk to KRaft controllers directly; "
                                                "use bootstrap.servers with the brokers' addresses")),
    **dict.fromkeys(("delivery.timeout.ms", "linger.ms", "max.in.flight.requests.per.connection",
                     "transaction.timeout.ms", "transactional.id"), ("p", SAME)),
    "acks": ("p", _enum("acks", "all", "-1", "0", "1")),
    "compression.type": ("p", _enum("compression.type", "none", "gzip", "snappy", "lz4", "zstd")),
    "enable.idempotence": ("p", _bool("enable.idempotence")),
    "batch.size": ("p", _batch_size),
    "buffer.memory": ("p", _buffer_memory),
    "max.request.size": ("p", _rename("message.max.bytes")),
    "compression.gzip.level": ("p", _compression_level("gzip")),
    "compression.lz4.level": ("p", _compression_level("lz4")),
    "compression.zstd.level": ("p", _compression_level("zstd")),
    "partitioner.ignore.keys": ("p", _partitioner),
    "transaction.two.phase.commit.enable": ("p", _only_false("librdkafka has no two-phase commit (KIP-939) "
                                                             "transactions; remove it")),
    # Custom partitioners are JVM code; sparkmirror's producers always name the partition.
    **dict.fromkeys(("key.serializer", "value.serializer", "max.block.ms", "metadata.max.idle.ms",
                     "partitioner.class", "partitioner.adaptive.partitioning.enable",
                     "partitioner.availability.timeout.ms"), ("p", IGNORE)),
    **dict.fromkeys(("auto.commit.interval.ms", "fetch.max.bytes", "fetch.min.bytes", "group.id",
                     "group.instance.id", "max.partition.fetch.bytes", "max.poll.interval.ms", "client.rack"),
                    ("c", SAME)),
    "fetch.max.wait.ms": ("c", _rename("fetch.wait.max.ms")),
    "isolation.level": ("c", _enum("isolation.level", "read_uncommitted", "read_committed")),
    "group.protocol": ("c", _enum("group.protocol", "classic", "consumer")),
    "enable.auto.commit": ("c", _bool("enable.auto.commit")),
    "allow.auto.create.topics": ("c", _bool("allow.auto.create.topics")),
    "check.crcs": ("c", _bool("check.crcs")),
    "auto.offset.reset": ("c", _auto_offset_reset),
    "session.timeout.ms": ("c", _classic_only("session.timeout.ms")),
    "heartbeat.interval.ms": ("c", _classic_only("heartbeat.interval.ms")),
    "partition.assignment.strategy": ("c", _assignors),
    "group.remote.assignor": ("c", _remote_assignor),
    # max.poll.records: confluent-kafka's consume(num_messages=...) bounds a batch per call instead.
    # exclude.internal.topics: only matters for regex subscriptions, which sparkmirror makes through Spark.
    **dict.fromkeys(("key.deserializer", "value.deserializer", "max.poll.records", "exclude.internal.topics",
                     "internal.throw.on.fetch.stable.offset.unsupported", "share.acknowledgement.mode",
                     "share.acquire.mode"), ("c", IGNORE)),
}
