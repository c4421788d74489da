"""What the installed librdkafka build cannot do that translated client settings ask of it.

The confluent-kafka wheels are built without Kerberos (libsasl2), so GSSAPI, Java's default SASL mechanism, is
there only with another build. That is a fact of this machine, not of the configuration, so it is checked here,
on settings config/librdkafka has translated, rather than in the translation.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

from confluent_kafka import KafkaException, Producer


def missing_features(settings: Mapping[str, str], describe: Callable[[str], str] = str) -> list[str]:
    """Problems, each naming its key through describe, for librdkafka settings this build cannot serve."""
    if not settings.get("security.protocol", "PLAINTEXT").upper().startswith("SASL_"):
        return []
    mechanism = settings.get("sasl.mechanism")
    if (mechanism or "GSSAPI") != "GSSAPI" or _librdkafka_has("sasl_gssapi"):
        return []
    return [f"{describe('sasl.mechanism')}: GSSAPI{'' if mechanism else ' (the default)'} needs a librdkafka built "
            "with Kerberos (libsasl2), which this confluent-kafka lacks; install such a build or set another "
            "sasl.mechanism"]


@functools.cache
def _librdkafka_has(feature: str) -> bool:
    """Whether the installed librdkafka was built with a feature (builtin.features refuses what it lacks)."""
    try:
        Producer({"builtin.features": feature, "log_level": 0}).flush(0)
    except KafkaException:
        return False
    return True
