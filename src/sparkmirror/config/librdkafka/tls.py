"""SSL settings of a Java client into librdkafka's: trust and key stores (read, sniffed, PKCS12 or PEM) and TLS options.

Reads the store files it is pointed at to catch what librdkafka would only report at connection time.
"""

from __future__ import annotations

import base64
import re
import shlex
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from sparkmirror.config.librdkafka.result import Result

_PEM_CERT = b"-----BEGIN CERTIFICATE-----"
_PEM_KEY = re.compile(rb"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY-----.+?-----END \1PRIVATE KEY-----", re.DOTALL)


def translate_tls(result: Result) -> None:
    """The trust store, client identity and TLS options of an SSL or SASL_SSL client, collected into result."""
    _trust(result)
    _identity(result)
    _tls(result)


def _read_store(result: Result, key: str, path: str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        result.problem(key, f"cannot read {path}: {exc.strerror or exc}")
        return None


def _sniff(data: bytes) -> str:
    """The actual store format: Java's JKS keystore type reads PKCS12 files too, so the type key can mislead."""
    if data[:4] == b"\xfe\xed\xfe\xed":
        return "JKS"
    if data[:4] == b"\xce\xce\xce\xce":
        return "JCEKS"
    if b"-----BEGIN " in data:
        return "PEM"
    return "PKCS12" if data[:1] == b"\x30" else "unknown"


def _convert_hint(key: str, path: str, fmt: str) -> str:
    target = shlex.quote(path + ".p12")
    store = key.rsplit(".", 1)[0]
    return (f"{path} is a {fmt} key store, which librdkafka cannot read; convert it with `keytool -importkeystore "
            f"-srckeystore {shlex.quote(path)} -srcstoretype {fmt} -destkeystore {target} -deststoretype PKCS12` "
            f"and set {store}.location={path}.p12 and {store}.type=PKCS12 (keep {store}.password)")


def _load_pkcs12(result: Result, key: str, path: str, data: bytes,
                 password: str | None) -> pkcs12.PKCS12KeyAndCertificates | None:
    try:
        return pkcs12.load_pkcs12(data, password.encode() if password is not None else None)
    except ValueError:
        pw_key = key.rsplit(".", 1)[0] + ".password"
        why = f"{pw_key} is not set" if password is None else f"wrong {pw_key}, or the file is damaged"
        result.problem(key, f"cannot open the PKCS12 store {path}: {why}", None if password is None else pw_key)
        return None


def _trust(result: Result) -> None:
    store_type = (result.get("ssl.truststore.type") or "JKS").upper()
    location, certificates = result.get("ssl.truststore.location"), result.get("ssl.truststore.certificates", False)
    password = result.get("ssl.truststore.password", strip=False)
    if certificates is not None:
        if store_type != "PEM" or location is not None:
            result.problem("ssl.truststore.certificates",
                           "needs ssl.truststore.type=PEM and no ssl.truststore.location; fix those keys")
        elif _PEM_CERT.decode() not in certificates:
            result.problem("ssl.truststore.certificates", "holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        else:
            result.settings["ssl.ca.pem"] = certificates
        return
    if location is None or (data := _read_store(result, "ssl.truststore.location", location)) is None:
        return
    fmt = _sniff(data)
    if fmt == "PEM" and _PEM_CERT in data:
        result.settings["ssl.ca.location"] = location
    elif fmt == "PKCS12":
        # librdkafka has no PKCS12 trust store, so the certificates travel as one PEM string.
        store = _load_pkcs12(result, "ssl.truststore.location", location, data, password)
        if store is not None:
            certs = [c.certificate for c in store.additional_certs] + ([store.cert.certificate] if store.cert else [])
            if certs:
                result.settings["ssl.ca.pem"] = "".join(c.public_bytes(serialization.Encoding.PEM).decode()
                                                        for c in certs)
            else:
                result.problem("ssl.truststore.location", f"{location} holds no certificate")
    elif fmt in ("JKS", "JCEKS"):
        result.problem("ssl.truststore.location", _convert_hint("ssl.truststore.location", location, fmt))
    else:
        result.problem("ssl.truststore.location", f"{location} is not a JKS, PKCS12 or PEM certificate file")


def _check_pem_key(result: Result, key: str, pem: bytes, password: str | None, where: str) -> bool:
    """Catch a missing certificate or key, or a wrong key password, before librdkafka fails on them."""
    match = _PEM_KEY.search(pem)
    if match is None or _PEM_CERT not in pem:
        result.problem(key, f"{where} needs a certificate and a private key in PEM format")
        return False
    try:
        serialization.load_pem_private_key(match.group(), password.encode() if password is not None else None)
    except TypeError:  # encrypted without a password, or a password for a plain key (which librdkafka ignores)
        if password is None:
            result.problem(key, f"the private key in {where} is encrypted; set ssl.key.password", "ssl.key.password")
            return False
    except ValueError:
        result.problem(key, f"cannot read the private key in {where}: wrong ssl.key.password, or not a PEM key",
                       "ssl.key.password")
        return False
    if _uses_pbes2(match.group()):
        result.problem(key, f"the private key in {where} is encrypted with PBES2 (the default of `openssl pkcs8 "
                            f"-topk8`), which Java's Kafka clients cannot decrypt (\"PBES2 SecretKeyFactory not "
                            f"available\", JDK-8231581), so Spark's source and the record path's writer would "
                            f"fail; re-encrypt it with `openssl pkcs8 -topk8 -v1 PBE-SHA1-3DES -in KEY.pem -out "
                            f"KEY-3des.pem`, or use a PKCS12 key store")
        return False
    return True


_ENCRYPTED_BLOCK = re.compile(rb"-----BEGIN ENCRYPTED PRIVATE KEY-----(.+?)-----END", re.DOTALL)
_PBES2_OID = bytes.fromhex("06092a864886f70d01050d")  # 1.2.840.113549.1.5.13, DER-encoded


def _uses_pbes2(pem_key: bytes) -> bool:
    """Whether a PKCS#8 EncryptedPrivateKeyInfo names PBES2 as its scheme (its first AlgorithmIdentifier)."""
    block = _ENCRYPTED_BLOCK.search(pem_key)
    if block is None:
        return False
    try:
        der = base64.b64decode(b"".join(block.group(1).split()), validate=True)
    except ValueError:
        return False
    return _PBES2_OID in der[:24]


def _identity(result: Result) -> None:
    location = result.get("ssl.keystore.location")
    chain, key = result.get("ssl.keystore.certificate.chain", False), result.get("ssl.keystore.key", False)
    password = result.get("ssl.keystore.password", strip=False)
    key_password = result.java.get("ssl.key.password") or None
    store_type = (result.get("ssl.keystore.type") or "JKS").upper()
    if chain is not None or key is not None:
        if chain is None or key is None or store_type != "PEM" or location is not None:
            result.problem("ssl.keystore.key", "ssl.keystore.certificate.chain and ssl.keystore.key need each other, "
                           "ssl.keystore.type=PEM and no ssl.keystore.location; fix those keys")
        elif _check_pem_key(result, "ssl.keystore.key", (chain + "\n" + key).encode(), key_password,
                            "ssl.keystore.certificate.chain/ssl.keystore.key"):
            result.settings.update({"ssl.certificate.pem": chain, "ssl.key.pem": key})
            _key_password(result, key_password)
        return
    if location is None or (data := _read_store(result, "ssl.keystore.location", location)) is None:
        return
    fmt = _sniff(data)
    if fmt == "PKCS12":
        store = _load_pkcs12(result, "ssl.keystore.location", location, data, password)
        if store is not None and (store.key is None or store.cert is None):
            result.problem("ssl.keystore.location", f"{location} holds no private key with its certificate")
        elif store is not None:
            result.settings["ssl.keystore.location"] = location
            if password is not None:
                result.settings["ssl.keystore.password"] = password
    elif fmt == "PEM":
        if _check_pem_key(result, "ssl.keystore.location", data, key_password, location):
            result.settings.update({"ssl.certificate.location": location, "ssl.key.location": location})
            _key_password(result, key_password)
    elif fmt in ("JKS", "JCEKS"):
        result.problem("ssl.keystore.location", _convert_hint("ssl.keystore.location", location, fmt))
    else:
        result.problem("ssl.keystore.location", f"{location} is not a JKS, PKCS12 or PEM key store")


def _key_password(result: Result, key_password: str | None) -> None:
    """ssl.key.password only unlocks PEM keys in librdkafka; a PKCS12 store has one password for all."""
    if key_password is not None:
        result.consumed.add("ssl.key.password")
        result.settings["ssl.key.password"] = key_password


def _tls(result: Result) -> None:
    """Endpoint check, TLS versions and cipher suites.

    librdkafka has no TLS-version setting: its OpenSSL 3 offers TLSv1.2 and TLSv1.3, Java's default set. So
    ssl.protocol and ssl.enabled.protocols go to `ignored` when they allow TLSv1.2 (a TLSv1.2-only pin may then
    meet TLSv1.3, which is stronger), and are problems when they exclude it, which librdkafka cannot do.
    """
    algorithm = result.get("ssl.endpoint.identification.algorithm")
    if "ssl.endpoint.identification.algorithm" in result.java:
        if (algorithm or "").lower() not in ("https", ""):
            result.problem("ssl.endpoint.identification.algorithm", "must be https or empty (no host name check)")
        result.settings["ssl.endpoint.identification.algorithm"] = "https" if algorithm else "none"
    protocol = result.java.get("ssl.protocol", "").strip()
    if protocol and protocol not in ("TLS", "TLSv1.2", "TLSv1.3"):
        result.problem("ssl.protocol", "librdkafka speaks TLSv1.2 and TLSv1.3 only; set TLSv1.3 or remove it")
    enabled = {p.strip() for p in result.java.get("ssl.enabled.protocols", "").split(",") if p.strip()}
    if enabled and "TLSv1.2" not in enabled:
        result.problem("ssl.enabled.protocols", "librdkafka cannot disable TLSv1.2 and has no TLS below it; "
                       "set TLSv1.2,TLSv1.3 or remove it")
    suites = [s.strip() for s in (result.get("ssl.cipher.suites") or "").split(",") if s.strip()]
    # OpenSSL reads the IANA names Java uses; TLS 1.3 suites cannot be restricted and are always on.
    tls12 = [s for s in suites if not s.startswith(("TLS_AES_", "TLS_CHACHA20_"))]
    if suites and not tls12:
        result.problem("ssl.cipher.suites", "lists TLS 1.3 suites only, which librdkafka cannot restrict; "
                       "add the TLS 1.2 suites you accept or remove it")
    elif tls12:
        result.settings["ssl.cipher.suites"] = ":".join(tls12)
