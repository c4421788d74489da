"""The test CA and stores: what Java's and librdkafka's TLS need of them, checked without a broker."""

from __future__ import annotations

import base64
import ipaddress

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID

from sparkmirror.config.librdkafka import translate
from sparkmirror.errors import ConfigError
from sparkmirror.testing.tls_material import CertificateAuthority, trust_pem, write_identity, write_trust


@pytest.fixture(scope="module")
def ca() -> CertificateAuthority:
    return CertificateAuthority.create()


def test_the_ca_is_a_self_signed_ca(ca):
    cert = ca.certificate
    assert cert.issuer == cert.subject
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    cert.verify_directly_issued_by(cert)


def test_server_certificate_is_signed_by_the_ca_for_the_loopback_names(ca):
    server = ca.issue_server()
    server.certificate.verify_directly_issued_by(ca.certificate)
    sans = server.certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["localhost"]
    assert sans.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    usage = server.certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert not server.certificate.extensions.get_extension_for_class(x509.BasicConstraints).value.ca


def test_client_certificate_names_its_principal_and_is_for_clients(ca):
    client = ca.issue("mirror")
    client.certificate.verify_directly_issued_by(ca.certificate)
    assert client.common_name == "mirror"
    usage = client.certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.CLIENT_AUTH]


def test_another_ca_does_not_sign_the_same_certificates(ca):
    other = CertificateAuthority.create("other")
    with pytest.raises((ValueError, TypeError)):
        ca.issue("x").certificate.verify_directly_issued_by(other.certificate)


def test_encrypted_pem_key_opens_only_with_its_password_in_a_scheme_java_reads(ca):
    pem = ca.issue("mirror").pem("s3cret")
    key_block = pem[:pem.index(b"-----END ENCRYPTED PRIVATE KEY-----") + 35]
    assert key_block.startswith(b"-----BEGIN ENCRYPTED PRIVATE KEY-----")  # PKCS#8, as Java's PEM store needs
    assert pem.count(b"-----BEGIN CERTIFICATE-----") == 2  # the certificate, then the CA's
    der = base64.b64decode(b"".join(key_block.splitlines()[1:-1]))
    assert bytes.fromhex("060a2a864886f70d010c0103") in der[:20]  # pbeWithSHAAnd3-KeyTripleDES-CBC, not PBES2
    serialization.load_pem_private_key(key_block, b"s3cret")
    with pytest.raises(ValueError):
        serialization.load_pem_private_key(key_block, b"wrong")
    with pytest.raises(TypeError):
        serialization.load_pem_private_key(key_block, None)


def test_plain_pem_key_is_pkcs8_without_encryption(ca):
    pem = ca.issue("mirror").pem()
    assert pem.startswith(b"-----BEGIN PRIVATE KEY-----")
    serialization.load_pem_private_key(pem, None)


def test_pkcs12_key_store_holds_the_key_and_chain(ca):
    identity = ca.issue("mirror")
    store = pkcs12.load_pkcs12(identity.pkcs12("pw"), b"pw")
    assert store.cert is not None and store.cert.certificate == identity.certificate
    assert [c.certificate for c in store.additional_certs] == [ca.certificate]
    assert store.key is not None
    with pytest.raises(ValueError):
        pkcs12.load_pkcs12(identity.pkcs12("pw"), b"other")


def test_trust_stores_hold_only_the_ca_certificates(tmp_path, ca):
    files = write_trust(tmp_path, "ca", [ca], "pw")
    store = pkcs12.load_pkcs12(files.pkcs12.read_bytes(), b"pw")
    assert store.key is None and [c.certificate for c in store.additional_certs] == [ca.certificate]
    assert files.pem.read_bytes() == trust_pem([ca])


def test_written_key_stores_are_private_and_readable_by_the_control_plane_translation(tmp_path, ca):
    trust = write_trust(tmp_path, "ca", [ca], "tpw")
    files = write_identity(tmp_path, "mirror", ca.issue("mirror"), "kpw", "spw")
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in (files.pem, files.encrypted_pem, files.pkcs12))
    pem = translate({"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location":
                     str(trust.pem), "ssl.keystore.type": "PEM", "ssl.keystore.location": str(files.encrypted_pem),
                     "ssl.key.password": "kpw"}, "admin").settings
    assert pem["ssl.ca.location"] == str(trust.pem) and pem["ssl.key.location"] == str(files.encrypted_pem)
    p12 = translate({"security.protocol": "SSL", "ssl.truststore.type": "PKCS12", "ssl.truststore.location":
                     str(trust.pkcs12), "ssl.truststore.password": "tpw", "ssl.keystore.type": "PKCS12",
                     "ssl.keystore.location": str(files.pkcs12), "ssl.keystore.password": "spw"}, "admin").settings
    assert x509.load_pem_x509_certificate(p12["ssl.ca.pem"].encode()) == ca.certificate
    assert p12["ssl.keystore.location"] == str(files.pkcs12)
    with pytest.raises(ConfigError, match="wrong ssl.key.password"):
        translate({"security.protocol": "SSL", "ssl.keystore.type": "PEM",
                   "ssl.keystore.location": str(files.encrypted_pem), "ssl.key.password": "nope"}, "admin")
