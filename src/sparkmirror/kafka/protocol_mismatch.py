"""What librdkafka's connection failures say of a listener that speaks another security.protocol than the client.

A client with the wrong security.protocol sees the listener close connections, which alone looks like an
unreachable cluster; the texts of the failures (and the state the connection broke in) tell the two apart.
"""

from __future__ import annotations

import logging
import re
from collections import deque

_librdkafka_logger = logging.getLogger("sparkmirror.librdkafka")

_FAILURE_STATE = re.compile(r"\(after \d+ms in state (\w+)\)")
FAILURE_PREFIX = re.compile(r"^(\[thrd:[^\]]*\]: )?\S+/(bootstrap|\d+): ")
"""librdkafka's thread and broker prefix of a failure text."""


class FailureLog:
    """librdkafka's `logger`: passes every line on and keeps the latest connection failures (facility FAIL).

    Some protocol mismatches reach only the log, not error_cb: a listener closing the connection is an
    INFO-level close to librdkafka.
    """

    def __init__(self) -> None:
        self.recent: deque[str] = deque(maxlen=8)

    def log(self, level: int, msg: str, *args: object) -> None:
        _librdkafka_logger.log(level, msg, *args)
        if len(args) == 3 and args[0] == "FAIL":  # confluent-kafka calls log(level, "%s [%s] %s", fac, name, text)
            self.recent.append(str(args[2]))


def latest_mismatch(protocol: str, failures: list[str], inferred: bool = False,
                    final: bool = False) -> tuple[str, str] | None:
    """(what the listener looks like, the latest failure without its prefix) when the latest run of failures
    shows a listener that does not speak `protocol`; None otherwise.

    `inferred`: also the mismatches read from where the connection broke, only safe before the cluster
    ever answered (a probe). `final`: the probe is out of time, so one such failure is enough.
    """
    found, run = None, 0
    for failure in reversed(failures):  # the latest run of failures that name the same mismatch
        mismatch = listener_mismatch(protocol, failure)
        if mismatch is None or (found is not None and mismatch[0] != found[0]):
            break
        found, run = mismatch, run + 1
    if found is None or (found[2] and not inferred) or run < (1 if final else found[1]):
        return None
    return found[0], FAILURE_PREFIX.sub("", failures[-1])


def listener_mismatch(protocol: str, failure: str) -> tuple[str, int, bool] | None:
    """What a connection failure says of a listener that does not speak `protocol`; None if it says nothing.

    Returns (what the listener looks like, failures in a row that prove it, whether that is only inferred
    from the state the connection broke in). The texts are librdkafka 2.x's, measured against real
    listeners (see tests/unit/kafka/test_protocol_mismatch.py).
    """
    found = _FAILURE_STATE.search(failure)
    state = found.group(1) if found else ""
    tls, sasl = protocol in ("SSL", "SASL_SSL"), protocol in ("SASL_PLAINTEXT", "SASL_SSL")
    if sasl and "Request not valid in current SASL state" in failure:  # the broker's answer: no SASL here
        return f"the listener takes no SASL login (it looks like {'SSL' if tls else 'PLAINTEXT'})", 1, False
    if tls and state == "SSL_HANDSHAKE" and "Disconnected" in failure:  # closed without a TLS alert
        return "the listener does not speak TLS (it looks like PLAINTEXT or SASL_PLAINTEXT)", 2, False
    if not tls and ("connecting to a SSL listener?" in failure
                    or (state == "APIVERSION_QUERY" and "Disconnected" in failure)):
        return ("the listener closes the connection before answering the first request, as a TLS listener "
                "does (it looks like SSL or SASL_SSL)", 3, True)
    if not sasl and state == "UP" and "Disconnected" in failure:
        return ("the listener answers ApiVersions, then closes the connection at the next request, as a SASL "
                f"listener does before a login (it looks like {'SASL_SSL' if tls else 'SASL_PLAINTEXT'})", 3, True)
    return None
