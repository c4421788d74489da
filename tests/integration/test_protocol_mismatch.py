"""A security.protocol the listener does not speak is named as such, quickly, against real listeners.

The plaintext test cluster (`clusters`) and the SASL_PLAINTEXT one (`sasl_cluster`) are probed with the wrong
protocol: the error is a SecurityProtocolMismatchError (a ClusterAuthenticationError, exit status 5), never
"unreachable", and it names the configured protocol and what the listener looks like.
"""

from __future__ import annotations

import time

import pytest

from sparkmirror.errors import ClusterAuthenticationError, ClusterUnreachableError, SecurityProtocolMismatchError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.testing.kafka_cluster import free_port

FAST_S = 5.0  # a mismatch is named within a few connection attempts, well before PROBE_TIMEOUT_S
SCRAM = {"sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "someone", "sasl.password": "anything"}
NOT_TLS = "the listener does not speak TLS (it looks like PLAINTEXT or SASL_PLAINTEXT)"


def probe_error(settings: dict[str, str]) -> tuple[Exception, float]:
    """The probe's error for cluster alias 'A' and how long it took."""
    started = time.monotonic()
    with pytest.raises(ClusterAuthenticationError) as info:
        ClusterAdmin("A", settings).probe()
    return info.value, time.monotonic() - started


def assert_mismatch(error: Exception, elapsed: float, bootstrap: str, protocol: str, listener: str) -> None:
    message = str(error)
    print(f"\n{elapsed:.1f} s: {message}")
    assert isinstance(error, SecurityProtocolMismatchError), message
    assert message.startswith(f"cluster 'A' at bootstrap.servers={bootstrap}: security.protocol={protocol} but "
                              f"{listener}; set 'A.security.protocol' to the listener's protocol"), message
    assert "librdkafka: " in message and "unreachable" not in message
    assert elapsed < FAST_S, f"took {elapsed:.1f} s"


@pytest.mark.parametrize("protocol", ["SSL", "SASL_SSL"])
def test_tls_against_the_plaintext_listener_says_it_does_not_speak_tls(clusters, protocol):
    settings = {"bootstrap.servers": clusters.source, "security.protocol": protocol,
                **(SCRAM if protocol == "SASL_SSL" else {})}
    assert_mismatch(*probe_error(settings), clusters.source, protocol, NOT_TLS)


def test_sasl_plaintext_against_the_plaintext_listener_says_it_takes_no_sasl(clusters):
    settings = {"bootstrap.servers": clusters.source, "security.protocol": "SASL_PLAINTEXT", **SCRAM}
    assert_mismatch(*probe_error(settings), clusters.source, "SASL_PLAINTEXT",
                    "the listener takes no SASL login (it looks like PLAINTEXT)")


def test_plaintext_against_the_sasl_listener_says_it_wants_a_login(sasl_cluster):
    for settings in ({"bootstrap.servers": sasl_cluster.bootstrap},
                     {"bootstrap.servers": sasl_cluster.bootstrap, "security.protocol": "plaintext"}):
        error, elapsed = probe_error(settings)
        assert_mismatch(error, elapsed, sasl_cluster.bootstrap, "PLAINTEXT",
                        "the listener answers ApiVersions, then closes the connection at the next request, as a "
                        "SASL listener does before a login (it looks like SASL_PLAINTEXT)")


def test_ssl_against_the_sasl_plaintext_listener_says_it_does_not_speak_tls(sasl_cluster):
    settings = {"bootstrap.servers": sasl_cluster.bootstrap, "security.protocol": "SSL"}
    assert_mismatch(*probe_error(settings), sasl_cluster.bootstrap, "SSL", NOT_TLS)


def test_right_protocol_wrong_password_and_no_listener_keep_their_own_errors(sasl_cluster):
    ClusterAdmin("A", sasl_cluster.librdkafka_settings()).probe()
    error, _ = probe_error({**sasl_cluster.librdkafka_settings(), "sasl.password": "not-the-password"})
    assert not isinstance(error, SecurityProtocolMismatchError) and "authentication failed" in str(error)
    dead = f"127.0.0.1:{free_port()}"
    for protocol in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT"):
        with pytest.raises(ClusterUnreachableError, match="is unreachable"):
            ClusterAdmin("A", {"bootstrap.servers": dead, "security.protocol": protocol, **SCRAM}).probe(2.0)

