"""Every command the README shows is run by a test or by CI, and its first screen says what, why and how."""

from __future__ import annotations

import re
from pathlib import Path

from tests.readme_blocks import marked_blocks as read_blocks

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
MARKER = re.compile(r"(<!-- (\w+): run by ([^ ]+)[^>]*-->)\n```")
FIRST_SCREEN_LINES = 60


def marked_blocks() -> dict[str, list[tuple[str, list[str]]]]:
    """Marker name -> [(the file that runs the block, its command lines)]."""
    found: dict[str, list[tuple[str, list[str]]]] = {}
    for marker, name, runner in dict.fromkeys(MARKER.findall(README)):  # a marker used twice: both its blocks
        for lines in read_blocks(README, marker):
            found.setdefault(name, []).append((runner, lines))
    return found


def test_every_command_block_names_what_runs_it_and_that_reads_the_readme():
    blocks = re.findall(r"```(\w*)\n", README)[::2]  # opening fences
    command_blocks = [lang for lang in blocks if lang in ("bash", "sh", "shell", "")]
    marked = marked_blocks()
    assert sum(len(v) for v in marked.values()) == len(command_blocks), "a command block without a marker"
    for name, entries in marked.items():
        for runner, _ in entries:
            if runner.startswith("CI"):
                continue
            text = (ROOT / runner).read_text()
            assert "README.md" in text and f"<!-- {name}:" in text, f"{runner} does not read the {name} block"


def test_inline_commands_are_the_text_of_a_block_that_runs():
    lines = [line for entries in marked_blocks().values() for _, block in entries for line in block]
    for span in re.findall(r"`((?:sparkmirror|make|pip|python) [^`]*)`", README):
        assert any(line.startswith(span) for line in lines) or span == "python -m build", span
    assert "python -m build" in (ROOT / "tests/e2e/test_wheel.py").read_text().replace('", "', " ")


def test_the_checkout_commands_are_what_ci_and_the_makefile_run():
    [(_, checkout)] = marked_blocks()["checkout"]
    assert checkout == ["make demo", "make test"]
    assert re.search(r"^make test$", (ROOT / ".ci/run").read_text(), re.M)
    makefile = (ROOT / "Makefile").read_text()
    demo_recipe = re.search(r"^demo:.*\n\t(.*)$", makefile, re.M).group(1)
    [(_, install)] = marked_blocks()["install"]
    assert demo_recipe.replace("$(BIN)/", "") == install[-1] == "sparkmirror demo"
    assert re.search(r"^test:.*\n\t\$\(BIN\)/python -m pytest$", makefile, re.M)


def test_the_first_screen_says_what_it_is_why_switch_and_how_to_install():
    first = "\n".join(README.splitlines()[:FIRST_SCREEN_LINES])
    assert "MirrorMaker 2" in first.split("\n\n")[1]  # the first paragraph says what it is
    assert "## Why sparkmirror and not MM2" in first
    assert "## Install" in first
