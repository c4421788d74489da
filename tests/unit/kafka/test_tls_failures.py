"""TLS failure texts as librdkafka 2.16 (OpenSSL 3) reports them, measured against a TLS server that requires
client certificates (see tests/e2e/test_tls_cli.py for the same against a broker)."""

from __future__ import annotations

import pytest

from sparkmirror.kafka.tls_failures import is_tls_alert, tls_key_to_fix

PREFIX = "ssl://127.0.0.1:52761/bootstrap: "
UNTRUSTED_BROKER = (PREFIX + "SSL handshake failed: error:0A000086:SSL routines::certificate verify failed: broker "
                    "certificate could not be verified, verify that ssl.ca.location is correctly configured or root "
                    "CA certificates are installed (install ca-certificates package) (after 2ms in state "
                    "SSL_HANDSHAKE)")
NO_CLIENT_CERTIFICATE = (PREFIX + "Receive failed: error:0A00045C:SSL routines::tlsv13 alert certificate required: "
                         "SSL alert number 116 (after 0ms in state APIVERSION_QUERY)")
UNTRUSTED_CLIENT = (PREFIX + "Receive failed: error:0A000418:SSL routines::tlsv1 alert unknown ca: SSL alert number "
                    "48 (after 1ms in state APIVERSION_QUERY)")
BAD_CERTIFICATE = (PREFIX + "Receive failed: error:0A000412:SSL routines::sslv3 alert bad certificate: SSL alert "
                   "number 42 (after 1ms in state APIVERSION_QUERY)")
CLOSED = PREFIX + "Disconnected: SSL connection closed by peer (after 4ms in state APIVERSION_QUERY)"
REFUSED = PREFIX + "Connect to ipv4#127.0.0.1:52761 failed: Connection refused (after 0ms in state CONNECT)"


@pytest.mark.parametrize(("failure", "key"), [
    (UNTRUSTED_BROKER, "ssl.truststore.location"),
    (NO_CLIENT_CERTIFICATE, "ssl.keystore.location"),
    (UNTRUSTED_CLIENT, "ssl.keystore.location"),
    (BAD_CERTIFICATE, "ssl.keystore.location"),
    (PREFIX + "SSL handshake failed: error:0A000086:SSL routines::certificate verify failed: Hostname mismatch",
     "ssl.endpoint.identification.algorithm"),
    (CLOSED, None),
    (REFUSED, None),
])
def test_each_failure_names_the_setting_to_fix(failure, key):
    assert tls_key_to_fix(failure) == key


def test_only_alerts_from_the_broker_are_refusals():
    assert is_tls_alert(NO_CLIENT_CERTIFICATE) and is_tls_alert(UNTRUSTED_CLIENT)
    assert not is_tls_alert(CLOSED) and not is_tls_alert(REFUSED)
