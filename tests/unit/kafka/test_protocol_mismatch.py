"""Which librdkafka connection failures reveal a security.protocol mismatch, on the texts librdkafka 2.16 wrote.

Each FAILURE text was recorded from a real broker listener (PLAINTEXT, SASL_PLAINTEXT, and an SSL listener
made for the measurement); tests/integration/test_protocol_mismatch.py checks the probe end to end.
"""

from __future__ import annotations

import pytest

from sparkmirror.kafka.protocol_mismatch import FAILURE_PREFIX, latest_mismatch, listener_mismatch

TLS_TO_PLAIN = ("[thrd:ssl://127.0.0.1:49583/bootstrap]: ssl://127.0.0.1:49583/bootstrap: SSL handshake failed: "
                "Disconnected: SSL connection closed by peer: connecting to a PLAINTEXT broker listener? (after 3ms "
                "in state SSL_HANDSHAKE)")
TLS_TO_PLAIN_SHORT = ("[thrd:ssl://127.0.0.1:49583/bootstrap]: ssl://127.0.0.1:49583/bootstrap: Disconnected: SSL "
                      "connection closed by peer (after 1ms in state SSL_HANDSHAKE)")
SASL_TO_NO_SASL = ("[thrd:sasl_plaintext://127.0.0.1:49583/bootstrap]: sasl_plaintext://127.0.0.1:49583/bootstrap: "
                   "SASL SCRAM-SHA-512 mechanism handshake failed: Broker: Request not valid in current SASL state: "
                   "broker's supported mechanisms:  (after 4ms in state AUTH_HANDSHAKE)")
NO_SASL_TO_SASL = ("[thrd:127.0.0.1:54847/bootstrap]: 127.0.0.1:54847/bootstrap: Disconnected: connection closed by "
                   "peer: receive 0 after POLLIN (after 2ms in state UP)")
NO_TLS_TO_TLS = ("[thrd:127.0.0.1:39135/bootstrap]: 127.0.0.1:39135/bootstrap: Disconnected: connection closed by "
                 "peer: receive 0 after POLLIN (after 1ms in state APIVERSION_QUERY)")
REFUSED = ("[thrd:127.0.0.1:1/bootstrap]: 127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: Connection "
           "refused (after 0ms in state CONNECT)")
BAD_LOGIN = ("[thrd:sasl_plaintext://127.0.0.1:54847/bootstrap]: sasl_plaintext://127.0.0.1:54847/bootstrap: "
                  "SASL authentication error: Authentication failed during authentication due to invalid credentials "
                  "with SASL mechanism SCRAM-SHA-512 (after 323ms in state AUTH_REQ)")
UNTRUSTED = ("[thrd:ssl://127.0.0.1:39135/bootstrap]: ssl://127.0.0.1:39135/bootstrap: SSL handshake failed: "
             "error:0A000086:SSL routines::certificate verify failed: broker certificate could not be verified, "
             "verify that ssl.ca.location is correctly configured or root CA certificates are installed (install "
             "ca-certificates package) (after 24ms in state SSL_HANDSHAKE)")


@pytest.mark.parametrize(("protocol", "failure", "looks_like", "needed", "inferred"), [
    ("SSL", TLS_TO_PLAIN, "PLAINTEXT or SASL_PLAINTEXT", 2, False),
    ("SASL_SSL", TLS_TO_PLAIN_SHORT, "PLAINTEXT or SASL_PLAINTEXT", 2, False),
    ("SASL_PLAINTEXT", SASL_TO_NO_SASL, "PLAINTEXT", 1, False),
    ("SASL_SSL", SASL_TO_NO_SASL.replace("sasl_plaintext", "sasl_ssl"), "SSL", 1, False),
    ("PLAINTEXT", NO_SASL_TO_SASL, "SASL_PLAINTEXT", 3, True),
    ("SSL", NO_SASL_TO_SASL, "SASL_SSL", 3, True),
    ("PLAINTEXT", NO_TLS_TO_TLS, "SSL or SASL_SSL", 3, True),
    ("SASL_PLAINTEXT", NO_TLS_TO_TLS, "SSL or SASL_SSL", 3, True),
])
def test_failures_that_only_a_mismatch_explains(protocol, failure, looks_like, needed, inferred):
    listener, got_needed, got_inferred = listener_mismatch(protocol, failure)
    assert listener.endswith(f"(it looks like {looks_like})")
    assert (got_needed, got_inferred) == (needed, inferred)


@pytest.mark.parametrize(("protocol", "failure"), [
    ("PLAINTEXT", REFUSED), ("SSL", REFUSED), ("SASL_PLAINTEXT", BAD_LOGIN), ("SSL", UNTRUSTED),
    ("PLAINTEXT", TLS_TO_PLAIN), ("SASL_PLAINTEXT", NO_SASL_TO_SASL), ("SSL", NO_TLS_TO_TLS),
    ("PLAINTEXT", SASL_TO_NO_SASL),
])
def test_other_failures_say_nothing_about_the_protocol(protocol, failure):
    assert listener_mismatch(protocol, failure) is None


def test_the_failure_is_quoted_without_librdkafka_thread_and_broker_prefixes():
    assert FAILURE_PREFIX.sub("", NO_SASL_TO_SASL) == ("Disconnected: connection closed by peer: receive 0 after "
                                                       "POLLIN (after 2ms in state UP)")
    learned = "127.0.0.1:9092/1: Disconnected (after 5ms in state UP)"
    assert FAILURE_PREFIX.sub("", learned) == "Disconnected (after 5ms in state UP)"


def test_a_run_of_the_same_mismatch_is_needed_unless_the_probe_is_out_of_time():
    assert latest_mismatch("SASL_PLAINTEXT", [REFUSED, NO_TLS_TO_TLS, NO_TLS_TO_TLS], inferred=True) is None
    assert latest_mismatch("SASL_PLAINTEXT", [REFUSED, NO_TLS_TO_TLS], inferred=True, final=True) == (
        listener_mismatch("SASL_PLAINTEXT", NO_TLS_TO_TLS)[0], FAILURE_PREFIX.sub("", NO_TLS_TO_TLS))
    assert latest_mismatch("SASL_PLAINTEXT", [NO_TLS_TO_TLS] * 3) is None, "inferred only: not after an answer"
    assert latest_mismatch("SASL_PLAINTEXT", [SASL_TO_NO_SASL])[0].startswith("the listener takes no SASL login")
