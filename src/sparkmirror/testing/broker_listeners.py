"""The client listeners of a local broker, as server.properties: SASL_PLAINTEXT, SSL (optionally with client
certificates required, i.e. mTLS) and SASL_SSL, and KRaft's StandardAuthorizer.

A secured broker keeps a PLAINTEXT listener for itself (inter-broker) and the controller's; their principal is
User:ANONYMOUS, which is therefore a super user whenever the authorizer is on. Tests may use that listener
(`LocalKafkaCluster.internal_bootstrap`) to set up and check data; what they test goes through the client
listeners.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

SASL_MECHANISMS = ("SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN")
_SCRAM_MECHANISMS = SASL_MECHANISMS[:2]
_SASL_USER = re.compile(r"[A-Za-z0-9_.\-]+")
_SASL_PASSWORD = re.compile(r"[!#-+\--\[\]-~]+")  # printable ASCII without space, '"', ',' and '\\'
_LISTENER_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
PROTOCOLS = ("SSL", "SASL_PLAINTEXT", "SASL_SSL")
CLIENT_AUTH = ("none", "requested", "required")
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
# mTLS principals are the certificate's CN (User:mirror), not its whole distinguished name.
CN_PRINCIPAL_RULES = "RULE:^CN=([^,]+),.*$/$1/,RULE:^CN=([^,]+)$/$1/,DEFAULT"
BROKER_PRINCIPAL = "User:ANONYMOUS"


@dataclass(frozen=True)
class ClientListener:
    """One client listener: its name in `listeners=`, its security protocol, and whether TLS client
    certificates are asked for (`ssl.client.auth`: none, requested or required)."""

    name: str
    protocol: str
    client_auth: str = "none"

    def __post_init__(self) -> None:
        if not _LISTENER_NAME.fullmatch(self.name) or self.name in ("PLAINTEXT", "CONTROLLER"):
            raise ValueError(f"listener name {self.name!r}: upper-case letters, digits and '_', not PLAINTEXT "
                             "or CONTROLLER (the broker's own listeners)")
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"listener {self.name}: protocol must be one of {', '.join(PROTOCOLS)}")
        if self.client_auth not in CLIENT_AUTH:
            raise ValueError(f"listener {self.name}: client_auth must be one of {', '.join(CLIENT_AUTH)}")
        if self.client_auth != "none" and not self.tls:
            raise ValueError(f"listener {self.name}: client certificates need a TLS protocol")

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("SASL_")


@dataclass(frozen=True)
class BrokerTls:
    """The broker's TLS stores: its key store (PEM or PKCS12) and the trust store client certificates are
    checked against; `ca_pem` is the CA file clients trust (handed out by client_settings)."""

    keystore: Path
    keystore_type: str
    truststore: Path
    truststore_type: str
    ca_pem: Path
    keystore_password: str | None = None  # PKCS12 only
    key_password: str | None = None       # an encrypted key only
    truststore_password: str | None = None  # PKCS12 only

    def properties(self) -> dict[str, str]:
        props = {"ssl.keystore.type": self.keystore_type, "ssl.keystore.location": str(self.keystore),
                 "ssl.truststore.type": self.truststore_type, "ssl.truststore.location": str(self.truststore),
                 "ssl.principal.mapping.rules": CN_PRINCIPAL_RULES}
        for key, value in (("ssl.keystore.password", self.keystore_password), ("ssl.key.password", self.key_password),
                           ("ssl.truststore.password", self.truststore_password)):
            if value is not None:
                props[key] = value
        return props


def check_sasl_users(users: Mapping[str, str]) -> None:
    """Reject names and passwords that the properties file, JAAS or --add-scram syntax would mangle."""
    if not users:
        raise ValueError("sasl_users needs at least one user")
    for name, password in users.items():
        if not _SASL_USER.fullmatch(name):
            raise ValueError(f"SASL user name {name!r}: use letters, digits, '.', '_' and '-' only")
        if not _SASL_PASSWORD.fullmatch(password):
            raise ValueError(f"password of SASL user {name!r}: use printable ASCII without spaces, '\"', ',' "
                             "and '\\'")


def scram_arguments(users: Mapping[str, str]) -> list[str]:
    """`kafka-storage format` options that write each user's SCRAM credentials into the bootstrap metadata."""
    return [arg for name, password in users.items() for m in _SCRAM_MECHANISMS
            for arg in ("--add-scram", f"{m}=[name={name},password={password}]")]


def check_listeners(listeners: Sequence[ClientListener], sasl_users: Mapping[str, str] | None,
                    tls: BrokerTls | None) -> None:
    """Every listener has what it needs: users for SASL, stores for TLS; names are distinct."""
    if not listeners:
        raise ValueError("a secured cluster needs at least one client listener")
    if len({listener.name for listener in listeners}) != len(listeners):
        raise ValueError("client listener names must be distinct")
    if any(listener.sasl for listener in listeners) and sasl_users is None:
        raise ValueError("a SASL listener needs sasl_users")
    if any(listener.tls for listener in listeners) and tls is None:
        raise ValueError("an SSL or SASL_SSL listener needs tls (the broker's stores)")


def listener_properties(listeners: Sequence[ClientListener], ports: Mapping[str, int], internal_port: int,
                        controller_port: int, sasl_users: Mapping[str, str] | None, tls: BrokerTls | None,
                        super_users: Sequence[str] | None) -> dict[str, str]:
    """server.properties entries for the client listeners on `ports` (by listener name), the broker's own
    PLAINTEXT listener on `internal_port`, and the authorizer when `super_users` is given (principals such as
    `User:mirror`; the broker's own is added)."""
    client = ",".join(f"{listener.name}://127.0.0.1:{ports[listener.name]}" for listener in listeners)
    props = {
        "listeners": f"{client},PLAINTEXT://127.0.0.1:{internal_port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"{client},PLAINTEXT://127.0.0.1:{internal_port}",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,"
                                          + ",".join(f"{listener.name}:{listener.protocol}" for listener in listeners),
    }
    if tls is not None:
        props.update(tls.properties())
    for listener in listeners:
        if listener.client_auth != "none":
            props[f"listener.name.{listener.name.lower()}.ssl.client.auth"] = listener.client_auth
        if listener.sasl:
            assert sasl_users is not None
            props.update(_sasl_listener(listener.name.lower(), sasl_users))
    if any(listener.sasl for listener in listeners):
        props["sasl.enabled.mechanisms"] = ",".join(SASL_MECHANISMS)
    if super_users is not None:
        props["authorizer.class.name"] = AUTHORIZER
        props["super.users"] = ";".join(dict.fromkeys([BROKER_PRINCIPAL, *super_users]))
    return props


def _sasl_listener(name: str, users: Mapping[str, str]) -> dict[str, str]:
    """The JAAS entries of one SASL listener: SCRAM users live in the cluster metadata (scram_arguments),
    PLAIN users in the listener's JAAS entry."""
    plain_users = " ".join(f'user_{user}="{password}"' for user, password in users.items())
    return {
        **{f"listener.name.{name}.{m.lower()}.sasl.jaas.config":
           "org.apache.kafka.common.security.scram.ScramLoginModule required;" for m in _SCRAM_MECHANISMS},
        f"listener.name.{name}.plain.sasl.jaas.config":
            f"org.apache.kafka.common.security.plain.PlainLoginModule required {plain_users};",
    }
