"""SASL settings of a Java client into librdkafka's: mechanism and login module, credentials, Kerberos and OAuth.

Covers PLAIN, SCRAM-SHA-256/512, GSSAPI and OAUTHBEARER (OIDC and the unsecured JWT), the mechanisms librdkafka has.
Whether the installed librdkafka was built with GSSAPI is a property of the machine, not of the configuration:
kafka/features.py checks it on the translated settings.
"""

from __future__ import annotations

import shlex
import string

from sparkmirror.config.librdkafka.jaas import JaasError, parse_jaas
from sparkmirror.config.librdkafka.result import Result

_MODULES = {"org.apache.kafka.common.security.plain.PlainLoginModule": ("PLAIN",),
            "org.apache.kafka.common.security.scram.ScramLoginModule": ("SCRAM-SHA-256", "SCRAM-SHA-512"),
            "com.sun.security.auth.module.Krb5LoginModule": ("GSSAPI",),
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule": ("OAUTHBEARER",)}
_OIDC_HANDLERS = ("org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
                  "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler")


def translate_sasl(result: Result) -> None:
    """The SASL mechanism and login of a SASL_PLAINTEXT or SASL_SSL client, collected into result."""
    mechanism = (result.get("sasl.mechanism") or "").upper() or None
    effective = mechanism or "GSSAPI"
    if mechanism:
        result.settings["sasl.mechanism"] = mechanism
    if all(effective not in m for m in _MODULES.values()):
        result.problem("sasl.mechanism", f"{effective} has no librdkafka equivalent; librdkafka supports GSSAPI, "
                       "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER")
        return
    if result.get("sasl.client.callback.handler.class"):
        result.problem("sasl.client.callback.handler.class", "Java callback handlers cannot run in librdkafka; remove "
                       "it and give the credentials in sasl.jaas.config")
    handler = result.get("sasl.login.callback.handler.class")
    if handler and handler not in _OIDC_HANDLERS:
        result.problem("sasl.login.callback.handler.class", f"{handler} is Java code librdkafka cannot run; remove it")
    jaas = result.get("sasl.jaas.config", strip=False)
    if jaas is None:
        result.problem("sasl.jaas.config", f"missing; {effective} needs it here (JAAS files given with "
                       "-Djava.security.auth.login.config are not read)")
        return
    try:
        module, options = parse_jaas(jaas)
    except JaasError as exc:
        result.problem("sasl.jaas.config", str(exc))
        return
    if module not in _MODULES:
        result.problem("sasl.jaas.config", f"login module {module} has no librdkafka equivalent; use PlainLoginModule, "
                       "ScramLoginModule, Krb5LoginModule or OAuthBearerLoginModule")
    elif effective not in _MODULES[module]:
        short = module.rsplit(".", 1)[-1]
        result.problem("sasl.mechanism" if mechanism else "sasl.jaas.config",
                       f"sasl.mechanism {effective}{'' if mechanism else ' (the default)'} does not match {short} in "
                       f"sasl.jaas.config; set sasl.mechanism={'/'.join(_MODULES[module])}")
    elif effective == "GSSAPI":
        _kerberos(result, options)
    elif effective == "OAUTHBEARER":
        _oauthbearer(result, options, handler)
    else:
        _credentials(result, options, module)


def _credentials(result: Result, options: dict[str, str], module: str) -> None:
    missing = [name for name in ("username", "password") if name not in options]
    if missing:
        result.problem("sasl.jaas.config", f"{module.rsplit('.', 1)[-1]} needs {' and '.join(missing)}; add it")
    elif options.get("tokenauth", "").lower() == "true":
        result.problem("sasl.jaas.config", "librdkafka cannot authenticate with delegation tokens (tokenauth=true)")
    else:
        result.settings.update({"sasl.username": options["username"], "sasl.password": options["password"]})


def _kerberos(result: Result, options: dict[str, str]) -> None:
    jaas_service, service = options.get("serviceName"), result.get("sasl.kerberos.service.name")
    if jaas_service and service and jaas_service != service:
        result.problem("sasl.kerberos.service.name", "differs from serviceName in sasl.jaas.config; keep one")
    elif not (jaas_service or service):
        result.problem("sasl.kerberos.service.name", "missing (nor serviceName in sasl.jaas.config); set it, "
                       "usually to kafka")
    else:
        result.settings["sasl.kerberos.service.name"] = jaas_service or service  # type: ignore[assignment]
    kinit = shlex.quote(result.get("sasl.kerberos.kinit.cmd") or "kinit")
    keytab, principal = options.get("keyTab"), options.get("principal")
    if options.get("useKeyTab", "").lower() == "true" and keytab and principal:
        result.settings.update({"sasl.kerberos.keytab": keytab, "sasl.kerberos.principal": principal})
        if kinit != "kinit":
            args = '-t "%{sasl.kerberos.keytab}" -k %{sasl.kerberos.principal}'
            result.settings["sasl.kerberos.kinit.cmd"] = f"{kinit} -R {args} || {kinit} {args}"
    elif options.get("useTicketCache", "").lower() == "true":
        result.settings["sasl.kerberos.kinit.cmd"] = f"{kinit} -R"  # renew the existing cache, as Java does
        if principal:
            result.settings["sasl.kerberos.principal"] = principal
    else:
        result.problem("sasl.jaas.config", "Krb5LoginModule needs useKeyTab=true with keyTab and principal, "
                       "or useTicketCache=true")
    relogin = result.get("sasl.kerberos.min.time.before.relogin")
    if relogin is not None:
        result.settings["sasl.kerberos.min.time.before.relogin"] = relogin


_ASSERTION_KEYS = ("algorithm", "claim.aud", "claim.exp.seconds", "claim.iss", "claim.jti.include",
                   "claim.nbf.seconds", "claim.sub", "file", "private.key.file", "private.key.passphrase")
_RETRIEVERS = "org.apache.kafka.common.security.oauthbearer."


def _oauthbearer(result: Result, options: dict[str, str], handler: str | None) -> None:
    url = result.get("sasl.oauthbearer.token.endpoint.url")
    if url is None and handler:
        result.problem("sasl.oauthbearer.token.endpoint.url", f"missing; {handler.rsplit('.', 1)[-1]} needs it")
    elif url is None:
        _unsecured_jwt(result, options)
    elif url.lower().startswith("file:"):
        result.problem("sasl.oauthbearer.token.endpoint.url", "librdkafka cannot read a token from a file; "
                       "use the identity provider's https token endpoint")
    else:
        _oidc(result, options, url)


def _oidc(result: Result, options: dict[str, str], url: str) -> None:
    retriever = (result.get("sasl.oauthbearer.jwt.retriever.class") or _RETRIEVERS + "DefaultJwtRetriever")
    kind = retriever.removeprefix(_RETRIEVERS)
    if kind not in ("DefaultJwtRetriever", "ClientCredentialsJwtRetriever", "JwtBearerJwtRetriever"):
        result.problem("sasl.oauthbearer.jwt.retriever.class", f"{retriever} has no librdkafka equivalent; use "
                       "ClientCredentialsJwtRetriever or JwtBearerJwtRetriever")
        return
    settings = {"sasl.oauthbearer.method": "oidc", "sasl.oauthbearer.token.endpoint.url": url}
    # The Java keys take precedence over the deprecated JAAS options, as in the Java client.
    client_id = result.get("sasl.oauthbearer.client.credentials.client.id") or options.get("clientId")
    secret = result.get("sasl.oauthbearer.client.credentials.client.secret", False) or options.get("clientSecret")
    scope = result.get("sasl.oauthbearer.scope") or options.get("scope")
    for name, value in (("client.id", client_id), ("client.secret", secret), ("scope", scope),
                        ("sub.claim.name", result.get("sasl.oauthbearer.sub.claim.name"))):
        if value is not None:
            settings[f"sasl.oauthbearer.{name}"] = value
    if kind == "JwtBearerJwtRetriever":
        settings["sasl.oauthbearer.grant.type"] = "urn:ietf:params:oauth:grant-type:jwt-bearer"
        for name in _ASSERTION_KEYS:
            value = result.get(f"sasl.oauthbearer.assertion.{name}", strip=not name.endswith("passphrase"))
            if value is not None:
                settings[f"sasl.oauthbearer.assertion.{name}"] = value
        if (template := result.get("sasl.oauthbearer.assertion.template.file")) is not None:
            settings["sasl.oauthbearer.assertion.jwt.template.file"] = template
    elif client_id is None or secret is None:
        result.problem("sasl.jaas.config", "OAuth client credentials need a client id and secret: set "
                       "sasl.oauthbearer.client.credentials.client.id/.secret (or clientId/clientSecret here)")
    extensions = {k.removeprefix("extension_"): v for k, v in options.items() if k.startswith("extension_")}
    if extensions:
        settings["sasl.oauthbearer.extensions"] = ",".join(f"{k}={v}" for k, v in extensions.items())
    if (result.get("sasl.oauthbearer.header.urlencode") or "false").lower() == "true":
        result.problem("sasl.oauthbearer.header.urlencode", "librdkafka does not URL-encode the client credentials; "
                       "remove it if your identity provider accepts them as they are")
    result.settings.update(settings)


def _unsecured_jwt(result: Result, options: dict[str, str]) -> None:
    """Java's unsecured JWT options in the terms of librdkafka's builtin handler (space-separated name=value)."""
    claim = options.get("unsecuredLoginPrincipalClaimName", "sub")
    parts, bad = [], []
    for name, value in options.items():
        if name == f"unsecuredLoginStringClaim_{claim}":
            parts.insert(0, f"principal={value}")
        elif name == "unsecuredLoginPrincipalClaimName":
            parts.append(f"principalClaimName={value}")
        elif name == "unsecuredLoginLifetimeSeconds":
            parts.append(f"lifeSeconds={value}")
        elif name.startswith("unsecuredLoginExtension_"):
            parts.append(f"extension_{name.removeprefix('unsecuredLoginExtension_')}={value}")
        elif name.startswith("unsecuredLogin"):
            bad.append(name)
    if bad:
        result.problem("sasl.jaas.config", f"librdkafka's unsecured JWT cannot express {', '.join(bad)}; remove them")
    elif not parts or not parts[0].startswith("principal="):
        result.problem("sasl.jaas.config", f"OAuthBearerLoginModule needs unsecuredLoginStringClaim_{claim} "
                       "(or set sasl.oauthbearer.token.endpoint.url for OIDC)")
    elif any(c in string.whitespace for p in parts for c in p):
        result.problem("sasl.jaas.config", "librdkafka's unsecured JWT options cannot hold white space; remove it")
    else:
        result.settings.update({"enable.sasl.oauthbearer.unsecure.jwt": "true",
                                "sasl.oauthbearer.config": " ".join(parts)})
