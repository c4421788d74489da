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
    last: tuple[javaproperties.KeyValue, int] | None = None  # the last element when it is a key, and its line
    try:
        for element in javaproperties.parse(io.StringIO(text)):
            last = None
            if isinstance(element, javaproperties.KeyValue):
                values[element.key] = element.value
                lines[element.key] = line_no  # Java Properties: the last definition wins
                seen.setdefault(element.key, []).append((line_no, element.value))
                last = (element, line_no)
            line_no += element.source.count("\n")
    except javaproperties.InvalidUEscapeError:  # its text quotes the value, which may be a secret
        raise ConfigError([f"an invalid \\u escape: \\u takes four hex digits; write a backslash as \\\\ "
                           f"({source}:{line_no})"], source) from None
    except (ValueError, UnicodeError) as exc:
        raise ConfigError([f"cannot parse properties text: {exc}"], source) from exc
    if last is not None and not text.endswith(("\n", "\r")):
        _refuse_cut_off(*last, source)
    duplicates = {k: tuple(v) for k, v in seen.items() if len(v) > 1}
    return Properties(values=values, lines=lines, source=source, duplicates=duplicates)


def _refuse_cut_off(last: javaproperties.KeyValue, line: int, source: str) -> None:
    """Refuse a last line, without a line break, that is a bare key or ends in a continuation.

    Such a line is a file cut off mid-write: Java reads `A->B.ena` as a key with an empty value, so the file
    would load and silently drop `A->B.enabled`.
    """
    if last.value == "":
        what = "has no value"
    elif (len(last.source) - len(last.source.rstrip("\\"))) % 2:
        what = "ends in a '\\' continuation"
    else:
        return
    raise ConfigError([f"{last.key}: the last line {what} and no line break: the file looks cut off "
                       f"mid-write; complete the line ({source}:{line})"], source)


def read_properties(path: str | Path) -> Properties:
    """Read and parse a UTF-8 properties file; a missing, unreadable or non-UTF-8 file is a ConfigError."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ConfigError([f"cannot read {p}: {exc.strerror or exc}"], str(p)) from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - data.rfind(b"\n", 0, exc.start)
        raise ConfigError([f"cannot read {p}: not UTF-8 text (byte 0x{data[exc.start]:02x} at line {line}, "
                           f"column {column}); save the file as UTF-8"], str(p)) from None
    return parse_properties(text, source=p.name)
