"""Read a Java .properties file into a flat map, keeping each key's line number for messages."""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import javaproperties

from sparkmirror.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Properties:
    """A flat key -> value map plus where each key was defined."""

    values: Mapping[str, str]
    lines: Mapping[str, int]
    source: str
    # key -> every (line, value) of a key written more than once, in file order
    duplicates: Mapping[str, tuple[tuple[int, str], ...]] = field(default_factory=dict)

    def where(self, key: str) -> str:
        """`file:line` for a key, or just the file name when the key is not in the file."""
        line = self.lines.get(key)
        return f"{self.source}:{line}" if line else self.source


def parse_properties(text: str, source: str = "<string>") -> Properties:
    """Parse properties text with javaproperties (escapes, continuations, `=`/`:`/space separators)."""
    values: dict[str, str] = {}
    lines: dict[str, int] = {}
    seen: dict[str, list[tuple[int, str]]] = {}
    line_no = 1
    try:
        for element in javaproperties.parse(io.StringIO(text)):
            if isinstance(element, javaproperties.KeyValue):
                values[element.key] = element.value
                lines[element.key] = line_no  # Java Properties: the last definition wins
                seen.setdefault(element.key, []).append((line_no, element.value))
            line_no += element.source.count("\n")
    except (ValueError, UnicodeError) as exc:
        raise ConfigError([f"cannot parse properties text: {exc}"], source) from exc
    duplicates = {k: tuple(v) for k, v in seen.items() if len(v) > 1}
    return Properties(values=values, lines=lines, source=source, duplicates=duplicates)


def read_properties(path: str | Path) -> Properties:
    """Read and parse a properties file; a missing or unreadable file is a ConfigError."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError([f"cannot read {p}: {exc.strerror or exc}"], str(p)) from exc
    return parse_properties(text, source=p.name)
