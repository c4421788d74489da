"""One root exception; every message names what failed and, where known, how to fix it."""

from __future__ import annotations

from collections.abc import Mapping


class SparkmirrorError(Exception):
    """Root of every error sparkmirror raises on purpose."""


class ConfigError(SparkmirrorError):
    """The properties file is unusable; carries every problem found, not just the first."""

    def __init__(self, problems: list[str] | str, source: str | None = None,
                 credentials: Mapping[str, str] | None = None) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        self.source = source
        # problem -> password key: the problems that are a password not opening a client's key or store
        self.credentials = dict(credentials or {})
        where = f" in {source}" if source else ""
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"invalid configuration{where}:\n{lines}")


class ClusterUnreachableError(SparkmirrorError):
    """A cluster named in the config did not answer a metadata request."""

    def __init__(self, alias: str, bootstrap_servers: str, cause: str) -> None:
        self.alias = alias
        self.bootstrap_servers = bootstrap_servers
        super().__init__(
            f"cluster '{alias}' is unreachable at bootstrap.servers={bootstrap_servers}: {cause}. "
            f"Check '{alias}.bootstrap.servers' in the properties file, and that those brokers are up "
            f"and reachable from this machine."
        )


class ClusterAuthenticationError(SparkmirrorError):
    """A cluster answered but refused the connection's credentials or TLS handshake."""

    def __init__(self, alias: str, bootstrap_servers: str, cause: str, tls: bool = False,
                 tls_key: str | None = None) -> None:
        """`tls_key`: the SSL setting the handshake failure points to (e.g. ssl.truststore.location), if known."""
        self.alias = alias
        self.bootstrap_servers = bootstrap_servers
        what = "the TLS handshake failed" if tls else "authentication failed"
        fix = (f"'{alias}.ssl.*' (trust store, key store, endpoint identification)" if tls else
               f"'{alias}.sasl.mechanism' and the user and password in '{alias}.sasl.jaas.config'")
        check = f"'{alias}.{tls_key}'" if tls and tls_key else f"'{alias}.security.protocol' and {fix}"
        super().__init__(
            f"cluster '{alias}' at bootstrap.servers={bootstrap_servers}: {what}: {cause}. "
            f"Check {check} in the properties file (or the '{alias}.admin.*' "
            f"overrides, which the control plane uses).")


class SecurityProtocolMismatchError(ClusterAuthenticationError):
    """The cluster answered, but its listener speaks another security.protocol than the client.

    A ClusterAuthenticationError (same exit status): the connection's security settings are what is wrong,
    not the network, so "unreachable" would send the operator to the wrong place.
    """

    def __init__(self, alias: str, bootstrap_servers: str, protocol: str, listener: str, cause: str) -> None:
        self.alias = alias
        self.bootstrap_servers = bootstrap_servers
        self.protocol = protocol
        SparkmirrorError.__init__(
            self, f"cluster '{alias}' at bootstrap.servers={bootstrap_servers}: security.protocol={protocol} but "
                  f"{listener}; set '{alias}.security.protocol' to the listener's protocol in the properties file "
                  f"(or '{alias}.admin.security.protocol', which the control plane uses). librdkafka: {cause}")


class ClientCredentialsError(ClusterAuthenticationError):
    """A client's own key or store does not open with the password given: found when the file is loaded,
    before any connection, and reported as the credentials problem it is (the exit status of a refused login)."""

    def __init__(self, alias: str, key: str, problem: str) -> None:
        self.alias = alias
        self.bootstrap_servers = ""
        self.key = key
        SparkmirrorError.__init__(
            self, f"cluster '{alias}': {problem}. Set '{alias}.{key}' (or its '{alias}.<client>.' override) to "
                  "the password that opens it in the properties file")


class AdminOperationError(SparkmirrorError):
    """An admin call failed; names the operation and the cluster."""

    def __init__(self, alias: str, operation: str, cause: str, hint: str = "") -> None:
        self.alias = alias
        self.operation = operation
        text = f"{operation} on cluster '{alias}' failed: {cause}"
        super().__init__(f"{text}. {hint}" if hint else text)


class SchemaRegistryError(SparkmirrorError):
    """A cluster's schema registry did not answer, refused the credentials, or answered what cannot be used."""


class PipelineError(SparkmirrorError):
    """The record path failed; no offsets past the failure were committed."""


class EmbeddedSetupError(SparkmirrorError):
    """Java, Maven or the cached jars needed for local clusters or Spark are missing."""


class StateError(SparkmirrorError):
    """The state dir (`--state-dir`) or a flow's positions file is unusable; one line: the path, then the fix."""
