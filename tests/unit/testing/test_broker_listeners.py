"""server.properties of secured local brokers, checked without starting one."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkmirror.testing.broker_listeners import (
    AUTHORIZER,
    BrokerTls,
    ClientListener,
    check_listeners,
    listener_properties,
    scram_arguments,
)
from sparkmirror.testing.kafka_cluster import LocalKafkaCluster

STORE_PASSWORD, TRUST_PASSWORD = "ks", "ts"
TLS = BrokerTls(Path("/s/broker.p12"), "PKCS12", Path("/s/ca.p12"), "PKCS12", Path("/s/ca.pem"),
                STORE_PASSWORD, STORE_PASSWORD, TRUST_PASSWORD)
LISTENERS = (ClientListener("SSL", "SSL"), ClientListener("MTLS", "SSL", client_auth="required"),
             ClientListener("SASL_SSL", "SASL_SSL"))
PORTS = {"SSL": 1001, "MTLS": 1002, "SASL_SSL": 1003}


def props(super_users=("User:mirror",), listeners=LISTENERS):
    return listener_properties(listeners, PORTS, 2000, 3000, {"mirror": "pw"}, TLS, super_users)


def test_client_listeners_beside_the_brokers_own_plaintext_and_controller():
    p = props()
    assert p["listeners"] == ("SSL://127.0.0.1:1001,MTLS://127.0.0.1:1002,SASL_SSL://127.0.0.1:1003,"
                              "PLAINTEXT://127.0.0.1:2000,CONTROLLER://127.0.0.1:3000")
    assert "CONTROLLER" not in p["advertised.listeners"]
    assert p["listener.security.protocol.map"] == ("CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL,"
                                                   "SASL_SSL:SASL_SSL")


def test_client_certificates_are_required_only_on_the_mtls_listener():
    p = props()
    assert p["listener.name.mtls.ssl.client.auth"] == "required"
    assert not any(k.endswith("ssl.client.auth") and "mtls" not in k for k in p)


def test_stores_and_cn_principals():
    p = props()
    assert (p["ssl.keystore.location"], p["ssl.keystore.type"], p["ssl.keystore.password"]) == (
        "/s/broker.p12", "PKCS12", "ks")
    assert (p["ssl.truststore.location"], p["ssl.truststore.password"]) == ("/s/ca.p12", "ts")
    assert p["ssl.principal.mapping.rules"].startswith("RULE:^CN=")


def test_pem_stores_carry_no_store_passwords():
    pem = BrokerTls(Path("/s/broker.pem"), "PEM", Path("/s/ca.pem"), "PEM", Path("/s/ca.pem"), None, "k")
    assert "ssl.keystore.password" not in pem.properties() and "ssl.truststore.password" not in pem.properties()
    assert pem.properties()["ssl.key.password"] == "k"


def test_sasl_ssl_listener_takes_scram_and_plain():
    p = props()
    assert p["sasl.enabled.mechanisms"] == "SCRAM-SHA-512,SCRAM-SHA-256,PLAIN"
    assert "ScramLoginModule" in p["listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config"]
    assert 'user_mirror="pw"' in p["listener.name.sasl_ssl.plain.sasl.jaas.config"]
    assert scram_arguments({"mirror": "pw"}) == ["--add-scram", "SCRAM-SHA-512=[name=mirror,password=pw]",
                                                 "--add-scram", "SCRAM-SHA-256=[name=mirror,password=pw]"]


def test_authorizer_only_with_super_users_and_the_broker_is_one():
    p = props()
    assert p["authorizer.class.name"] == AUTHORIZER
    assert p["super.users"] == "User:ANONYMOUS;User:mirror"
    assert "authorizer.class.name" not in props(super_users=None)


@pytest.mark.parametrize("make", [
    lambda: ClientListener("PLAINTEXT", "SSL"),
    lambda: ClientListener("ssl", "SSL"),
    lambda: ClientListener("X", "PLAINTEXT"),
    lambda: ClientListener("X", "SASL_PLAINTEXT", client_auth="required"),
    lambda: ClientListener("X", "SSL", client_auth="yes"),
    lambda: check_listeners([ClientListener("X", "SASL_SSL")], None, TLS),
    lambda: check_listeners([ClientListener("X", "SSL")], None, None),
    lambda: check_listeners([ClientListener("X", "SSL"), ClientListener("X", "SSL")], None, TLS),
    lambda: LocalKafkaCluster("x", super_users=["User:a"]),
])
def test_incomplete_setups_are_refused(make):
    with pytest.raises(ValueError):
        make()


def test_sasl_users_alone_keep_the_sasl_plaintext_cluster():
    cluster = LocalKafkaCluster("x", sasl_users={"mirror": "pw"})
    assert [(lst.name, lst.protocol) for lst in cluster.listeners] == [("SASL_PLAINTEXT", "SASL_PLAINTEXT")]
    assert cluster.security_protocol == "SASL_PLAINTEXT"
    assert LocalKafkaCluster("y").security_protocol == "PLAINTEXT"


def test_client_settings_of_each_listener():
    cluster = LocalKafkaCluster("x", sasl_users={"mirror": "pw"}, listeners=LISTENERS, tls=TLS)
    cluster.ports = dict(PORTS)
    assert cluster.client_settings(listener="SSL") == {
        "bootstrap.servers": "127.0.0.1:1001", "security.protocol": "SSL", "ssl.ca.location": "/s/ca.pem"}
    mtls = cluster.client_settings(listener="MTLS", identity=Path("/c/mirror.pem"))
    assert mtls["ssl.certificate.location"] == mtls["ssl.key.location"] == "/c/mirror.pem"
    sasl = cluster.client_settings(listener="SASL_SSL")
    assert (sasl["security.protocol"], sasl["sasl.username"], sasl["sasl.password"]) == ("SASL_SSL", "mirror", "pw")
    with pytest.raises(ValueError, match="no client listener"):
        cluster.client_settings(listener="OTHER")
