"""What the librdkafka translation tests share: test secrets, Java settings builders, problem checks and a small PKI."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from sparkmirror.config.librdkafka import translate
from sparkmirror.errors import ConfigError
from sparkmirror.testing.tls_material import encrypt_pkcs8_3des

SECRET = "s3cr3t-Value"  # noqa: S105 - every test secret contains it, so a leak is one substring check
STORE_PASSWORD = "store-" + SECRET
KEY_PASSWORD = "key-" + SECRET
SCRAM_JAAS = (f'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" '
              f'password="{SECRET}";')
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"


def where(key: str) -> str:
    return f"B.{key} (mm2.properties:12)"


def problems_of(java: dict[str, str], role: str = "admin") -> list[str]:
    with pytest.raises(ConfigError) as info:
        translate(java, role, where)
    assert SECRET not in str(info.value)
    return info.value.problems


def only_problem(java: dict[str, str], key: str, role: str = "admin") -> str:
    problems = problems_of(java, role)
    assert len(problems) == 1, problems
    assert problems[0].startswith(where(key) + ": ")
    return problems[0]


def ssl(**extra: str) -> dict[str, str]:
    return {"bootstrap.servers": "b:9093", "security.protocol": "SSL", **extra}


def sasl(mechanism: str | None, jaas: str | None, **extra: str) -> dict[str, str]:
    java = {"security.protocol": "SASL_SSL", **extra}
    if mechanism:
        java["sasl.mechanism"] = mechanism
    if jaas is not None:
        java["sasl.jaas.config"] = jaas
    return java


# -- generated certificates and stores -------------------------------------------------------------------------------

def _certificate(subject: str, key: ec.EllipticCurvePrivateKey, issuer: str, issuer_key: ec.EllipticCurvePrivateKey,
                 ca: bool) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    return (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
            .sign(issuer_key, hashes.SHA256()))


class Pki:
    """A self-signed CA and a client certificate it signed, written in the formats Java users have."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.ca_key = ec.generate_private_key(ec.SECP256R1())
        self.ca = _certificate("test-ca", self.ca_key, "test-ca", self.ca_key, ca=True)
        self.client_key = ec.generate_private_key(ec.SECP256R1())
        self.client = _certificate("client", self.client_key, "test-ca", self.ca_key, ca=False)
        self.ca_pem = self.ca.public_bytes(serialization.Encoding.PEM).decode()
        self.client_pem = self.client.public_bytes(serialization.Encoding.PEM).decode()

    def write(self, name: str, data: bytes | str) -> str:
        path = self.folder / name
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return str(path)

    def key_pem(self, password: str | None = None, pbes2: bool = False) -> str:
        """PKCS#8, encrypted with `password` if given: by PKCS#12's 3DES scheme (what Java can read), or with
        `pbes2` by PBES2 (`openssl pkcs8 -topk8`'s default, which Java cannot)."""
        if password and not pbes2:
            return encrypt_pkcs8_3des(self.client_key, password).decode()
        encryption = (serialization.BestAvailableEncryption(password.encode()) if password
                      else serialization.NoEncryption())
        return self.client_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                             encryption).decode()

    def pkcs12_truststore(self) -> str:
        data = pkcs12.serialize_key_and_certificates(
            b"ca", None, None, [self.ca], serialization.BestAvailableEncryption(STORE_PASSWORD.encode()))
        return self.write("truststore.p12", data)

    def pkcs12_keystore(self) -> str:
        data = pkcs12.serialize_key_and_certificates(
            b"client", self.client_key, self.client, [self.ca],
            serialization.BestAvailableEncryption(STORE_PASSWORD.encode()))
        return self.write("keystore.p12", data)
