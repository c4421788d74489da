"""One client's Java settings as resolved from the file, with their librdkafka translation made once, at load."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType

from sparkmirror.config import keys
from sparkmirror.config.librdkafka import Translation, log_left_out, translate
from sparkmirror.errors import ConfigError

HIDDEN = "[hidden]"


class ClientSettings(Mapping[str, str]):
    """Java client settings for one client role, where each came from, and their librdkafka translation.

    The mapping itself is the Java settings (what Spark's source and the JVM writer take). `rdkafka` is the
    translation for the control plane's librdkafka clients. A translation that failed is kept as its problems:
    `rdkafka` raises them as a ConfigError, so a flow that never runs does not fail the load.
    Equality and hash are by values only: origins, role and translation do not count. repr never shows a value.
    """

    __slots__ = ("_values", "_origins", "_hidden", "_role", "_translation", "_problems", "_credentials", "_logged")

    def __init__(self, values: Mapping[str, str], role: str, origins: Mapping[str, str] | None = None,
                 hidden: frozenset[str] = frozenset()) -> None:
        self._values = MappingProxyType(dict(values))
        self._origins = MappingProxyType(dict(origins or {}))
        self._hidden = hidden
        self._role = role
        self._translation: Translation | None = None
        self._problems: tuple[str, ...] = ()
        self._credentials: Mapping[str, str] = MappingProxyType({})
        try:
            self._translation = translate(self._values, role, self.origin)
        except ConfigError as exc:
            self._problems = tuple(exc.problems)
            self._credentials = MappingProxyType(exc.credentials)
        self._logged = False

    def __getitem__(self, key: str) -> str:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"ClientSettings({', '.join(sorted(self._values))})"

    def __hash__(self) -> int:
        """Consistent with Mapping's equality (by values; origins do not count), so FlowConfig hashes."""
        return hash(frozenset(self._values.items()))

    @property
    def role(self) -> str:
        """The client these settings are for: admin, consumer or producer."""
        return self._role

    @property
    def translation(self) -> Translation:
        """The whole translation (settings, and the keys left out); raises the ConfigError naming every
        setting it cannot take. For checks: unlike `rdkafka`, reading it logs nothing."""
        if self._translation is None:
            raise ConfigError(list(self._problems))
        return self._translation

    @property
    def rdkafka(self) -> Mapping[str, str]:
        """The librdkafka settings a client is built with (read-only); raises as `translation` does.

        The keys the translation left out are logged on the first read, as a client is about to be built.
        """
        translation = self.translation
        if not self._logged:
            self._logged = True
            log_left_out(translation, self._role)
        return translation.settings

    @property
    def problems(self) -> tuple[str, ...]:
        """Why the translation failed, one problem per setting, each naming it as written; () when it did not."""
        return self._problems

    @property
    def credential_problems(self) -> Mapping[str, str]:
        """Those of `problems` that are a password not opening the client's key or store, each with the
        password key to set (ssl.key.password, ssl.keystore.password, ...)."""
        return self._credentials

    def origin(self, key: str) -> str:
        """The key as written in the file, with its line (for messages), e.g. `B.producer.acks (mm2:7)`."""
        return self._origins.get(key, key)

    def redacted(self) -> dict[str, str]:
        """Values safe to print: secrets and provider-resolved values replaced by a marker."""
        return {k: HIDDEN if k in self._hidden or keys.is_sensitive(k) else v for k, v in self._values.items()}
