"""`sparkmirror run` against a cluster that requires client certificates, with one TLS setting wrong: it exits 5
at once, with one error line naming the cluster and the setting to fix (and never a password)."""

from __future__ import annotations

import subprocess
import time

import pytest

from sparkmirror.kafka.admin import PROBE_TIMEOUT_S
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER

from .conftest import cli_command

WRONG_KEY_PASSWORD = "not-the-key-password"  # noqa: S105 - the wrong one, on purpose
RUN_TIMEOUT_S = 120


def a_lines(secured, case: str) -> str:
    """A's settings for the MTLS listener, as an MM2 user writes them, with the one mistake of `case`."""
    identity = secured.identities["mirror"]
    trust = secured.other_trust.pem if case == "untrusted broker" else secured.trust.pem
    lines = [f"bootstrap.servers = {secured.source.bootstraps['MTLS']}", "security.protocol = SSL",
             "ssl.truststore.type = PEM", f"ssl.truststore.location = {trust}"]
    if case != "no client certificate":
        password = WRONG_KEY_PASSWORD if case == "wrong key password" else identity.key_password
        lines += ["ssl.keystore.type = PEM", f"ssl.keystore.location = {identity.encrypted_pem}",
                  f"ssl.key.password = {password}"]
    return "".join(f"A.{line}\n" for line in lines)


@pytest.mark.parametrize(("case", "key"), [
    ("untrusted broker", "A.ssl.truststore.location"),
    ("wrong key password", "A.ssl.key.password"),
    ("no client certificate", "A.ssl.keystore.location"),
])
def test_run_with_a_tls_mistake_exits_5_naming_the_cluster_and_the_key(secured_clusters, tmp_path, case, key):
    path = tmp_path / "mm2.properties"
    path.write_text("clusters = A, B\n" + a_lines(secured_clusters, case) + secured_clusters.mm2_lines("B", "mtls-pem")
                    + f"A->B.enabled = true\nA->B.topics = none\n{SINGLE_BROKER}")

    started = time.monotonic()
    result = subprocess.run(cli_command("run", str(path), "--state-dir", str(tmp_path / "state")),
                            capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    elapsed = time.monotonic() - started

    assert result.returncode == 5, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr[-3000:]
    assert errors[0].startswith("error: cluster 'A'"), errors[0]
    assert f"'{key}'" in errors[0], errors[0]
    assert "Traceback" not in result.stderr and "unreachable" not in result.stderr
    output = result.stdout + result.stderr
    assert WRONG_KEY_PASSWORD not in output and secured_clusters.identities["mirror"].key_password not in output
    print(f"\n{case}: exit 5 after {elapsed:.1f} s: {errors[0]}")
    assert elapsed < PROBE_TIMEOUT_S + 20, f"took {elapsed:.1f} s"
