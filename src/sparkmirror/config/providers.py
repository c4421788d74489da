"""Kafka config providers (KIP-297) resolved once at load time: `${file:path:key}`, `${directory:dir:file}`,
`${env:VAR}`.

MM2 resolves worker and client settings eagerly and connector settings lazily; here every value is resolved
when the file is loaded, so a bad reference fails `validate` instead of a running flow. Keys whose values
came from a provider are remembered so that no message or log ever shows the resolved text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import javaproperties

from sparkmirror.config import keys

# Kafka's ConfigTransformer syntax: ${provider:[path:]key}
_VARIABLE = re.compile(r"\$\{([^}]*?):(?:([^}]*?):)?([^}]*?)\}")
_CLASSES = {keys.FILE_CONFIG_PROVIDER: "file", keys.DIRECTORY_CONFIG_PROVIDER: "directory",
            keys.ENV_VAR_CONFIG_PROVIDER: "env"}


@dataclass(frozen=True, slots=True)
class Resolved:
    """Values with every `${...}` replaced; `secret_keys` name the values that came from a provider."""

    values: Mapping[str, str]
    secret_keys: frozenset[str] = frozenset()
    problems: tuple[tuple[str, str], ...] = ()  # (key, what is wrong)


@dataclass
class _Provider:
    name: str
    kind: str  # file | directory | env
    params: dict[str, str] = field(default_factory=dict)


def _list(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


class _Resolver:
    def __init__(self, values: Mapping[str, str], env: Mapping[str, str]) -> None:
        self.values = values
        self.env = env
        self.problems: list[tuple[str, str]] = []
        self.providers = self._providers()
        self._files: dict[str, dict[str, str] | None] = {}

    def _providers(self) -> dict[str, _Provider]:
        providers = {}
        for name in _list(self.values.get(keys.CONFIG_PROVIDERS, "")):
            class_key = f"{keys.CONFIG_PROVIDERS}.{name}.class"
            cls = self.values.get(class_key, "").strip()
            if not cls:
                self.problems.append((keys.CONFIG_PROVIDERS, f"provider '{name}' is listed but '{class_key}' is "
                                      f"not set; e.g. {class_key} = {keys.FILE_CONFIG_PROVIDER}"))
                continue
            kind = _CLASSES.get(cls)
            if kind is None:
                self.problems.append((class_key, f"config provider class '{cls}' cannot be used here; supported: "
                                      f"{', '.join(_CLASSES)}. Resolve such values before starting sparkmirror"))
                continue
            prefix = f"{keys.CONFIG_PROVIDERS}.{name}.param."
            params = {k[len(prefix):]: v for k, v in self.values.items() if k.startswith(prefix)}
            providers[name] = _Provider(name, kind, params)
        return providers

    def resolve(self, key: str, value: str) -> tuple[str, bool]:
        used = False

        def substitute(m: re.Match[str]) -> str:
            nonlocal used
            name, path, ref = m.group(1), m.group(2), m.group(3)
            provider = self.providers.get(name)
            if provider is None:
                self.problems.append((key, f"'${{{name}:...}}' names config provider '{name}', which "
                                      f"'{keys.CONFIG_PROVIDERS}' does not define"))
                return m.group(0)
            used = True
            text = self._lookup(key, provider, path, ref)
            return m.group(0) if text is None else text

        return _VARIABLE.sub(substitute, value), used

    def _lookup(self, key: str, provider: _Provider, path: str | None, ref: str) -> str | None:
        if provider.kind == "env":
            return self._env(key, provider, path, ref)
        if not path:
            self.problems.append((key, f"'${{{provider.name}:<path>:{ref}}}' needs a path"))
            return None
        if not self._allowed(key, provider, path):
            return None
        if provider.kind == "file":
            data = self._properties_file(key, path)
            if data is None:
                return None
            if ref not in data:
                self.problems.append((key, f"key '{ref}' is not in {path} (config provider '{provider.name}')"))
                return None
            return data[ref]
        target = Path(path) / ref
        try:
            return target.read_text(encoding="utf-8")
        except OSError as exc:
            self.problems.append((key, f"cannot read {target} (config provider '{provider.name}'): "
                                  f"{exc.strerror or exc}"))
            return None

    def _env(self, key: str, provider: _Provider, path: str | None, ref: str) -> str | None:
        if path:
            self.problems.append((key, f"'${{{provider.name}:{path}:{ref}}}': environment variables take no "
                                  f"path; write '${{{provider.name}:{ref}}}'"))
            return None
        pattern = provider.params.get("allowlist.pattern", ".*")
        try:
            allowed = re.fullmatch(pattern, ref) is not None
        except re.error as exc:
            self.problems.append((f"{keys.CONFIG_PROVIDERS}.{provider.name}.param.allowlist.pattern",
                                  f"invalid regex: {exc}"))
            return None
        if not allowed:
            self.problems.append((key, f"environment variable '{ref}' is not allowed by "
                                  f"{keys.CONFIG_PROVIDERS}.{provider.name}.param.allowlist.pattern"))
            return None
        if ref not in self.env:
            self.problems.append((key, f"environment variable '{ref}' is not set"))
            return None
        return self.env[ref]

    def _allowed(self, key: str, provider: _Provider, path: str) -> bool:
        allowed = _list(provider.params.get("allowed.paths", ""))
        if not allowed:
            return True
        resolved = Path(os.path.normpath(path))
        if any(resolved == Path(a) or Path(a) in resolved.parents for a in allowed):
            return True
        self.problems.append((key, f"{path} is outside {keys.CONFIG_PROVIDERS}.{provider.name}.param."
                              f"allowed.paths"))
        return False

    def _properties_file(self, key: str, path: str) -> dict[str, str] | None:
        if path not in self._files:
            try:
                with open(path, encoding="utf-8") as fh:
                    self._files[path] = dict(javaproperties.load(fh))
            except javaproperties.InvalidUEscapeError:  # its text quotes the file, which holds secrets
                self.problems.append((key, f"cannot read {path}: an invalid \\u escape (\\u takes four hex "
                                      "digits)"))
                self._files[path] = None
            except (OSError, ValueError, UnicodeError) as exc:
                self.problems.append((key, f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}"))
                self._files[path] = None
        return self._files[path]


def resolve_providers(values: Mapping[str, str], env: Mapping[str, str] | None = None) -> Resolved:
    """Replace every `${provider:...}` in values (except the `config.providers*` keys themselves)."""
    resolver = _Resolver(values, os.environ if env is None else env)
    out: dict[str, str] = {}
    secret: set[str] = set()
    for key, value in values.items():
        if key.startswith(keys.CONFIG_PROVIDERS) or "${" not in value:
            out[key] = value
            continue
        out[key], used = resolver.resolve(key, value)
        if used:
            secret.add(key)
    return Resolved(values=out, secret_keys=frozenset(secret), problems=tuple(resolver.problems))
