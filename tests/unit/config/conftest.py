"""Fixtures of the librdkafka translation tests: one generated PKI and one set of keytool-made stores per session."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from .translation_cases import STORE_PASSWORD, Pki


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return Pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="session")
def keytool_stores(pki: Pki) -> dict[str, str]:
    """Stores made by keytool itself, as users have them: JKS and PKCS12 trust and key stores."""
    keytool = shutil.which("keytool")
    if keytool is None:
        pytest.skip("keytool (from a JDK) is not on PATH")
    ca_file = pki.write("keytool-ca.pem", pki.ca_pem)
    stores = {}
    for kind in ("JKS", "PKCS12"):
        stores[f"trust-{kind}"] = str(pki.folder / f"keytool-truststore.{kind.lower()}")
        subprocess.run([keytool, "-importcert", "-noprompt", "-alias", "ca", "-file", ca_file, "-storetype", kind,
                        "-keystore", stores[f"trust-{kind}"], "-storepass", STORE_PASSWORD],
                       check=True, capture_output=True)
        stores[f"key-{kind}"] = str(pki.folder / f"keytool-keystore.{kind.lower()}")
        subprocess.run([keytool, "-genkeypair", "-alias", "client", "-keyalg", "EC", "-groupname", "secp256r1",
                        "-dname", "CN=client", "-validity", "2", "-storetype", kind, "-keystore", stores[f"key-{kind}"],
                        "-storepass", STORE_PASSWORD, "-keypass", STORE_PASSWORD], check=True, capture_output=True)
    return stores
