"""Every install requirement earns its place: something in `src/` imports it (pandas and pyarrow stayed on after the
record path left Python, for nothing)."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported_roots() -> set[str]:
    """The top-level module of every import in src/sparkmirror."""
    roots = set()
    for path in (ROOT / "src" / "sparkmirror").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                roots.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                roots.add(node.module.split(".")[0])
    return roots


def test_every_install_requirement_is_imported_by_the_package():
    requirements = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    modules = {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].replace("-", "_").lower() for r in requirements}
    assert modules - imported_roots() == set()
