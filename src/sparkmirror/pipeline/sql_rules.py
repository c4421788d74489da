"""A flow's SQL rules (config/sql_rules.py) as Spark columns: the filter becomes the `keep` column the JVM writer
reads (a dropped record still moves its partition's position), the masks replace key, value and headers in the
projection. Spark compiles them with the rest of the query, so no Python runs per record, in either trigger mode.
`check` asks Spark whether each expression parses and has the type it needs, before any record is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from sparkmirror.config.model import FlowConfig
from sparkmirror.config.sql_rules import SqlRules

KEEP = "keep"
# The columns of Spark's Kafka source, which the expressions see.
SOURCE_SCHEMA = StructType([
    StructField("key", BinaryType()), StructField("value", BinaryType()), StructField("topic", StringType()),
    StructField("partition", IntegerType()), StructField("offset", LongType()),
    StructField("timestamp", TimestampType()), StructField("timestampType", IntegerType()),
    StructField("headers", ArrayType(StructType([StructField("key", StringType()),
                                                  StructField("value", BinaryType())]))),
])
_BYTES = (BinaryType, StringType)


def _quoted(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _header_mask(name: str, expr: str) -> str:
    return (f"named_struct('key', h.key, 'value', CASE WHEN h.key = {_quoted(name)} THEN CAST(({expr}) AS BINARY) "
            f"ELSE h.value END)")


def shaped(df: DataFrame, rules: SqlRules, exempt_topics: Sequence[str] = ()) -> DataFrame:
    """The source rows with the masks applied and, when there is a filter, the `keep` column (null is false).
    Records of `exempt_topics` (the heartbeats topics a flow replicates: no value, no headers, read by MM2's
    tools) pass unchanged."""
    columns: dict[str, Column] = {}
    exempt = F.col("topic").isin(list(exempt_topics)) if exempt_topics else F.lit(False)

    def unless_exempt(rule: Column, column: str) -> Column:
        return F.when(exempt, F.col(column)).otherwise(rule) if exempt_topics else rule

    if rules.filter:
        columns[KEEP] = exempt | F.coalesce(F.expr(rules.filter), F.lit(False))
    if rules.key:
        columns["key"] = unless_exempt(F.expr(f"CAST(({rules.key}) AS BINARY)"), "key")
    if rules.value:
        columns["value"] = unless_exempt(F.expr(f"CAST(({rules.value}) AS BINARY)"), "value")
    headers = "headers"
    for name, expr in rules.headers:
        headers = f"transform({headers}, h -> {_header_mask(name, expr)})"
    if rules.drop_headers:
        names = ", ".join(_quoted(n) for n in rules.drop_headers)
        headers = f"filter({headers}, h -> NOT array_contains(array({names}), h.key))"
    if headers != "headers":
        columns["headers"] = unless_exempt(F.expr(headers), "headers")
    return df.withColumns(columns) if columns else df


def check(spark: SparkSession, rules: SqlRules) -> list[tuple[str, str]]:
    """(the key as written, Spark's message) for each expression that does not parse, does not resolve against
    the record's columns, or has the wrong type (a filter is boolean; a mask binary or a string)."""
    empty = spark.createDataFrame([], SOURCE_SCHEMA)
    problems = []
    for what, key, expr in rules.named():
        probe = f"transform(headers, h -> ({expr}))" if what.startswith("header:") else expr
        try:
            field = empty.select(F.expr(probe).alias("probe")).schema["probe"]
        except PySparkException as exc:
            problems.append((key, _first_line(exc)))
            continue
        kind = field.dataType.elementType if what.startswith("header:") else field.dataType  # type: ignore[attr-defined]
        wanted = (BooleanType,) if what == "filter" else _BYTES
        if not isinstance(kind, wanted):
            names = "boolean" if what == "filter" else "binary or string"
            problems.append((key, f"the expression is {kind.simpleString()}; it must be {names}"))
    return problems


@dataclass(frozen=True, slots=True)
class PreviewRecord:
    """One source record under a flow's SQL rules: kept or dropped, and each field a mask changed, before and
    after (header fields as `header:<name>`; a header a rule removed shows None after)."""

    topic: str
    partition: int
    offset: int
    kept: bool
    changes: tuple[tuple[str, bytes | None, bytes | None], ...]


def preview(spark: SparkSession, options: Mapping[str, str], rules: SqlRules, sample: int) -> list[PreviewRecord]:
    """The first `sample` records of each partition the options assign (a batch read from the earliest offset),
    under `rules`, evaluated by the same columns the flow's query uses."""
    source = spark.read.format("kafka").options(**options).load()
    window = Window.partitionBy("topic", "partition").orderBy("offset")
    first = source.withColumn("_n", F.row_number().over(window)).where(F.col("_n") <= sample).drop("_n")
    after = shaped(first.select(*(F.col(c) for c in SOURCE_SCHEMA.names),
                                *(F.col(c).alias(f"_before_{c}") for c in ("key", "value", "headers"))), rules)
    rows = after.orderBy("topic", "partition", "offset").collect()
    out = []
    for row in rows:
        changes: list[tuple[str, bytes | None, bytes | None]] = []
        for field in ("key", "value"):
            before, now = _bytes(row[f"_before_{field}"]), _bytes(row[field])
            if before != now:
                changes.append((field, before, now))
        remaining: dict[str, list[bytes | None]] = {}
        for h in row["headers"] or ():
            remaining.setdefault(h["key"], []).append(_bytes(h["value"]))
        for h in row["_before_headers"] or ():  # masks keep a header's place; a dropped one is gone
            before, left = _bytes(h["value"]), remaining.get(h["key"], [])
            now = left.pop(0) if left else None
            if now != before or not left and h["key"] not in remaining:
                changes.append((f"header:{h['key']}", before, now))
        kept = bool(row[KEEP]) if rules.filter else True
        out.append(PreviewRecord(row["topic"], row["partition"], row["offset"], kept, tuple(changes)))
    return out


def _bytes(value: object) -> bytes | None:
    return None if value is None else bytes(value)  # type: ignore[arg-type]


def flow_problems(spark: SparkSession, flows: Sequence[FlowConfig]) -> list[str]:
    """Every flow's rules checked, as problems naming the key as written (shared top-level keys once)."""
    found = [f"{key}: {message}" for flow in flows if flow.sql_rules for key, message in check(spark, flow.sql_rules)]
    return list(dict.fromkeys(found))


def _first_line(exc: Exception) -> str:
    """Spark's message without its plan dump and JVM stack (they follow the first paragraph)."""
    text = str(exc).strip()
    return text.split("\n\n", 1)[0].split("\nJVM stacktrace", 1)[0].strip()
