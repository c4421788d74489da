"""SSL settings -> librdkafka: trust and key stores as users have them (PEM, PKCS12, keytool JKS) and TLS options."""

from __future__ import annotations

import pytest

from sparkmirror.config.librdkafka import translate

from .translation_cases import KEY_PASSWORD, SECRET, STORE_PASSWORD, Pki, only_problem, ssl

# -- TLS trust -------------------------------------------------------------------------------------------------------

def test_pem_truststore_file_becomes_ca_location(pki: Pki) -> None:
    path = pki.write("ca.pem", pki.ca_pem)
    for store_type in ({}, {"ssl.truststore.type": "PEM"}):
        settings = translate(ssl(**{"ssl.truststore.location": path}, **store_type), "admin").settings
        assert settings["ssl.ca.location"] == path


def test_pem_certificates_text_becomes_ca_pem(pki: Pki) -> None:
    settings = translate(ssl(**{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": pki.ca_pem}),
                         "admin").settings
    assert settings["ssl.ca.pem"] == pki.ca_pem
    assert "ssl.truststore.type=PEM" in only_problem(ssl(**{"ssl.truststore.certificates": pki.ca_pem}),
                                                     "ssl.truststore.certificates")


@pytest.mark.parametrize("store_type", [None, "PKCS12", "JKS"])  # Java's JKS type reads PKCS12 files too
def test_pkcs12_truststore_travels_as_ca_pem(pki: Pki, store_type: str | None) -> None:
    java = ssl(**{"ssl.truststore.location": pki.pkcs12_truststore(), "ssl.truststore.password": STORE_PASSWORD})
    if store_type:
        java["ssl.truststore.type"] = store_type
    translation = translate(java, "admin")
    assert translation.settings["ssl.ca.pem"] == pki.ca_pem
    assert "ssl.truststore.location" not in translation.ignored and "ssl.ca.location" not in translation.settings


def test_keytool_pkcs12_truststore_travels_as_ca_pem(pki: Pki, keytool_stores: dict[str, str]) -> None:
    settings = translate(ssl(**{"ssl.truststore.location": keytool_stores["trust-PKCS12"],
                                "ssl.truststore.password": STORE_PASSWORD}), "admin").settings
    assert settings["ssl.ca.pem"] == pki.ca_pem


@pytest.mark.parametrize("store", ["trust", "key"])
def test_jks_stores_are_problems_with_the_keytool_command(keytool_stores: dict[str, str], store: str) -> None:
    path = keytool_stores[f"{store}-JKS"]
    prefix = f"ssl.{store}store"
    text = only_problem(ssl(**{f"{prefix}.location": path, f"{prefix}.password": STORE_PASSWORD}),
                        f"{prefix}.location")
    assert (f"keytool -importkeystore -srckeystore {path} -srcstoretype JKS -destkeystore {path}.p12 "
            "-deststoretype PKCS12") in text
    assert f"{prefix}.location={path}.p12" in text and f"{prefix}.type=PKCS12" in text


def test_store_problems_name_the_key_and_path_but_not_the_password(pki: Pki) -> None:
    truststore = pki.pkcs12_truststore()
    text = only_problem(ssl(**{"ssl.truststore.location": truststore, "ssl.truststore.password": "wrong-" + SECRET}),
                        "ssl.truststore.location")
    assert truststore in text and "wrong ssl.truststore.password" in text
    assert "is not set" in only_problem(ssl(**{"ssl.truststore.location": truststore}), "ssl.truststore.location")
    assert "/nonexistent/ts.p12" in only_problem(ssl(**{"ssl.truststore.location": "/nonexistent/ts.p12"}),
                                                 "ssl.truststore.location")
    garbage = pki.write("garbage.bin", b"\x00\x01not a store")
    assert "not a JKS, PKCS12 or PEM" in only_problem(ssl(**{"ssl.truststore.location": garbage}),
                                                      "ssl.truststore.location")
    only_problem(ssl(**{"ssl.keystore.location": pki.pkcs12_keystore(),
                        "ssl.keystore.password": "wrong-" + SECRET}), "ssl.keystore.location")


# -- TLS client identity ---------------------------------------------------------------------------------------------

def test_pkcs12_keystore_is_passed_to_librdkafka_as_is(pki: Pki) -> None:
    path = pki.pkcs12_keystore()
    translation = translate(ssl(**{"ssl.keystore.location": path, "ssl.keystore.password": STORE_PASSWORD,
                                   "ssl.key.password": STORE_PASSWORD}), "admin")
    assert translation.settings["ssl.keystore.location"] == path
    assert translation.settings["ssl.keystore.password"] == STORE_PASSWORD
    assert "ssl.key.password" in translation.ignored  # librdkafka opens a PKCS12 store with one password


def test_pem_keystore_file_becomes_certificate_and_key_locations(pki: Pki) -> None:
    path = pki.write("client.pem", pki.client_pem + pki.key_pem(KEY_PASSWORD))
    java = ssl(**{"ssl.keystore.type": "PEM", "ssl.keystore.location": path, "ssl.key.password": KEY_PASSWORD})
    settings = translate(java, "admin").settings
    assert settings["ssl.certificate.location"] == settings["ssl.key.location"] == path
    assert settings["ssl.key.password"] == KEY_PASSWORD
    assert "wrong" in only_problem({**java, "ssl.key.password": "wrong-" + SECRET}, "ssl.keystore.location")
    assert "encrypted" in only_problem({k: v for k, v in java.items() if k != "ssl.key.password"},
                                       "ssl.keystore.location")
    pbes2 = pki.write("client-pbes2.pem", pki.client_pem + pki.key_pem(KEY_PASSWORD, pbes2=True))
    refused = only_problem({**java, "ssl.keystore.location": pbes2}, "ssl.keystore.location")
    assert "encrypted with PBES2" in refused and "openssl pkcs8 -topk8 -v1 PBE-SHA1-3DES" in refused
    only_key = pki.write("key-only.pem", pki.key_pem())
    assert "certificate and a private key" in only_problem(ssl(**{"ssl.keystore.location": only_key}),
                                                           "ssl.keystore.location")


def test_pem_keystore_text_becomes_certificate_and_key_pem(pki: Pki) -> None:
    settings = translate(ssl(**{"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": pki.client_pem,
                                "ssl.keystore.key": pki.key_pem()}), "admin").settings
    assert settings["ssl.certificate.pem"] == pki.client_pem
    assert settings["ssl.key.pem"] == pki.key_pem()
    only_problem(ssl(**{"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": pki.client_pem}),
                 "ssl.keystore.key")


# -- TLS options -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "expected"), [("https", "https"), ("HTTPS", "https"), ("", "none")])
def test_endpoint_identification(value: str, expected: str) -> None:
    settings = translate(ssl(**{"ssl.endpoint.identification.algorithm": value}), "admin").settings
    assert settings["ssl.endpoint.identification.algorithm"] == expected


def test_tls_versions_librdkafka_cannot_express_are_problems_and_the_rest_ignored() -> None:
    accepted = translate(ssl(**{"ssl.protocol": "TLSv1.2", "ssl.enabled.protocols": "TLSv1.2"}), "admin")
    assert set(accepted.ignored) == {"ssl.protocol", "ssl.enabled.protocols"}
    only_problem(ssl(**{"ssl.protocol": "TLSv1.1"}), "ssl.protocol")
    only_problem(ssl(**{"ssl.enabled.protocols": "TLSv1.3"}), "ssl.enabled.protocols")
    only_problem(ssl(**{"ssl.endpoint.identification.algorithm": "ldaps"}), "ssl.endpoint.identification.algorithm")


def test_cipher_suites_pass_through_in_openssl_list_syntax() -> None:
    java = ssl(**{"ssl.cipher.suites": "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, TLS_AES_256_GCM_SHA384,"
                                       " TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"})
    assert translate(java, "admin").settings["ssl.cipher.suites"] == (
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384:TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256")
    only_problem(ssl(**{"ssl.cipher.suites": "TLS_AES_256_GCM_SHA384"}), "ssl.cipher.suites")
