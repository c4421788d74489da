"""SASL settings -> librdkafka: mechanisms, login modules, credentials, Kerberos and OAUTHBEARER (OIDC, unsecured)."""

from __future__ import annotations

import pytest

from sparkmirror.config.librdkafka import translate

from .translation_cases import OAUTH_MODULE, SCRAM_JAAS, SECRET, only_problem, sasl


@pytest.mark.parametrize(("mechanism", "module"), [
    ("PLAIN", "org.apache.kafka.common.security.plain.PlainLoginModule"),
    ("SCRAM-SHA-256", "org.apache.kafka.common.security.scram.ScramLoginModule"),
    ("SCRAM-SHA-512", "org.apache.kafka.common.security.scram.ScramLoginModule"),
])
def test_plain_and_scram_logins_become_username_and_password(mechanism: str, module: str) -> None:
    settings = translate(sasl(mechanism, f'{module} required username="alice" password="{SECRET}";'),
                         "producer").settings
    assert settings["sasl.mechanism"] == mechanism
    assert (settings["sasl.username"], settings["sasl.password"]) == ("alice", SECRET)


def test_sasl_needs_a_jaas_config() -> None:
    assert "missing" in only_problem(sasl("PLAIN", None), "sasl.jaas.config")


def test_mechanism_must_match_the_login_module() -> None:
    text = only_problem(sasl("PLAIN", SCRAM_JAAS), "sasl.mechanism")
    assert "ScramLoginModule" in text and "SCRAM-SHA-256/SCRAM-SHA-512" in text


def test_without_a_mechanism_the_login_module_must_be_kerberos() -> None:
    plain = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";'
    assert "(the default)" in only_problem(sasl(None, plain), "sasl.jaas.config")


def test_unknown_login_modules_and_mechanisms_are_problems() -> None:
    text = only_problem(sasl("PLAIN", "software.amazon.msk.auth.iam.IAMLoginModule required;"), "sasl.jaas.config")
    assert "software.amazon.msk.auth.iam.IAMLoginModule" in text
    assert "AWS_MSK_IAM" in only_problem(sasl("AWS_MSK_IAM", "x required;"), "sasl.mechanism")


def test_java_callback_handlers_and_delegation_tokens_are_problems() -> None:
    only_problem(sasl("SCRAM-SHA-512", SCRAM_JAAS, **{"sasl.client.callback.handler.class": "x.Handler"}),
                 "sasl.client.callback.handler.class")
    only_problem(sasl("SCRAM-SHA-512", SCRAM_JAAS, **{"sasl.login.callback.handler.class": "x.Handler"}),
                 "sasl.login.callback.handler.class")
    only_problem(sasl("SCRAM-SHA-512", SCRAM_JAAS.replace(";", " tokenauth=true;")), "sasl.jaas.config")


def test_kerberos_keytab_login() -> None:
    jaas = ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true '
            'keyTab="/etc/security/mm2.keytab" principal="mm2/host@EXAMPLE.COM" serviceName="kafka";')
    settings = translate(sasl("GSSAPI", jaas, **{"sasl.kerberos.min.time.before.relogin": "60000"}), "admin").settings
    assert settings["sasl.kerberos.keytab"] == "/etc/security/mm2.keytab"
    assert settings["sasl.kerberos.principal"] == "mm2/host@EXAMPLE.COM"
    assert settings["sasl.kerberos.service.name"] == "kafka"
    assert settings["sasl.kerberos.min.time.before.relogin"] == "60000"
    assert "sasl.kerberos.kinit.cmd" not in settings


def test_kerberos_service_name_ticket_cache_and_kinit_path() -> None:
    cache = "com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true;"
    settings = translate(sasl(None, cache, **{"sasl.kerberos.service.name": "kafka",
                                              "sasl.kerberos.kinit.cmd": "/opt/krb 5/kinit"}), "admin").settings
    assert settings["sasl.kerberos.service.name"] == "kafka"
    assert settings["sasl.kerberos.kinit.cmd"] == "'/opt/krb 5/kinit' -R"
    keytab = ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/k" principal="p" '
              'serviceName="kafka";')
    custom = translate(sasl("GSSAPI", keytab, **{"sasl.kerberos.kinit.cmd": "/usr/local/bin/kinit"}), "admin")
    assert custom.settings["sasl.kerberos.kinit.cmd"].startswith("/usr/local/bin/kinit -R -t ")
    assert "differs" in only_problem(sasl("GSSAPI", keytab, **{"sasl.kerberos.service.name": "other"}),
                                     "sasl.kerberos.service.name")
    assert "missing" in only_problem(sasl("GSSAPI", cache), "sasl.kerberos.service.name")
    only_problem(sasl("GSSAPI", "com.sun.security.auth.module.Krb5LoginModule required serviceName=kafka;"),
                 "sasl.jaas.config")


OIDC_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"


