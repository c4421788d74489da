"""Shared fixtures. Real clusters start once per session; every test uses unique names.

Set SPARKMIRROR_TEST_SOURCE_BOOTSTRAP and SPARKMIRROR_TEST_TARGET_BOOTSTRAP to use your own clusters.
Without them, two local KRaft clusters are started from the cached jars; if Java or the jars are
missing the integration tests fail (they never skip silently). Tests that need a SASL_PLAINTEXT (SCRAM-SHA-512)
cluster get a third, started on first use; SPARKMIRROR_TEST_SASL_BOOTSTRAP, SPARKMIRROR_TEST_SASL_USERNAME and
SPARKMIRROR_TEST_SASL_PASSWORD name one of your own instead. Tests that need a Spark standalone cluster get one
(`spark_cluster`), also started on first use.
"""

from __future__ import annotations

import os
import secrets
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sparkmirror.testing.spark_cluster import LocalSparkCluster
    from sparkmirror.testing.tls_material import StoreFiles, TrustFiles


@dataclass(frozen=True)
class ClusterPair:
    source: str  # bootstrap servers of the source cluster (alias A in tests)
    target: str  # bootstrap servers of the target cluster (alias B in tests)


@pytest.fixture(scope="session")
def clusters() -> Iterator[ClusterPair]:
    source = os.environ.get("SPARKMIRROR_TEST_SOURCE_BOOTSTRAP")
    target = os.environ.get("SPARKMIRROR_TEST_TARGET_BOOTSTRAP")
    if source and target:
        yield ClusterPair(source, target)
        return
    from sparkmirror.testing.kafka_cluster import start_clusters

    a, b = start_clusters(["test-A", "test-B"], keep_logs=True)
    failed = False
    try:
        yield ClusterPair(a.bootstrap_servers, b.bootstrap_servers)
    except BaseException:
        failed = True
        raise
    finally:
        a.stop()
        b.stop()
        if not failed:
            import shutil

            for c in (a, b):
                if c.dir is not None:
                    shutil.rmtree(c.dir, ignore_errors=True)


@dataclass(frozen=True)
class SaslCluster:
    bootstrap: str  # a SASL_PLAINTEXT listener accepting SCRAM-SHA-512
    username: str
    password: str

    def librdkafka_settings(self, password: str | None = None) -> dict[str, str]:
        """confluent-kafka settings for this cluster, as `username` (with another password if given)."""
        return {"bootstrap.servers": self.bootstrap, "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": self.username,
                "sasl.password": self.password if password is None else password}


