"""Pure: a flow's settings -> Spark Kafka source options. Unit-tested without a JVM."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from sparkmirror.errors import ConfigError

# Set by Spark's Kafka source itself (it rejects most of them); MM2's replication consumer also forces
# byte-array deserializers and no auto commit, and uses no group, so dropping them changes nothing.
_SPARK_MANAGED = frozenset({
    "auto.offset.reset", "enable.auto.commit", "key.deserializer", "value.deserializer", "group.id",
})
_STARTING_OFFSETS = ("earliest", "latest")  # Spark startingOffsets values an auto.offset.reset can name


# Spark reads bounded offset ranges, so a broker-side wait for more data never helps a task; with the
# Java default (500 ms) every partition's last fetch waits it out: 1,000 partitions read in 267 s instead
# of 39 s here (see benchmarks/README.md). An explicit `<alias>.consumer.fetch.max.wait.ms` still wins.
SOURCE_FETCH_MAX_WAIT_MS = "10"


def reset_policy(consumer_settings: Mapping[str, str], describe: Callable[[str], str] = str) -> str:
    """Where a partition with no stored position starts: MM2's replication consumer `auto.offset.reset`
    (default earliest); `none` cannot start anything, so it is refused with the key named."""
    reset = consumer_settings.get("auto.offset.reset", "earliest").strip().lower()
    if reset not in _STARTING_OFFSETS:
        raise ConfigError([f"{describe('auto.offset.reset')}: '{reset}' cannot start a new flow; use earliest "
                           f"or latest"])
    return reset


def source_options(consumer_settings: Mapping[str, str], starting_offsets: Mapping[str, Mapping[int, int]],
                   max_offsets_per_trigger: int | None = None,
                   describe: Callable[[str], str] = str) -> dict[str, str]:
    """Options for `spark.readStream.format("kafka")`: the Java consumer settings unchanged, `kafka.`-prefixed.

    The partitions are assigned, not subscribed, and start at the given offsets: the flow, not Spark,
    decides which partitions it reads and where (its own positions survive topic-set changes, deleted and
    re-created topics, which a Spark checkpoint does not).
    """
    if "interceptor.classes" in consumer_settings:
        raise ConfigError([f"{describe('interceptor.classes')}: consumer interceptors cannot run in Spark's "
                           f"Kafka source; remove the setting"])
    reset_policy(consumer_settings, describe)
    opts = {"kafka.fetch.max.wait.ms": SOURCE_FETCH_MAX_WAIT_MS}
    opts.update({f"kafka.{k}": v for k, v in consumer_settings.items() if k not in _SPARK_MANAGED})
    ordered = {t: dict(sorted(starting_offsets[t].items())) for t in sorted(starting_offsets)}
    opts.update({
        "assign": json.dumps({t: list(parts) for t, parts in ordered.items()}),
        "startingOffsets": json.dumps({t: {str(p): o for p, o in parts.items()} for t, parts in ordered.items()}),
        "includeHeaders": "true",
        "failOnDataLoss": "true",
    })
    if max_offsets_per_trigger:
        opts["maxOffsetsPerTrigger"] = str(max_offsets_per_trigger)
    return opts


LIBRDKAFKA_DEFAULT_BATCH_BYTES = 1_000_000
_BATCH_FRAMING_BYTES = 512  # record-batch header and per-request overhead kept below the topic limit


def producer_settings(librdkafka_settings: Mapping[str, str],
                      max_message_bytes: int | None = None) -> dict[str, str]:
    """Target producer settings: ordered, idempotent, acks=all, Java-like delivery timeout.

    `max_message_bytes` is the smallest `max.message.bytes` of the remote topics. The broker applies it
    to whole record batches and librdkafka, unlike the Java producer, does not split a rejected batch,
    so batches are capped below it: then only a record that is itself too large can be rejected.
    """
    settings = {"linger.ms": "5", "delivery.timeout.ms": "120000", **librdkafka_settings,
                "acks": "all", "enable.idempotence": "true"}
    if max_message_bytes is not None:
        requested = int(settings.get("batch.size", LIBRDKAFKA_DEFAULT_BATCH_BYTES))
        settings["batch.size"] = str(max(1, min(requested, max_message_bytes - _BATCH_FRAMING_BYTES)))
    return settings
