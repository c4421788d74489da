"""Secrets never appear in output, logs, errors or metrics (issue 16, item 5), without a broker.

One file puts a canary in every place a secret lives in an MM2 file (inline, and through the file, directory
and env config providers); `validate`, `plan --offline`, `status --json`, the logs (text and JSON lines, at
DEBUG, librdkafka's own included), real librdkafka clients failing against closed ports, their errors, and the
status JSON and metrics built from those errors must all do without it.
"""

from __future__ import annotations

import datetime
import io
import json
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID
from prometheus_client import CollectorRegistry, generate_latest

from sparkmirror import mirror_status
from sparkmirror.cli.exit_codes import ExitStatus
from sparkmirror.cli.logs import setup_logging
from sparkmirror.cli.main import cli
from sparkmirror.config.mm2 import load_config
from sparkmirror.errors import SparkmirrorError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.kafka.produce import AcknowledgedProducer
from sparkmirror.runtime.progress import Durations, ProgressSnapshot
from sparkmirror.runtime.status import FlowStatus, JobStatus, Status
from sparkmirror.testing.tls_material import encrypt_pkcs8_3des
from sparkmirror.web.metrics import StatusCollector
from sparkmirror.web.status_json import status_json

CANARY = "S3cr3t-canary"
CLOSED_PORT = "127.0.0.1:1"  # nothing listens: every connection is refused at once
PROBE_S = 1.0
ENV = {"MIRROR_KEYSTORE_PASSWORD": f"{CANARY}-env-keystore", "MIRROR_FLAG": f"{CANARY}-env-flag"}


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _certificate(cn: str, key: ec.EllipticCurvePrivateKey, issuer: str, signer: ec.EllipticCurvePrivateKey
                 ) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    return (x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(_name(issuer))
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
            .sign(signer, hashes.SHA256()))


def _stores(folder: Path) -> None:
    """A CA, a PKCS12 trust store and key store, and a PEM key store whose key is encrypted, each locked by a
    canary: the translation opens them, so a secret that does not match fails `validate`."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("canary-ca", ca_key, "canary-ca", ca_key)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _certificate("mirror", key, "canary-ca", ca_key)
    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca.public_bytes(pem))
    # 3DES, not PBES2: Java cannot decrypt a PBES2 key, so the load refuses it (config/librdkafka/tls.py)
    (folder / "client.pem").write_bytes(cert.public_bytes(pem) + encrypt_pkcs8_3des(key, f"{CANARY}-key"))
    (folder / "trust.p12").write_bytes(pkcs12.serialize_key_and_certificates(
        None, None, None, [ca], serialization.BestAvailableEncryption(f"{CANARY}-file-truststore".encode())))
    (folder / "client.p12").write_bytes(pkcs12.serialize_key_and_certificates(
        b"mirror", key, cert, None, serialization.BestAvailableEncryption(ENV["MIRROR_KEYSTORE_PASSWORD"].encode())))


def _mm2(folder: Path) -> str:
    """A SASL_SSL cluster A and an SSL cluster B, a canary in every secret; both clusters are closed ports."""
    return f"""\
config.providers = file, dir, env
config.providers.file.class = org.apache.kafka.common.config.provider.FileConfigProvider
config.providers.dir.class = org.apache.kafka.common.config.provider.DirectoryConfigProvider
config.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider
config.providers.env.param.allowlist.pattern = MIRROR_.*

clusters = A, B
A.bootstrap.servers = {CLOSED_PORT}
A.security.protocol = SASL_SSL
A.sasl.mechanism = SCRAM-SHA-512
A.sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required \\
    username="mirror" password="{CANARY}-jaas";
A.ssl.truststore.type = PKCS12
A.ssl.truststore.location = {folder}/trust.p12
A.ssl.truststore.password = ${{file:{folder}/secrets.properties:truststore}}
A.ssl.keystore.type = PEM
A.ssl.keystore.location = {folder}/client.pem
A.ssl.key.password = {CANARY}-key
A.sasl.oauthbearer.client.credentials.client.secret = {CANARY}-client-secret
A.sasl.oauthbearer.assertion.private.key.passphrase = {CANARY}-passphrase
A.consumer.basic.auth.user.info = mirror:{CANARY}-basic-auth

