"""benchmarks/README.md is a report of the result files: every figure in its `what | field | value | result file`
tables is the named file's field (to the printed precision), every file in results/ has a line in its INDEX.md,
and the README stays short."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"
README = BENCHMARKS / "README.md"
RESULTS = BENCHMARKS / "results"
INDEX = RESULTS / "INDEX.md"

FIGURES_HEADER = ["what", "field", "value", "result file"]
# The headline ratios: each must be shown, from some result file, in a figures table.
HEADLINE_RATIOS = {
    "throughput_ratio_vs_mm2", "throughput_ratio_vs_limit", "scale_throughput_ratio_vs_mm2",
    "latency_p99_ratio_vs_mm2", "latency_1000p_p50_ratio_vs_mm2", "latency_1000p_p99_ratio_vs_mm2",
    "latency_long_p99_ratio_vs_mm2", "exactly_once_throughput_ratio_vs_at_least_once",
    "mm2_exactly_once_throughput_ratio_vs_mm2", "duplicates_per_kill_ratio_vs_mm2",
    "transforms_throughput_ratio_vs_plain", "transforms_throughput_ratio_vs_mm2", "sql_filter_latency_p50_ratio",
    "metrics_on_off_ratio", "ratio_to_plain_read",
}
RESULT_NAME = re.compile(r"(?:bench|kill|takeover|verify)-\d{8}T\d{6}Z[\w-]*\.(?:json|log)")


@dataclass(frozen=True)
class Figure:
    line: int
    what: str
    field: str
    value: str
    result_file: str


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def figures(text: str) -> list[Figure]:
    """The rows of every table whose header is `what | field | value | result file`."""
    rows, in_table = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.startswith("|"):
            in_table = False
        elif cells(line) == FIGURES_HEADER:
            in_table = True
        elif in_table and not set(line) <= set("|-: "):
            what, field, value, result_file = cells(line)
            rows.append(Figure(number, what, field.strip("`"), value, result_file.strip("`")))
    return rows


def lookup(result: dict, field: str) -> object:
    """`a.b.0.c`: keys of objects, indexes of lists."""
    node: object = result
    for part in field.split("."):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def matches(printed: str, actual: object) -> bool:
    """`printed` is `actual` rounded to the decimals it shows; a list prints as its items joined by ` / `."""
    if isinstance(actual, list):
        parts = printed.split(" / ")
        return len(parts) == len(actual) and all(matches(p, a) for p, a in zip(parts, actual, strict=True))
    if isinstance(actual, bool) or not isinstance(actual, int | float):
        return False
    number = printed.replace(",", "")
    decimals = len(number.partition(".")[2])
    return abs(float(number) - actual) <= 0.5 * 10 ** -decimals + 1e-9


README_FIGURES = figures(README.read_text("utf-8"))


def test_the_readme_is_a_short_report():
    assert len(README.read_text("utf-8").splitlines()) < 250


def test_the_readme_shows_every_headline_ratio_in_a_figures_table():
    assert len(README_FIGURES) >= 20
    assert HEADLINE_RATIOS - {figure.field for figure in README_FIGURES} == set()


@pytest.mark.parametrize("figure", README_FIGURES, ids=lambda f: f"line{f.line}:{f.result_file}:{f.field}")
def test_each_figure_in_the_readme_is_its_result_files_field(figure: Figure):
    path = RESULTS / figure.result_file
    assert path.is_file(), f"README line {figure.line} names {figure.result_file}, which is not in results/"
    actual = lookup(json.loads(path.read_text("utf-8")), figure.field)
    assert matches(figure.value, actual), (
        f"README line {figure.line} ({figure.what}) shows {figure.field} = {figure.value}; "
        f"{figure.result_file} has {actual}")


def test_a_value_matches_only_to_its_printed_precision():
    assert matches("1.777", 1.777) and matches("76,191", 76190.5) and matches("0.83", 0.83)
    assert matches("1.088 / 0.895", [1.088, 0.895])
    assert not matches("1.778", 1.777)
    assert not matches("1.7", 1.777)
    assert not matches("1.088", [1.088, 0.895])
    assert not matches("0", {"sparkmirror": 0})


def test_every_result_file_the_readme_names_exists():
    named = set(RESULT_NAME.findall(README.read_text("utf-8")))
    assert named, "the README names no result file"
    assert {name for name in named if not (RESULTS / name).is_file()} == set()


def index_files() -> list[str]:
    """The file named in the first cell of each row of INDEX.md's table."""
    rows = [cells(line) for line in INDEX.read_text("utf-8").splitlines() if line.startswith("|")]
    return [row[0].strip("`") for row in rows[2:]]


def test_every_file_in_results_has_one_line_in_the_index():
    listed = index_files()
    present = sorted(path.name for path in RESULTS.iterdir() if path.is_file() and path != INDEX)
    assert [name for name in present if listed.count(name) != 1] == []


def test_every_index_line_names_a_file_in_results():
    assert [name for name in index_files() if not (RESULTS / name).is_file()] == []
