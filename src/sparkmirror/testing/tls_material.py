"""Test certificates made in Python: a CA, broker and client identities, and the files Java and librdkafka read.

The stores are the ones a Kafka user has: PEM (a key and its chain in one file, the key PKCS#8, optionally
encrypted: what Java's PEM key store and librdkafka both read) and PKCS12 (a Java trust store whose entries are
marked trusted, and key stores). Keys are EC P-256: fast to make, and both TLS stacks take them.

Encrypted PEM keys use PKCS#12's pbeWithSHAAnd3-KeyTripleDES-CBC (RFC 7292), as Kafka's own tests do: Kafka's
PEM key store (JDK 17) has no SecretKeyFactory for PBES2, the scheme `cryptography` and `openssl pkcs8` write
by default ("PBES2 SecretKeyFactory not available").
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import ipaddress
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
from cryptography.hazmat.primitives import hashes, padding, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers import Cipher, modes
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = datetime.timedelta(days=2)
CLOCK_SKEW = datetime.timedelta(hours=1)  # certificates start a little in the past: clocks differ
SERVER_HOSTS = ("localhost",)
SERVER_IPS = ("127.0.0.1",)
PBE_ITERATIONS = 2048
_PBE_SHA1_3DES_OID = bytes.fromhex("060a2a864886f70d010c0103")  # 1.2.840.113549.1.12.1.3, DER


def _der(tag: int, body: bytes) -> bytes:
    size = len(body)
    if size < 0x80:
        return bytes([tag, size]) + body
    octets = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(octets)]) + octets + body


def _pkcs12_kdf(password: bytes, salt: bytes, purpose: int, size: int, iterations: int) -> bytes:
    """RFC 7292 appendix B.2 with SHA-1: `purpose` 1 derives the key, 2 the IV."""
    block, digest = 64, 20

    def fill(data: bytes) -> bytes:  # repeated up to the next multiple of the block size
        length = block * -(-len(data) // block)
        return (data * (length // len(data) + 1))[:length] if data else b""

    seed = bytearray(fill(salt) + fill(password))
    out = b""
    while len(out) < size:
        a = bytes([purpose]) * block + bytes(seed)
        for _ in range(iterations):
            a = hashlib.sha1(a).digest()  # noqa: S324 - the algorithm RFC 7292 prescribes, not a security choice
        out += a
        b = int.from_bytes((a * (block // digest + 1))[:block], "big")
        for i in range(0, len(seed), block):
            chunk = (int.from_bytes(seed[i:i + block], "big") + b + 1) % (1 << (8 * block))
            seed[i:i + block] = chunk.to_bytes(block, "big")
    return out[:size]


def encrypt_pkcs8_3des(key: ec.EllipticCurvePrivateKey, password: str) -> bytes:
    """The key as an ENCRYPTED PRIVATE KEY PEM block, pbeWithSHAAnd3-KeyTripleDES-CBC (what Java's PEM key
    store, librdkafka and `cryptography` all read)."""
    plain = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption())
    secret, salt = password.encode("utf-16-be") + b"\x00\x00", os.urandom(8)
    cipher = Cipher(TripleDES(_pkcs12_kdf(secret, salt, 1, 24, PBE_ITERATIONS)),
                    modes.CBC(_pkcs12_kdf(secret, salt, 2, 8, PBE_ITERATIONS))).encryptor()
    padder = padding.PKCS7(64).padder()
    encrypted = cipher.update(padder.update(plain) + padder.finalize()) + cipher.finalize()
    params = _der(0x30, _der(0x04, salt) + _der(0x02, PBE_ITERATIONS.to_bytes(2, "big")))
    der = _der(0x30, _der(0x30, _PBE_SHA1_3DES_OID + params) + _der(0x04, encrypted))
    text = base64.b64encode(der)
    lines = [text[i:i + 64] + b"\n" for i in range(0, len(text), 64)]
    return b"".join([b"-----BEGIN ENCRYPTED PRIVATE KEY-----\n", *lines, b"-----END ENCRYPTED PRIVATE KEY-----\n"])


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "sparkmirror tests"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePrivateKey,
             now: datetime.datetime) -> x509.CertificateBuilder:
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - CLOCK_SKEW).not_valid_after(now + VALIDITY))


@dataclass(frozen=True)
class Identity:
    """A private key with its certificate, and the CA certificate that signed it (the rest of its chain)."""

    key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate
    ca_certificate: x509.Certificate

    @property
    def common_name(self) -> str:
        return str(self.certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value)

    def key_pem(self, password: str | None = None) -> bytes:
        """The key as PKCS#8 PEM, encrypted with `password` if given (an ENCRYPTED PRIVATE KEY block)."""
        if password is not None:
            return encrypt_pkcs8_3des(self.key, password)
        return self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption())

    def chain_pem(self) -> bytes:
        """The certificate, then its CA's: the chain a peer is sent."""
        return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in (self.certificate, self.ca_certificate))

    def pem(self, password: str | None = None) -> bytes:
        """A PEM key store: the key (encrypted if `password`), then the chain."""
        return self.key_pem(password) + self.chain_pem()

    def pkcs12(self, password: str) -> bytes:
        """A PKCS12 key store holding the key and chain under one password (what Java's key store and
        librdkafka's ssl.keystore.* read)."""
        return pkcs12.serialize_key_and_certificates(
            self.common_name.encode(), self.key, self.certificate, [self.ca_certificate],
            serialization.BestAvailableEncryption(password.encode()))