B.bootstrap.servers = {CLOSED_PORT}
B.security.protocol = SSL
B.ssl.truststore.location = {folder}/ca.pem
B.ssl.keystore.type = PKCS12
B.ssl.keystore.location = {folder}/client.p12
B.ssl.keystore.password = ${{env:MIRROR_KEYSTORE_PASSWORD}}
B.producer.ssl.key.password = {CANARY}-producer-key
B.admin.sasl.jaas.config = ${{dir:{folder}/secrets:jaas}}

A->B.enabled = true
B->A.enabled = true
"""


@pytest.fixture
def secrets_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _stores(tmp_path)
    (tmp_path / "secrets.properties").write_text(f"truststore = {CANARY}-file-truststore\n")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "jaas").write_text('org.apache.kafka.common.security.plain.PlainLoginModule required '
                                               f'username="admin" password="{CANARY}-dir-jaas";')
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    path = tmp_path / "mm2.properties"
    path.write_text(_mm2(tmp_path))
    return path


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture):
    """Every record at DEBUG, librdkafka's own included; the CLI's console handler removed afterwards."""
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="sparkmirror.librdkafka")
    root, before = logging.getLogger(), list(logging.getLogger().handlers)
    yield caplog
    for handler in root.handlers:
        if handler not in before:
            root.removeHandler(handler)


def invoke(*args: str):
    result = CliRunner().invoke(cli, list(args))
    assert not isinstance(result.exception, AssertionError), result.exception  # a failed check inside, if any
    return result


def assert_no_canary(*texts: str) -> None:
    for text in texts:
        assert CANARY not in text, f"a secret is shown: ...{text[max(0, text.find(CANARY) - 200):][:300]}..."


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_validate_and_plan_offline_show_no_secret(secrets_file: Path, logs, log_format: str) -> None:
    checked = invoke("-v", "--log-format", log_format, "validate", str(secrets_file))
    assert checked.exit_code == 0, checked.output
    planned = invoke("-v", "--log-format", log_format, "plan", "--offline", str(secrets_file))
    assert planned.exit_code == 0, planned.output
    assert_no_canary(checked.output, planned.output, logs.text)
    out = planned.stdout
    for key in ("sasl.jaas.config", "ssl.key.password", "ssl.truststore.password", "ssl.keystore.password",
                "sasl.oauthbearer.client.credentials.client.secret",
                "sasl.oauthbearer.assertion.private.key.passphrase", "basic.auth.user.info"):
        assert f"{key}=[hidden]" in out, f"{key} is not shown as [hidden]"


def test_librdkafka_clients_their_errors_and_the_status_built_from_them_show_no_secret(
        secrets_file: Path, logs) -> None:
    stream = io.StringIO()
    setup_logging(verbose=True, log_format="json", stream=stream)
    config = load_config(secrets_file)
    errors: list[str] = []
    for flow in config.flows:
        for client in (flow.source_consumer, flow.source_admin, flow.target_admin, flow.target_producer,
                       flow.offset_syncs_producer, flow.heartbeats_producer, flow.target_consumer):
            settings = client.rdkafka  # logs the keys left out, as a client is about to be built
            assert_no_canary(repr(client), str(client), repr(client.translation), repr(settings), str(settings))
            assert any(CANARY in v for v in settings.values()), "the canaries reach librdkafka"
        for alias, settings in ((flow.source, flow.source_admin.rdkafka), (flow.target, flow.target_admin.rdkafka)):
            with pytest.raises(SparkmirrorError) as failed:
                ClusterAdmin(alias, settings).probe(PROBE_S)
            errors.append(str(failed.value))
        AcknowledgedProducer(flow.target_producer.rdkafka).close(0)
    assert_no_canary(repr(config), *errors)

    progress = ProgressSnapshot("A->B", 0, 0, 0, 0.0, 1, 0, {}, Durations((), 0, 0.0, 0.0))
    status = Status((FlowStatus("A->B", "failed", errors[0], {}, {}, progress, 1, None, "A", "B"),),
                    (JobStatus("A->B", "emit checkpoints", 3, 3, 3, errors[1]),), ("A", "B"))
    registry = CollectorRegistry()
    registry.register(StatusCollector(lambda: status, clock_ms=lambda: 1_700_000_000_000))
    document = json.dumps(status_json(status, 1_700_000_000_000))
    assert errors[0] in document  # the failure is there, only without its secrets
    assert_no_canary(document, generate_latest(registry).decode(), "\n".join(status.lines()), stream.getvalue(),
                     logs.text)
    assert all(json.loads(line) for line in stream.getvalue().splitlines())


def test_status_json_of_unreachable_clusters_shows_no_secret(secrets_file: Path, logs,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mirror_status, "PROBE_TIMEOUT_S", PROBE_S)
    result = invoke("-v", "status", "--config", str(secrets_file), "--json")
    assert result.exit_code == 3, result.output
    report = json.loads(result.stdout)
    assert "unreachable" in json.dumps(report)
    assert_no_canary(result.output, logs.text)


BROKEN = {
    "a wrong key password": ("A.ssl.key.password = {c}-key", "A.ssl.key.password = {c}-wrong",
                             "wrong ssl.key.password"),
    "a wrong trust store password": ("A.ssl.truststore.password = ${{file:{d}/secrets.properties:truststore}}",
                                     "A.ssl.truststore.password = {c}-wrong", "wrong ssl.truststore.password"),
    "a JAAS text that does not parse": ('username="mirror" password="{c}-jaas";', 'username="mirror" '
                                        'password="{c}-jaas;', "A.sasl.jaas.config"),
    "a JAAS option without quotes": ('password="{c}-jaas";', 'password={c}/jaas;', "A.sasl.jaas.config"),
    "a secret set twice": ("A.ssl.key.password = {c}-key", "A.ssl.key.password = {c}-key\n"
                           "A.ssl.key.password = {c}-other", "set 2 times with different values"),
    "a secret for an unknown cluster": ("A->B.enabled = true", "A->B.enabled = true\n"
                                       "C->B.sasl.jaas.config = {c}-unknown", "unknown cluster alias 'C'"),
    "a provider value that is not a boolean": ("A->B.enabled = true", "A->B.enabled = ${{env:MIRROR_FLAG}}",
                                               "expected true or false, got '${{env:MIRROR_FLAG}}'"),
    "a broken escape in a secret": ("A.ssl.key.password = {c}-key", "A.ssl.key.password = {c}\\u12zz",
                                    "an invalid \\u escape"),
}


@pytest.mark.parametrize("case", BROKEN)
def test_problems_name_the_key_never_the_secret(secrets_file: Path, logs, case: str) -> None:
    old, new, expected = (s.format(c=CANARY, d=secrets_file.parent) for s in BROKEN[case])
    text = secrets_file.read_text()
    assert old in text
    secrets_file.write_text(text.replace(old, new))
    result = invoke("-v", "validate", str(secrets_file))
    # a store the secret does not open is a refused TLS identity (exit 5); the rest are file problems
    assert result.exit_code in (ExitStatus.CONFIG_ERROR, ExitStatus.AUTHENTICATION_FAILED), result.output
    assert expected in result.stderr
    assert_no_canary(result.output, logs.text)


def test_a_broken_escape_in_a_provider_file_is_named_without_its_text(secrets_file: Path, logs) -> None:
    (secrets_file.parent / "secrets.properties").write_text(f"truststore = {CANARY}\\uZZZZ\n")
    result = invoke("validate", str(secrets_file))
    assert result.exit_code == 2, result.output
    assert "secrets.properties: an invalid \\u escape" in result.stderr
    assert_no_canary(result.output, logs.text)


def test_the_jvm_writer_spec_repr_leaves_out_client_settings(secrets_file: Path) -> None:
    from sparkmirror.pipeline.flow import WriterSpec

    flow = load_config(secrets_file).flow("B", "A")
    spec = WriterSpec("channel", "A", dict(flow.target_producer), {"t": "B.t"}, source_admin=dict(flow.source_admin),
                      exactly_once={"transactional_id": "x", "positions_group": "g", "admin": dict(flow.target_admin)})
    assert CANARY in spec.to_json()  # the writer gets them
    assert CANARY in str(json.loads(spec.to_json())["exactly_once"]["admin"])  # the target's, for its positions
    assert_no_canary(repr(spec), str(spec))
