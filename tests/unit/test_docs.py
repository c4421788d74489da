"""The reference tables in docs/ stay true to the code, and every relative link in the docs leads somewhere."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from tests.role_acls import markdown_table

from sparkmirror.cli.exit_codes import ExitStatus
from sparkmirror.config import keys
from sparkmirror.web import metrics

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference.md"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def section_table(text: str, marker: str) -> str:
    """The Markdown table right after the `<!-- marker: ... -->` comment."""
    start = text.index(f"<!-- {marker}:")
    lines = text[start:].splitlines()[1:]
    return "\n".join(line for line in _leading_table(lines)) + "\n"


def _leading_table(lines: list[str]):
    for line in lines:
        if not line.startswith("|"):
            return
        yield line


def first_column(table: str) -> list[str]:
    return [row.split("|")[1].strip() for row in table.splitlines()[2:]]


def test_exit_codes_table_names_every_exit_status_and_no_other():
    table = section_table(REFERENCE.read_text(), "exit-codes")
    assert {int(code) for code in first_column(table)} == {int(status) for status in ExitStatus}


def own_keys() -> set[str]:
    """The keys sparkmirror adds to MM2's, as config/keys.py names them."""
    return {value for name, value in vars(keys).items()
            if name.isupper() and isinstance(value, str) and value.startswith("sparkmirror.")}


def test_keys_table_lists_every_key_sparkmirror_adds_and_only_those():
    table = section_table(REFERENCE.read_text(), "keys")
    listed = [key for cell in first_column(table) for key in re.findall(r"`([^`]+)`", cell)]
    known = own_keys()
    assert known, "no sparkmirror.* keys found in config/keys.py"
    for key in known:  # the measure-lag job's keys and the header masks are a prefix plus a suffix
        assert any(entry == key or entry.startswith(key) for entry in listed), f"{key} is missing from the table"
    for entry in listed:
        if entry == "spark.*":
            continue
        assert any(entry == key or entry.startswith(key) for key in known), f"{entry} is not a key of config/keys.py"


def exported_metrics() -> tuple[set[str], set[str]]:
    """(sparkmirror's own metric names as exported, counters with `_total`; MM2's metric names) from web/metrics.py."""
    tree = ast.parse(Path(metrics.__file__).read_text())
    own, counters, mm2 = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"sparkmirror_\w+",
                                                                                           node.value):
            own.add(node.value)
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            literal = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if name == "counter" and literal:
                counters.add(literal[0])
            if name in ("mm2", "_distribution") and literal:
                mm2.add(literal[0])
    return {f"{n}_total" if n in counters else n for n in own}, mm2


def test_metrics_table_lists_every_exported_metric_and_only_those():
    table = section_table(REFERENCE.read_text(), "metrics")
    own, mm2 = exported_metrics()
    assert own and mm2, "no metric names found in web/metrics.py"
    shown_own = set(re.findall(r"`(sparkmirror_\w+)`", table))
    assert shown_own == own
    shown_mm2 = {name for cell in first_column(table) if "connector" in cell
                 for name in re.findall(r"`(\w+)`", cell) if not name.startswith("_")}
    assert shown_mm2 == mm2


def test_role_acl_table_is_the_one_the_authorizer_test_grants():
    assert section_table(REFERENCE.read_text(), "role-acls") == markdown_table(), (
        "docs/reference.md's ACL table differs from tests/role_acls.py: paste `python -m tests.role_acls`")


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors of a page."""
    found = set()
    in_code = False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if not in_code and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading(page):
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name}: {target} does not exist"
        if anchor and linked.suffix == ".md":
            assert anchor in anchors(linked), f"{page.name}: no heading #{anchor} in {linked.name}"
