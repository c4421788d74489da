"""Java client settings, as written in MM2 properties files, translated into librdkafka settings.

Every Java key ends up in exactly one place: translated, `ignored` (JVM-only, or without effect in this setting),
`unknown` (not a Java client key), dropped (a key of another client role, which that Java client would not read
either) or a problem in the ConfigError. The per-key rules are in rules.py, TLS in tls.py, SASL in sasl.py.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from sparkmirror.config.librdkafka.result import Result
from sparkmirror.config.librdkafka.rules import IGNORE, RULES, SAME, SECURITY, Ctx, Unfit
from sparkmirror.config.librdkafka.sasl import translate_sasl
from sparkmirror.config.librdkafka.tls import translate_tls
from sparkmirror.errors import ConfigError

logger = logging.getLogger(__name__)

ROLES = ("producer", "consumer", "admin")

# Java defaults that librdkafka does not share and that change what is read or written, or when a failure shows.
_JAVA_DEFAULTS = {
    "consumer": {"isolation.level": "read_uncommitted", "check.crcs": "true", "allow.auto.create.topics": "true"},
    "producer": {"partitioner": "murmur2_random", "delivery.timeout.ms": "120000", "message.max.bytes": "1048576",
                 "max.in.flight.requests.per.connection": "5"},
}


class _Settings(dict[str, str]):
    """A read-only dict (confluent-kafka wants a real dict) whose repr shows keys only: values may be secrets."""

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: '***'" for k in self) + "}"

    def __reduce__(self) -> tuple[type[_Settings], tuple[dict[str, str]]]:
        return _Settings, (dict(self),)  # pickle and copy without the blocked __setitem__

    def _read_only(self, *args: object, **kwargs: object) -> None:
        raise TypeError("translated client settings are read-only; copy them with dict(...)")

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = __ior__ = _read_only  # type: ignore


@dataclass(frozen=True, slots=True)
class Translation:
    """librdkafka settings for one client role, and the Java keys that were left out (with why, by list)."""

    settings: Mapping[str, str]
    ignored: tuple[str, ...]
    unknown: tuple[str, ...]

    def __repr__(self) -> str:
        return f"Translation(settings keys={sorted(self.settings)}, ignored={self.ignored}, unknown={self.unknown})"


def translate(java: Mapping[str, str], role: str, describe: Callable[[str], str] = str) -> Translation:
    """Translate one role's Java client settings; raise ConfigError listing every untranslatable one.

    Each problem starts with describe(key), then says what is wrong and what to do. Values never appear in it.
    """
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    result, ignored, unknown = Result(java, describe), [], []
    ctx = Ctx(java, role)
    for key, value in java.items():
        rule = RULES.get(key)
        if rule is None:
            unknown.append(key)
        elif role[0] not in rule[0] or rule[1] == SECURITY:
            continue
        elif rule[1] == IGNORE:
            ignored.append(key)
        elif rule[1] == SAME:
            result.settings[key] = value.strip()
        else:
            try:
                translated = rule[1](value.strip(), ctx)  # type: ignore[operator]
            except Unfit as exc:
                result.problem(key, str(exc))
                continue
            result.settings.update(translated)
            if not translated:
                ignored.append(key)
    _security(result)
    ignored += [k for k in java if RULES.get(k, ("", ""))[1] == SECURITY and k not in result.consumed]
    _apply_java_defaults(result, role)
    if result.problems:
        raise ConfigError(result.problems, credentials=result.credentials)
    return Translation(_Settings(result.settings), tuple(ignored), tuple(unknown))


def log_left_out(translation: Translation, role: str) -> None:
    """Name the Java keys a translation left out (never their values): unknown ones as a warning."""
    if translation.unknown:
        logger.warning("settings that are not Java client settings, left out of the %s client: %s",
                       role, ", ".join(translation.unknown))
    if translation.ignored:
        logger.info("Java client settings without effect on librdkafka, left out of the %s client: %s",
                    role, ", ".join(translation.ignored))


def librdkafka_settings(java: Mapping[str, str], role: str = "admin",
                        describe: Callable[[str], str] = str) -> dict[str, str]:
    """translate(...).settings as a plain dict; logs the left-out keys once per call.

    For settings outside a loaded configuration; a loaded one carries its translation (ClientSettings.rdkafka).
    """
    translation = translate(java, role, describe)
    log_left_out(translation, role)
    return dict(translation.settings)


def _apply_java_defaults(result: Result, role: str) -> None:
    settings = result.settings
    if role == "producer" and "transactional.id" in settings:
        _transaction_timeout(result)
    for key, value in _JAVA_DEFAULTS.get(role, {}).items():
        settings.setdefault(key, value)
    if role == "producer":
        _idempotence(result)


def _transaction_timeout(result: Result) -> None:
    """librdkafka refuses a transactional producer whose delivery timeout exceeds the transaction timeout."""
    limit = result.settings.get("transaction.timeout.ms", "60000")
    delivery = result.settings.get("delivery.timeout.ms")
    if not limit.isdigit() or (delivery is not None and not delivery.isdigit()):
        return
    if delivery is None:
        result.settings["delivery.timeout.ms"] = str(min(120_000, int(limit)))
    elif int(delivery) > int(limit):
        result.problem("delivery.timeout.ms", "librdkafka needs it <= transaction.timeout.ms for a transactional "
                       "producer; lower it or raise transaction.timeout.ms")


def _idempotence(result: Result) -> None:
    """Java enables idempotence unless told otherwise, and silently drops it when other settings conflict."""
    settings = result.settings
    in_flight = settings["max.in.flight.requests.per.connection"]
    conflicts = [text for text, bad in (
        ("acks=all", settings.get("acks", "all") not in ("all", "-1")),
        ("retries > 0", settings.get("retries", "1") == "0"),
        ("max.in.flight.requests.per.connection <= 5", in_flight.isdigit() and int(in_flight) > 5),
    ) if bad]
    explicit = settings.get("enable.idempotence")
    if explicit is None and not conflicts:
        settings["enable.idempotence"] = "true"
    elif explicit == "true" and conflicts:
        result.problem("enable.idempotence", f"true needs {' and '.join(conflicts)}; change those or set it to false")
    elif explicit == "false" and "transactional.id" in settings:
        result.problem("enable.idempotence", "false cannot be combined with transactional.id; remove one of them")


# -- security ------------------------------------------------------------------------------------------------------

_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


def _security(result: Result) -> None:
    protocol = (result.get("security.protocol") or "PLAINTEXT").upper()
    if protocol not in _PROTOCOLS:
        result.problem("security.protocol", f"must be one of {', '.join(_PROTOCOLS)}")
        return
    if "security.protocol" in result.java:
        result.settings["security.protocol"] = protocol
    if protocol in ("SSL", "SASL_SSL"):
        translate_tls(result)
    if protocol.startswith("SASL_"):
        translate_sasl(result)
