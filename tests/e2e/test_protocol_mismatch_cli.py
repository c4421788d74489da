"""`sparkmirror run` with a security.protocol the cluster's listener does not speak: exit 5, naming the protocol."""

from __future__ import annotations

import subprocess
import time

from sparkmirror.kafka.admin import PROBE_TIMEOUT_S
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER

from .conftest import cli_command

NOT_TLS = "the listener does not speak TLS (it looks like PLAINTEXT or SASL_PLAINTEXT)"


def test_run_with_ssl_against_the_plaintext_port_exits_5_naming_the_protocol(clusters, tmp_path):
    path = tmp_path / "mm2.properties"
    path.write_text(f"clusters = A, B\nA.bootstrap.servers = {clusters.source}\nA.security.protocol = SSL\n"
                    f"B.bootstrap.servers = {clusters.target}\nA->B.enabled = true\nA->B.topics = none\n"
                    f"{SINGLE_BROKER}")
    started = time.monotonic()
    result = subprocess.run(cli_command("run", str(path), "--state-dir", str(tmp_path / "state")),
                            capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - started
    assert result.returncode == 5, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr[-3000:]
    assert errors[0].startswith(f"error: cluster 'A' at bootstrap.servers={clusters.source}: security.protocol=SSL "
                                f"but {NOT_TLS}; set 'A.security.protocol' to the listener's protocol"), errors[0]
    assert "Traceback" not in result.stderr and "unreachable" not in result.stderr
    print(f"\nexit 5 after {elapsed:.1f} s: {errors[0]}")
    assert elapsed < PROBE_TIMEOUT_S + 20, f"took {elapsed:.1f} s"  # the probe names it in about a second
