"""A flow's SQL rules, sparkmirror's own way to shape records on the way: Spark SQL expressions over the source
record, compiled by Spark and evaluated in the JVM beside the Kafka source (pipeline/sql_rules.py).

- `sparkmirror.filter`: a boolean expression; a record it does not hold for (false or null) is dropped.
- `sparkmirror.mask.key`, `sparkmirror.mask.value`: an expression whose result (binary, or a string written as
  UTF-8) replaces the key or the value.
- `sparkmirror.mask.header.<name>`: likewise for the value of every header called `<name>` (the header itself is
  `h`: `h.key`, `h.value`).
- `sparkmirror.drop.headers`: header names removed from every record.

Expressions see the source record as Spark's Kafka source gives it: `topic` (the source topic), `partition`,
`offset`, `timestamp`, `timestampType`, `key`, `value` (binary) and `headers` (array of key, value). Every
expression sees the record as read, before any mask. They run before MM2's transforms. Pure: whether an
expression parses and type-checks is Spark's to say (pipeline/sql_rules.check).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sparkmirror.config import keys
from sparkmirror.config.flow_settings import comma_list

if TYPE_CHECKING:
    from sparkmirror.config.connector_reader import Reporter, Sourced


@dataclass(frozen=True, slots=True)
class SqlRules:
    """One flow's rules; every field empty when it has none. `keys` names each expression's key as written."""

    filter: str | None = None
    key: str | None = None
    value: str | None = None
    headers: tuple[tuple[str, str], ...] = ()  # (header name, expression)
    drop_headers: tuple[str, ...] = ()
    keys: tuple[tuple[str, str], ...] = ()  # (what, the key as written): filter, key, value, header:<name>

    def __bool__(self) -> bool:
        return bool(self.filter or self.key or self.value or self.headers or self.drop_headers)

    def named(self) -> list[tuple[str, str, str]]:
        """(what it shapes: filter, key, value or header:<name>; the key as written; expression) of each one."""
        written = dict(self.keys)
        found = [("filter", self.filter), ("key", self.key), ("value", self.value),
                 *((f"header:{name}", expr) for name, expr in self.headers)]
        return [(what, written.get(what, what), expr) for what, expr in found if expr]

    def expressions(self) -> list[tuple[str, str]]:
        """(the key as written, expression) of every expression."""
        return [(key, expr) for _, key, expr in self.named()]


def is_sql_key(key: str) -> bool:
    return key in (keys.SQL_FILTER, keys.SQL_MASK_KEY, keys.SQL_MASK_VALUE, keys.SQL_DROP_HEADERS) \
        or key.startswith(keys.SQL_MASK_HEADER_PREFIX)


def read_sql_rules(conn: Mapping[str, Sourced], report: Reporter) -> SqlRules:
    """A flow's rules from its connector map (flow keys beat top-level ones, as for every flow setting)."""
    def expression(key: str) -> str | None:
        s = conn.get(key)
        if s is None:
            return None
        if not s.value.strip():
            report.problem(s.key, "empty; give a Spark SQL expression, or remove the key")
            return None
        return s.value.strip()

    written = [(what, conn[key].key) for what, key in (("filter", keys.SQL_FILTER), ("key", keys.SQL_MASK_KEY),
                                                       ("value", keys.SQL_MASK_VALUE)) if key in conn]
    headers = []
    for key in sorted(k for k in conn if k.startswith(keys.SQL_MASK_HEADER_PREFIX)):
        name = key[len(keys.SQL_MASK_HEADER_PREFIX):]
        expr = expression(key)
        if not name:
            report.problem(conn[key].key, "name the header after the prefix, e.g. sparkmirror.mask.header.ssn")
        elif expr:
            headers.append((name, expr))
            written.append((f"header:{name}", conn[key].key))
    drop = conn.get(keys.SQL_DROP_HEADERS)
    return SqlRules(expression(keys.SQL_FILTER), expression(keys.SQL_MASK_KEY), expression(keys.SQL_MASK_VALUE),
                    tuple(headers), comma_list(drop.value) if drop else (), tuple(written))