@dataclass(frozen=True)
class CertificateAuthority:
    """A self-signed CA that issues server and client certificates."""

    key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate

    @classmethod
    def create(cls, name: str = "sparkmirror test CA") -> CertificateAuthority:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        cert = (_builder(_name(name), _name(name), key, now)
                .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                             content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False, encipher_only=False,
                                             decipher_only=False), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                .sign(key, hashes.SHA256()))
        return cls(key, cert)

    def issue(self, common_name: str, hosts: Sequence[str] = (), ips: Sequence[str] = (),
              server: bool = False) -> Identity:
        """A leaf identity; `server` makes it a TLS server certificate whose SANs are `hosts` and `ips`
        (the names clients check it against), otherwise a client certificate."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (_builder(_name(common_name), self.certificate.subject, key, now)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()),
                                  critical=False))
        names: list[x509.GeneralName] = [x509.DNSName(h) for h in hosts]
        names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        return Identity(key, builder.sign(self.key, hashes.SHA256()), self.certificate)

    def issue_server(self, common_name: str = "localhost") -> Identity:
        """A broker certificate valid for the loopback listeners (SAN localhost and 127.0.0.1)."""
        return self.issue(common_name, SERVER_HOSTS, SERVER_IPS, server=True)


def trust_pem(cas: Iterable[CertificateAuthority]) -> bytes:
    """A PEM trust store: the CA certificates, one after the other."""
    return b"".join(ca.certificate.public_bytes(serialization.Encoding.PEM) for ca in cas)


def trust_pkcs12(cas: Iterable[CertificateAuthority], password: str) -> bytes:
    """A PKCS12 trust store Java reads as trusted entries (they carry Java's trusted-key-usage attribute)."""
    certs = [pkcs12.PKCS12Certificate(ca.certificate, f"ca-{i}".encode()) for i, ca in enumerate(cas)]
    return pkcs12.serialize_java_truststore(certs, serialization.BestAvailableEncryption(password.encode()))


@dataclass(frozen=True)
class StoreFiles:
    """One identity's key stores on disk, and the trust store of its CA."""

    pem: Path             # key (not encrypted) + chain
    encrypted_pem: Path   # key encrypted with key_password + chain
    pkcs12: Path          # key + chain, protected by store_password
    key_password: str
    store_password: str


@dataclass(frozen=True)
class TrustFiles:
    pem: Path
    pkcs12: Path
    password: str


def write_trust(directory: Path, name: str, cas: Sequence[CertificateAuthority], password: str) -> TrustFiles:
    """`<name>.pem` and `<name>.p12` trust stores of `cas` in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    files = TrustFiles(directory / f"{name}.pem", directory / f"{name}.p12", password)
    files.pem.write_bytes(trust_pem(cas))
    files.pkcs12.write_bytes(trust_pkcs12(cas, password))
    return files


def write_identity(directory: Path, name: str, identity: Identity, key_password: str,
                   store_password: str) -> StoreFiles:
    """`<name>.pem`, `<name>-encrypted.pem` and `<name>.p12` key stores of `identity` in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    files = StoreFiles(directory / f"{name}.pem", directory / f"{name}-encrypted.pem", directory / f"{name}.p12",
                       key_password, store_password)
    files.pem.write_bytes(identity.pem())
    files.encrypted_pem.write_bytes(identity.pem(key_password))
    files.pkcs12.write_bytes(identity.pkcs12(store_password))
    for path in (files.pem, files.encrypted_pem, files.pkcs12):
        path.chmod(0o600)
    return files