def test_oauthbearer_with_a_token_endpoint_becomes_oidc() -> None:
    jaas = (f'{OAUTH_MODULE} required clientId="mm2" clientSecret="{SECRET}" scope="kafka.read kafka.write" '
            'extension_logicalCluster="lkc-1" extension_identityPoolId="pool-2";')
    settings = translate(sasl("OAUTHBEARER", jaas, **{
        "sasl.oauthbearer.token.endpoint.url": "https://idp.example.com/token",
        "sasl.login.callback.handler.class": OIDC_HANDLER,
        "sasl.oauthbearer.sub.claim.name": "client_id"}), "consumer").settings
    assert {k: v for k, v in settings.items() if "oauthbearer" in k} == {
        "sasl.oauthbearer.method": "oidc", "sasl.oauthbearer.token.endpoint.url": "https://idp.example.com/token",
        "sasl.oauthbearer.client.id": "mm2", "sasl.oauthbearer.client.secret": SECRET,
        "sasl.oauthbearer.scope": "kafka.read kafka.write", "sasl.oauthbearer.sub.claim.name": "client_id",
        "sasl.oauthbearer.extensions": "logicalCluster=lkc-1,identityPoolId=pool-2"}


def test_oauthbearer_java_keys_beat_jaas_options_and_jwt_bearer_maps_the_assertion() -> None:
    java = sasl("OAUTHBEARER", f'{OAUTH_MODULE} required clientId="old" clientSecret="old-{SECRET}";', **{
        "sasl.oauthbearer.token.endpoint.url": "https://idp/token",
        "sasl.oauthbearer.client.credentials.client.id": "new",
        "sasl.oauthbearer.client.credentials.client.secret": f"new-{SECRET}",
        "sasl.oauthbearer.scope": "s1"})
    settings = translate(java, "admin").settings
    assert (settings["sasl.oauthbearer.client.id"], settings["sasl.oauthbearer.client.secret"]) == (
        "new", f"new-{SECRET}")
    assert settings["sasl.oauthbearer.scope"] == "s1"
    bearer = translate({**java, "sasl.oauthbearer.jwt.retriever.class":
                        "org.apache.kafka.common.security.oauthbearer.JwtBearerJwtRetriever",
                        "sasl.oauthbearer.assertion.private.key.file": "/k.pem",
                        "sasl.oauthbearer.assertion.claim.iss": "mm2",
                        "sasl.oauthbearer.assertion.template.file": "/t.json"}, "admin").settings
    assert bearer["sasl.oauthbearer.grant.type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert bearer["sasl.oauthbearer.assertion.private.key.file"] == "/k.pem"
    assert bearer["sasl.oauthbearer.assertion.claim.iss"] == "mm2"
    assert bearer["sasl.oauthbearer.assertion.jwt.template.file"] == "/t.json"
    client_credentials = translate({**java, "sasl.oauthbearer.assertion.claim.iss": "mm2"}, "admin")
    assert "sasl.oauthbearer.assertion.claim.iss" in client_credentials.ignored


@pytest.mark.parametrize(("extra", "key"), [
    ({"sasl.oauthbearer.token.endpoint.url": "https://idp/token"}, "sasl.jaas.config"),  # no client secret
    ({"sasl.oauthbearer.token.endpoint.url": "file:///var/run/token.jwt"}, "sasl.oauthbearer.token.endpoint.url"),
    ({"sasl.login.callback.handler.class": OIDC_HANDLER}, "sasl.oauthbearer.token.endpoint.url"),
    ({"sasl.oauthbearer.token.endpoint.url": "https://idp/token", "sasl.oauthbearer.jwt.retriever.class":
      "org.apache.kafka.common.security.oauthbearer.FileJwtRetriever"}, "sasl.oauthbearer.jwt.retriever.class"),
    ({"sasl.oauthbearer.token.endpoint.url": "https://idp/token",
      "sasl.oauthbearer.client.credentials.client.secret": SECRET, "sasl.oauthbearer.header.urlencode": "true"},
     "sasl.oauthbearer.header.urlencode"),
])
def test_oauthbearer_problems(extra: dict[str, str], key: str) -> None:
    only_problem(sasl("OAUTHBEARER", f'{OAUTH_MODULE} required clientId="mm2";', **extra), key)


def test_oauthbearer_without_a_token_endpoint_uses_the_unsecured_jwt() -> None:
    jaas = (f'{OAUTH_MODULE} required unsecuredLoginStringClaim_sub="alice" unsecuredLoginLifetimeSeconds="600" '
            'unsecuredLoginExtension_traceId="t1";')
    settings = translate(sasl("OAUTHBEARER", jaas), "admin").settings
    assert settings["enable.sasl.oauthbearer.unsecure.jwt"] == "true"
    assert settings["sasl.oauthbearer.config"] == "principal=alice lifeSeconds=600 extension_traceId=t1"
    assert "unsecuredLoginStringClaim_sub" in only_problem(sasl("OAUTHBEARER", f"{OAUTH_MODULE} required;"),
                                                           "sasl.jaas.config")
    assert "unsecuredLoginNumberClaim_iat" in only_problem(sasl("OAUTHBEARER", (
        f'{OAUTH_MODULE} required unsecuredLoginStringClaim_sub="a" unsecuredLoginNumberClaim_iat="1";')),
        "sasl.jaas.config")
    only_problem(sasl("OAUTHBEARER", f'{OAUTH_MODULE} required unsecuredLoginStringClaim_sub="a b";'),
                 "sasl.jaas.config")
