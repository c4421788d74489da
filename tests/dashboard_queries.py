"""The metric names a Grafana dashboard's PromQL queries read, so tests can check each one is exported.

Not a PromQL parser: a tokenizer that knows enough of the grammar to tell a metric name from a function,
an aggregation, a keyword, a label, a string, a number, a duration or a Grafana variable. Sample names are
kept as written (`x_bucket`, `x_total`), because those are the names a `/metrics` page carries.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

AGGREGATIONS = frozenset({"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
                          "bottomk", "topk", "quantile", "limitk", "limit_ratio"})
KEYWORDS = frozenset({"and", "or", "unless", "atan2", "bool", "offset", "by", "without", "on", "ignoring",
                      "group_left", "group_right", "inf", "nan"})
LABEL_LISTS = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right"})

_IDENTIFIER = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|(?:\d+(?:ms|[smhdwy]))+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_GRAFANA_VARIABLE = re.compile(r"\$\{[^}]*\}|\$[A-Za-z0-9_]+|\[\[[^\]]*\]\]")
_LABEL_VALUES = re.compile(r"^\s*label_values\s*\((?P<selector>.*),\s*[A-Za-z_][A-Za-z0-9_]*\s*\)\s*$", re.S)
_NAME_MATCHER = re.compile(r"""__name__\s*(?P<op>=~|!=|!~|=)\s*(?P<q>["'`])(?P<value>.*?)(?P=q)""")


def promql_metric_names(expr: str) -> set[str]:
    """Every metric name `expr` selects, bare (`up`), with matchers (`up{job="x"}`) or by `__name__="up"`."""
    names: set[str] = set()
    i = 0
    while i < len(expr):
        char = expr[i]
        if char.isspace():
            i += 1
        elif char == "#":
            i = _end_of_line(expr, i)
        elif char in "\"'`":
            i = _end_of_string(expr, i)
        elif char == "$" or expr.startswith("[[", i):
            match = _GRAFANA_VARIABLE.match(expr, i)
            if match is None:
                raise ValueError(f"unreadable Grafana variable at {i} in {expr!r}")
            i = match.end()
        elif char == "{":
            end = _closing(expr, i, "{", "}")
            names |= _names_in_matchers(expr[i + 1:end - 1], expr)
            i = end
        elif char == "[":
            i = _closing(expr, i, "[", "]")  # a range or subquery: durations and variables only
        elif number := _NUMBER.match(expr, i):
            i = number.end()
        elif ident := _IDENTIFIER.match(expr, i):
            word, i = ident.group(), ident.end()
            following = _next_char(expr, i)
            if word.lower() in LABEL_LISTS and following == "(":
                i = _closing(expr, expr.index("(", i), "(", ")")
            elif following != "(" and word.lower() not in AGGREGATIONS | KEYWORDS:
                names.add(word)
        else:
            i += 1  # an operator or a parenthesis or comma
    return names


def variable_query_metric_names(query: str) -> set[str]:
    """Metric names of a Prometheus template variable's query: `label_values(selector, label)` or PromQL."""
    if (match := _LABEL_VALUES.match(query)) is not None:
        return promql_metric_names(match.group("selector"))
    if re.match(r"^\s*label_values\s*\(\s*[A-Za-z_]\w*\s*\)\s*$", query):
        return set()  # label_values(label): every series, no metric named
    return promql_metric_names(re.sub(r"^\s*query_result\s*\((.*)\)\s*$", r"\1", query, flags=re.S))


def dashboard_panels(dashboard: dict) -> Iterator[dict]:
    """Every panel, including those inside collapsed rows."""
    for panel in dashboard.get("panels", ()):
        yield panel
        yield from dashboard_panels(panel)


def dashboard_exprs(dashboard: dict) -> list[str]:
    """The `expr` of every panel target, in panel order."""
    return [t["expr"] for p in dashboard_panels(dashboard) for t in p.get("targets", ()) if t.get("expr")]


def dashboard_metric_names(path: Path | str) -> set[str]:
    """Every metric name the dashboard at `path` reads: its panels' queries and its template variables'."""
    dashboard = json.loads(Path(path).read_text())
    names = set().union(*(promql_metric_names(e) for e in dashboard_exprs(dashboard)))
    for variable in dashboard.get("templating", {}).get("list", ()):
        if variable.get("type") == "query":
            query = variable.get("query")
            names |= variable_query_metric_names(query["query"] if isinstance(query, dict) else query or "")
    return names


def _names_in_matchers(body: str, expr: str) -> set[str]:
    found = set()
    for match in _NAME_MATCHER.finditer(body):
        if match.group("op") != "=":
            raise ValueError(f"__name__ {match.group('op')} selects names this reader cannot list: {expr!r}")
        found.add(match.group("value"))
    return found


def _next_char(expr: str, i: int) -> str:
    while i < len(expr) and expr[i].isspace():
        i += 1
    return expr[i] if i < len(expr) else ""


def _end_of_line(expr: str, i: int) -> int:
    end = expr.find("\n", i)
    return len(expr) if end < 0 else end + 1


def _end_of_string(expr: str, i: int) -> int:
    quote, j = expr[i], i + 1
    while j < len(expr):
        if expr[j] == "\\" and quote != "`":
            j += 2
        elif expr[j] == quote:
            return j + 1
        else:
            j += 1
    raise ValueError(f"unterminated string at {i} in {expr!r}")


def _closing(expr: str, i: int, opening: str, closing: str) -> int:
    """The index after the `closing` that matches `expr[i] == opening`, skipping strings."""
    depth, j = 0, i
    while j < len(expr):
        char = expr[j]
        if char in "\"'`":
            j = _end_of_string(expr, j)
            continue
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise ValueError(f"unbalanced {opening!r} at {i} in {expr!r}")
