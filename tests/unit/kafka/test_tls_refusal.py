"""A broker that refuses the client's certificate, or that the client does not trust, is a TLS failure
naming the setting to fix, not an unreachable cluster. The "broker" is a Python TLS server on loopback that
requires client certificates: the handshake is real (librdkafka's OpenSSL against Python's), no Kafka needed."""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sparkmirror.errors import ClusterAuthenticationError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.testing.tls_material import CertificateAuthority, StoreFiles, write_identity, write_trust

PROBE_S = 5.0


class TlsServer:
    """Accepts TLS connections that present a certificate of `trust`, then closes them."""

    def __init__(self, identity: StoreFiles, trust: Path) -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(str(identity.pem))
        self.context.load_verify_locations(str(trust))
        self.context.verify_mode = ssl.CERT_REQUIRED
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return  # closed
            try:
                with self.context.wrap_socket(conn, server_side=True) as tls:
                    tls.recv(1)
            except (OSError, ssl.SSLError):
                pass  # the refusals under test
            finally:
                conn.close()

    def close(self) -> None:
        self.listener.shutdown(socket.SHUT_RDWR)  # wakes accept()
        self.listener.close()
        self.thread.join(5)
        assert not self.thread.is_alive()


@pytest.fixture(scope="module")
def material(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tls")
    ca, other = CertificateAuthority.create(), CertificateAuthority.create("other")
    return {"trust": write_trust(folder, "ca", [ca], "t"), "other_trust": write_trust(folder, "other", [other], "t"),
            "server": write_identity(folder, "server", ca.issue_server(), "k", "s"),
            "client": write_identity(folder, "client", ca.issue("mirror"), "k", "s")}


@pytest.fixture
def server(material) -> Iterator[TlsServer]:
    started = TlsServer(material["server"], material["trust"].pem)
    yield started
    started.close()


def probe(server: TlsServer, **settings: str) -> ClusterAuthenticationError:
    admin = ClusterAdmin("A", {"bootstrap.servers": f"127.0.0.1:{server.port}", "security.protocol": "SSL",
                               **settings})
    with pytest.raises(ClusterAuthenticationError) as info:
        admin.probe(PROBE_S)
    return info.value


def test_missing_client_certificate_names_the_key_store(server, material):
    error = probe(server, **{"ssl.ca.location": str(material["trust"].pem)})
    assert "the TLS handshake failed" in str(error) and "certificate required" in str(error)
    assert "Check 'A.ssl.keystore.location'" in str(error)


def test_untrusted_broker_names_the_trust_store(server, material):
    client = material["client"]
    error = probe(server, **{"ssl.ca.location": str(material["other_trust"].pem),
                             "ssl.certificate.location": str(client.pem), "ssl.key.location": str(client.pem)})
    assert "certificate verify failed" in str(error) and "Check 'A.ssl.truststore.location'" in str(error)
