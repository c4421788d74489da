"""A client key or store that its password does not open is a credentials problem: `validate` and `run` exit 5
naming the cluster and the password key, before any connection; with other problems beside it, exit 2 lists all."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from sparkmirror.cli.common import load
from sparkmirror.cli.main import cli
from sparkmirror.errors import ClientCredentialsError, ConfigError
from sparkmirror.testing.tls_material import CertificateAuthority, write_identity, write_trust

KEY_PASSWORD, WRONG = "key-pw", "wrong-pw"


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tls")
    ca = CertificateAuthority.create()
    return write_trust(folder, "ca", [ca], "t"), write_identity(folder, "mirror", ca.issue("mirror"), KEY_PASSWORD, "s")


def mm2(tmp_path, stores, password: str, extra: str = ""):
    trust, identity = stores
    path = tmp_path / "mm2.properties"
    path.write_text(f"clusters = A, B\nA.bootstrap.servers = a:9093\nB.bootstrap.servers = b:9092\n"
                    f"A.security.protocol = SSL\nA.ssl.truststore.type = PEM\nA.ssl.truststore.location = {trust.pem}\n"
                    f"A.ssl.keystore.type = PEM\nA.ssl.keystore.location = {identity.encrypted_pem}\n"
                    f"A.ssl.key.password = {password}\nA->B.enabled = true\n{extra}")
    return path


def test_wrong_key_password_is_a_credentials_error_of_the_cluster(tmp_path, stores):
    with pytest.raises(ClientCredentialsError) as info:
        load(mm2(tmp_path, stores, WRONG), ())
    assert (info.value.alias, info.value.key) == ("A", "ssl.key.password")
    assert str(info.value).startswith("cluster 'A': ") and "Set 'A.ssl.key.password'" in str(info.value)
    assert WRONG not in str(info.value)


def test_validate_exits_5_and_the_right_password_passes(tmp_path, stores):
    result = CliRunner().invoke(cli, ["validate", str(mm2(tmp_path, stores, WRONG))])
    assert result.exit_code == 5, result.output
    assert "error: cluster 'A': " in result.stderr and WRONG not in result.output
    load(mm2(tmp_path, stores, KEY_PASSWORD), ())


def test_other_problems_beside_it_keep_the_config_error(tmp_path, stores):
    with pytest.raises(ConfigError) as info:
        load(mm2(tmp_path, stores, WRONG, "A.ssl.protocol = SSLv3\n"), ())
    assert not isinstance(info.value, ClientCredentialsError)
    assert any("ssl.key.password" in p for p in info.value.problems)
    assert any("A.ssl.protocol" in p for p in info.value.problems)
