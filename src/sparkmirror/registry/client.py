"""A schema registry's Confluent API over urllib: the reads the subject preview makes. The record path's own client
is the JVM's (RegistryClient.java); this one serves the driver's control plane and `plan`."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from sparkmirror.config.model import SchemaRegistry
from sparkmirror.errors import SchemaRegistryError

TIMEOUT_S = 30.0
_CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


class RegistryClient:
    """One cluster's registry; `alias` names the cluster in errors."""

    def __init__(self, alias: str, registry: SchemaRegistry) -> None:
        self.alias = alias
        self.url = registry.url
        self._auth = None if not registry.user_info else \
            "Basic " + base64.b64encode(registry.user_info.encode()).decode()

    def subjects(self) -> list[str]:
        return self._call("/subjects") or []

    def versions(self, subject: str) -> list[int]:
        """A subject's versions, oldest first; [] when it does not exist."""
        return self._call(f"/subjects/{_quote(subject)}/versions") or []

    def version(self, subject: str, version: int) -> dict[str, Any]:
        """One version: schema, schemaType (absent for Avro), references, id."""
        found = self._call(f"/subjects/{_quote(subject)}/versions/{version}")
        if found is None:
            raise SchemaRegistryError(f"schema registry of cluster '{self.alias}' at {self.url}: subject "
                                      f"'{subject}' has no version {version} (deleted while it was read?)")
        return found

    def holds(self, subject: str, schema: dict[str, Any]) -> int | None:
        """The version under which `subject` holds `schema` (schema, schemaType, references), or None."""
        found = self._call(f"/subjects/{_quote(subject)}", schema)
        return None if found is None else int(found["version"])

    def _call(self, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method="GET" if data is None else "POST",  # noqa: S310
                                         headers={"Content-Type": _CONTENT_TYPE, "Accept": _CONTENT_TYPE})
        if self._auth:
            request.add_header("Authorization", self._auth)
        where = f"schema registry of cluster '{self.alias}' at {self.url}"
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310 - the file's URL
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            hint = (f"; check {self.alias}.sparkmirror.schema.registry.basic.auth.user.info"
                    if exc.code in (401, 403) else "")
            raise SchemaRegistryError(f"{where} answered {path} with {exc.code}: "
                                      f"{exc.read().decode(errors='replace')[:300]}{hint}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise SchemaRegistryError(f"{where} did not answer ({exc}); check "
                                      f"{self.alias}.sparkmirror.schema.registry.url and that it runs") from None


def _quote(subject: str) -> str:
    return urllib.parse.quote(subject, safe="")
