"""What librdkafka's (OpenSSL's) TLS failure texts say: whether the broker refused the client during the
handshake, and which SSL setting to fix.

A broker that refuses a client certificate (none, or one it does not trust) sends a TLS alert that, under
TLS 1.3, arrives after the client finished its side of the handshake: librdkafka reports it as a transport
failure ("Receive failed: ... alert certificate required: SSL alert number 116"), not as an SSL one, and
would retry it as an unreachable cluster. The texts are librdkafka 2.x's with OpenSSL 3.
"""

from __future__ import annotations

_ALERT = "ssl alert number"
_UNTRUSTED_BROKER = ("certificate verify failed",)
_HOSTNAME = ("hostname mismatch", "ip address mismatch")
_REFUSED_CLIENT = ("certificate required", "bad certificate", "unknown ca", "certificate unknown",
                   "unsupported certificate", "certificate expired", "certificate revoked", "access denied",
                   "handshake failure")


def is_tls_alert(failure: str) -> bool:
    """The peer ended the connection with a TLS alert (it refused this client), whatever state it was in."""
    return _ALERT in failure.lower()


def tls_key_to_fix(failure: str) -> str | None:
    """The client's SSL setting (as written in the properties file) a TLS failure points to; None if unclear."""
    text = failure.lower()
    if any(marker in text for marker in _HOSTNAME):
        return "ssl.endpoint.identification.algorithm"
    if any(marker in text for marker in _UNTRUSTED_BROKER):
        return "ssl.truststore.location"
    if any(marker in text for marker in _REFUSED_CLIENT):
        return "ssl.keystore.location"
    return None