@pytest.fixture(scope="session")
def sasl_cluster() -> Iterator[SaslCluster]:
    """A cluster whose clients must authenticate; only started when a test asks for it."""
    bootstrap = os.environ.get("SPARKMIRROR_TEST_SASL_BOOTSTRAP")
    if bootstrap:
        yield SaslCluster(bootstrap, os.environ["SPARKMIRROR_TEST_SASL_USERNAME"],
                          os.environ["SPARKMIRROR_TEST_SASL_PASSWORD"])
        return
    from sparkmirror.testing.kafka_cluster import LocalKafkaCluster

    username, password = "mirror", f"pw-{secrets.token_urlsafe(12)}"
    cluster = LocalKafkaCluster("test-sasl", keep_logs=True, sasl_users={username: password}).start()
    failed = False
    try:
        yield SaslCluster(cluster.bootstrap_servers, username, password)
    except BaseException:
        failed = True
        raise
    finally:
        cluster.stop()
        if not failed and cluster.dir is not None:
            import shutil

            shutil.rmtree(cluster.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def more_clusters() -> Iterator[list[str]]:
    """Four more local clusters (bootstrap servers) for topologies beyond two; started on first use."""
    from sparkmirror.testing.kafka_cluster import start_clusters

    started = start_clusters(["test-C", "test-D", "test-E", "test-F"], keep_logs=True)
    try:
        yield [c.bootstrap_servers for c in started]
    finally:
        for c in started:
            c.stop()


@pytest.fixture(scope="session")
def schema_registries() -> Iterator[tuple[str, str]]:
    """Two Confluent-compatible schema registries (Apicurio Registry, schemas in memory), one for the source and one
    for the target: their Confluent API URLs. Started on first use; stopped, or ended with the session however it
    ends (their JVMs are watched)."""
    from sparkmirror.testing.schema_registry import LocalSchemaRegistry

    with LocalSchemaRegistry("test-A") as a, LocalSchemaRegistry("test-B") as b:
        yield a.url, b.url


@pytest.fixture(scope="session")
def spark_cluster(request) -> Iterator[LocalSparkCluster]:
    """A Spark standalone cluster: a master and two workers (1 core, 1 GiB each) on loopback, started on first use.
    Tests may run drivers on it (client mode), never kill its workers: those that do start their own. Its folder
    (the daemons' and executors' logs) is kept when a test of the session failed."""
    from sparkmirror.testing.spark_cluster import LocalSparkCluster

    with LocalSparkCluster("test-spark", keep_logs=True) as cluster:
        yield cluster
        cluster.keep_logs = request.session.testsfailed > 0


@pytest.fixture(scope="session")
def spark():
    from sparkmirror.pipeline.session import build_spark_session

    # Enough slots for the Real-Time Mode tests (a long task per source partition); micro-batch flows still use
    # at most tasks.max (default: the cores) tasks per batch.
    session = build_spark_session({"spark.master": "local[12,4]"})
    yield session
    session.stop()


@pytest.fixture
def unique() -> str:
    """A short unique suffix for topic, group and folder names."""
    return uuid.uuid4().hex[:8]


# -- TLS, mTLS and SASL_SSL clusters (issue 16) --------------------------------------------------------------

@dataclass(frozen=True)
class SecuredCluster:
    """A broker with an SSL, an MTLS (client certificates required) and a SASL_SSL listener, under the
    StandardAuthorizer; `internal` is its PLAINTEXT listener (a super user) for setting up and checking data."""

    bootstraps: dict[str, str]  # listener name -> bootstrap.servers
    internal: str


@dataclass(frozen=True)
class SecuredClusters:
    """Two SecuredClusters signed by one CA, the clients' stores, and a CA nobody trusts.

    Principals: `mirror` (a super user: SASL user and client certificate CN), `app` (no ACLs: denied), and
    the SASL users of ROLE_PRINCIPALS (no ACLs until a test grants them some).
    """

    source: SecuredCluster
    target: SecuredCluster
    trust: TrustFiles  # of the CA that signed the brokers' and clients' certificates
    other_trust: TrustFiles  # of an unrelated CA
    identities: dict[str, StoreFiles]  # principal -> the key stores of its client certificate
    other_identity: StoreFiles  # a client certificate (CN mirror) from the unrelated CA
    users: dict[str, str]  # SASL user -> password

    def mm2_lines(self, alias: str, mode: str, principal: str = "mirror") -> str:
        """The properties an MM2 user writes for cluster `alias` (A: source, B: target) as `principal`, by
        `mode`: ssl-pem / ssl-pkcs12 (server-authenticated TLS trusting a PEM or PKCS12 trust store), mtls-pem
        (a client certificate with an encrypted PEM key), mtls-pkcs12 (a PKCS12 key store), sasl_ssl (SCRAM-SHA-512
        over TLS, PKCS12 trust store)."""
        cluster = self.source if alias == "A" else self.target
        listener = {"ssl": "SSL", "mtls": "MTLS", "sasl_ssl": "SASL_SSL"}[mode.split("-")[0]]
        protocol = "SASL_SSL" if listener == "SASL_SSL" else "SSL"
        lines = [f"bootstrap.servers = {cluster.bootstraps[listener]}", f"security.protocol = {protocol}"]
        if mode.endswith("-pem"):
            lines += ["ssl.truststore.type = PEM", f"ssl.truststore.location = {self.trust.pem}"]
        else:
            lines += ["ssl.truststore.type = PKCS12", f"ssl.truststore.location = {self.trust.pkcs12}",
                      f"ssl.truststore.password = {self.trust.password}"]
        identity = self.identities[principal]
        if mode == "mtls-pem":
            lines += ["ssl.keystore.type = PEM", f"ssl.keystore.location = {identity.encrypted_pem}",
                      f"ssl.key.password = {identity.key_password}"]
        elif mode == "mtls-pkcs12":
            lines += ["ssl.keystore.type = PKCS12", f"ssl.keystore.location = {identity.pkcs12}",
                      f"ssl.keystore.password = {identity.store_password}",
                      f"ssl.key.password = {identity.store_password}"]
        elif mode == "sasl_ssl":
            lines += ["sasl.mechanism = SCRAM-SHA-512", f"sasl.jaas.config = {self.jaas(principal)}"]
        return "".join(f"{alias}.{line}\n" for line in lines)

    def jaas(self, principal: str) -> str:
        """The `sasl.jaas.config` value that logs in as SASL user `principal` (SCRAM)."""
        return (f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{principal}" '
                f'password="{self.users[principal]}";')


# One SASL user per MM2 client role of a flow A->B (tests/integration/test_per_role_principals.py): A's consumer,
# admin and producer (offset syncs; B->A's heartbeats), B's consumer (checkpoints read back), admin and producer.
ROLE_PRINCIPALS = ("src-consumer", "src-admin", "src-producer", "tgt-consumer", "tgt-admin", "tgt-producer")


@pytest.fixture(scope="session")
def secured_clusters(tmp_path_factory) -> Iterator[SecuredClusters]:
    """Two brokers (A: PEM stores, its key encrypted; B: PKCS12 stores), started on first use."""
    from sparkmirror.testing.kafka_cluster import BrokerTls, ClientListener, LocalKafkaCluster
    from sparkmirror.testing.tls_material import CertificateAuthority, write_identity, write_trust

    folder = tmp_path_factory.mktemp("tls")
    ca, other_ca = CertificateAuthority.create(), CertificateAuthority.create("untrusted test CA")
    trust = write_trust(folder, "ca", [ca], f"trust-{secrets.token_hex(6)}")
    other_trust = write_trust(folder, "other-ca", [other_ca], f"trust-{secrets.token_hex(6)}")
    server = write_identity(folder, "broker", ca.issue_server(), f"key-{secrets.token_hex(6)}",
                            f"store-{secrets.token_hex(6)}")
    identities = {name: write_identity(folder, name, ca.issue(name), f"key-{secrets.token_hex(6)}",
                                       f"store-{secrets.token_hex(6)}") for name in ("mirror", "app")}
    other_identity = write_identity(folder, "stranger", other_ca.issue("mirror"), "key-stranger", "store-stranger")
    users = {name: f"pw-{secrets.token_urlsafe(12)}" for name in ("mirror", "app", *ROLE_PRINCIPALS)}
    stores = {
        "A": BrokerTls(server.encrypted_pem, "PEM", trust.pem, "PEM", trust.pem, key_password=server.key_password),
        "B": BrokerTls(server.pkcs12, "PKCS12", trust.pkcs12, "PKCS12", trust.pem,
                       keystore_password=server.store_password, key_password=server.store_password,
                       truststore_password=trust.password),
    }
    listeners = (ClientListener("SSL", "SSL"), ClientListener("MTLS", "SSL", client_auth="required"),
                 ClientListener("SASL_SSL", "SASL_SSL"))
    started = [LocalKafkaCluster(f"test-tls-{alias}", keep_logs=True, sasl_users=users, listeners=listeners,
                                 tls=tls, super_users=["User:mirror"]) for alias, tls in stores.items()]
    failed = False
    try:
        for c in started:
            c.start_process()
        for c in started:
            c.wait_ready()
        a, b = (SecuredCluster({n.name: c.bootstrap(n.name) for n in listeners}, c.internal_bootstrap)
                for c in started)
        yield SecuredClusters(a, b, trust, other_trust, identities, other_identity, users)
    except BaseException:
        failed = True
        raise
    finally:
        for c in started:
            c.stop()
            if not failed and c.dir is not None:
                import shutil

                shutil.rmtree(c.dir, ignore_errors=True)
