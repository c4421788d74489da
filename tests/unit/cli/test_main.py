"""`validate`, `plan --offline` and MM2's `--clusters A B` syntax, without any cluster."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from sparkmirror.cli.main import cli

DATA = Path(__file__).parents[2] / "data" / "mm2"


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(autouse=True)
def _in_data_dir(monkeypatch):
    monkeypatch.chdir(DATA)
    monkeypatch.setenv("MIRROR_A_BOOTSTRAP", "a-1.example:9092")


def test_validate_a_valid_file_exits_0_and_names_the_flows():
    result = invoke("validate", "valid/xdcr_six_clusters.properties", "--clusters", "west-1", "west-2")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        "xdcr_six_clusters.properties: valid; clusters west-1, west-2, east-1, east-2, north-1, north-2; "
        "flows to run: west-1->west-2, west-2->west-1, east-1->west-1, north-1->west-1\n"
        "heartbeats only (MM2's cluster pairs): east-1->west-2, east-2->west-1, east-2->west-2, north-1->west-2, "
        "north-2->west-1, north-2->west-2")


def test_validate_a_broken_file_exits_2_with_every_problem_and_its_line():
    result = invoke("validate", "broken/bad_values.properties")
    assert result.exit_code == 2
    problems = [line for line in result.stderr.splitlines() if line.startswith("  - ")]
    assert len(problems) == 7
    assert all("(bad_values.properties:" in p for p in problems)
    assert "Traceback" not in result.output


def test_clusters_takes_several_aliases_after_one_flag_like_mm2():
    result = invoke("validate", "valid/xdcr_six_clusters.properties", "--clusters", "west-1", "south-9", "moon")
    assert result.exit_code == 2
    assert "--clusters names unknown cluster alias(es) south-9, moon" in result.stderr
    after = invoke("validate", "--clusters", "west-1", "west-2", "valid/xdcr_six_clusters.properties")
    assert after.exit_code == 0 and "flows to run: west-1->west-2" in after.stdout
    comma = invoke("validate", "valid/xdcr_six_clusters.properties", "--clusters", "north-1,north-2")
    assert "flows to run: west-1->north-1, east-1->north-1, north-1->north-2, north-2->north-1" in comma.stdout


def test_plan_offline_prints_resolved_flows_without_secrets():
    result = invoke("plan", "valid/secrets_from_providers.properties", "--offline")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "flow A->B" in out and "replication.policy.class = org.apache.kafka.connect.mirror." \
                                  "DefaultReplicationPolicy (separator '.')" in out
    assert "sasl.jaas.config=[hidden]" in out and "bootstrap.servers=[hidden]" in out
    assert "heartbeats only (MM2's cluster pairs): B->A every 1 s\n" in out
    assert "  target consumer: bootstrap.servers=b-1:9092, sasl.jaas.config=[hidden]" in out
    assert "pa55" not in out and "a-1.example" not in out
    assert "ACL sync every 600 s" in out and "not performed" not in out  # performed since issue 16
    assert "emit.heartbeats" not in out and "refresh.topics" not in out  # performed since issue 5
    assert "emit.checkpoints" not in out and "sync.group.offsets" not in out  # performed since issue 6


def test_warnings_for_deprecated_and_unused_keys_go_to_stderr():
    result = invoke("plan", "valid/per_flow_overrides.properties", "--offline")
    assert result.exit_code == 0, result.output
    assert "keys sparkmirror does not use (MM2/Connect worker settings or unknown): offset.flush.interval.ms\n" \
        in result.stderr


def test_run_without_an_enabled_flow_for_the_listed_targets_is_a_config_error():
    result = invoke("run", "valid/active_passive.properties", "--clusters", "primary")
    assert result.exit_code == 2
    assert "no flow is enabled with a target in --clusters primary" in result.stderr


def test_exactly_once_required_is_valid(tmp_path):
    path = tmp_path / "eos.properties"
    path.write_text("clusters = A, B\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\n"
                    "A->B.enabled = true\nA->B.exactly.once.support = required\n")
    result = invoke("validate", str(path))
    assert result.exit_code == 0, result.stderr


def test_exactly_once_in_real_time_mode_is_refused_before_anything_starts(tmp_path):
    path = tmp_path / "eos.properties"
    path.write_text("clusters = A, B\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\n"
                    "A->B.enabled = true\nA->B.exactly.once.support = required\n"
                    "A->B.sparkmirror.trigger.mode = real-time\n")
    result = invoke("validate", str(path))
    assert result.exit_code == 2
    assert "A->B: exactly.once.support = required with sparkmirror.trigger.mode = real-time" in result.stderr
    assert "set A->B.sparkmirror.trigger.mode = micro-batch" in result.stderr


def test_validate_reads_the_trust_and_key_stores_librdkafka_will_need():
    result = invoke("validate", "valid/ssl_sasl.properties")
    assert result.exit_code == 2
    assert "onprem.ssl.truststore.location (ssl_sasl.properties:9): cannot read /etc/kafka/onprem-truststore.p12" \
           in result.stderr
    assert "cloud.admin.ssl.keystore.location (ssl_sasl.properties:21): cannot read /etc/kafka/cloud-admin.pem" \
           in result.stderr
    assert "trust-pass" not in result.output and "s3cr3t" not in result.output


def _file(tmp_path, text: str) -> str:
    path = tmp_path / "mm2.properties"
    path.write_text("clusters = A, B\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\nA->B.enabled = true\n"
                    + text)
    return str(path)


def test_settings_without_effect_are_warned_about_and_validate_logs_no_client_detail(tmp_path):
    result = invoke("validate", _file(tmp_path, "admin.timeout.ms = 5000\nB.producer.key.serializer = x.S\n"))
    assert result.exit_code == 0, result.output
    assert ("warning: admin.timeout.ms (mm2.properties:5) has no effect in sparkmirror: its librdkafka "
            "admin calls have timeouts of their own; remove it") in result.stderr
    assert "left out of" not in result.stderr  # the clients' left-out keys are logged when clients are built


def test_validate_refuses_what_a_flow_could_not_start_with(tmp_path, monkeypatch):
    from sparkmirror.kafka import features

    monkeypatch.setattr(features, "_librdkafka_has", lambda feature: False)
    kerberos = ("B.security.protocol = SASL_PLAINTEXT\nB.sasl.kerberos.service.name = kafka\n"
                "B.sasl.jaas.config = com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true;\n"
                "A.consumer.auto.offset.reset = none\n")
    result = invoke("validate", _file(tmp_path, kerberos))
    assert result.exit_code == 2
    assert "  - sasl.mechanism: GSSAPI (the default) needs a librdkafka built with Kerberos (libsasl2)" in result.stderr
    assert "  - A.consumer.auto.offset.reset (mm2.properties:8): 'none' cannot start a new flow" in result.stderr
