"""The README's command blocks, as the tests that run them read them: the fenced block right after a marker comment
(`<!-- <name>: run by <test file> -->`), one command per line, blank lines, comment lines and trailing `  # ...`
comments left out. One reader, so the unit check and the tests that run the lines agree on what a line is."""

from __future__ import annotations

import re


def marked_blocks(text: str, marker: str) -> list[list[str]]:
    """The command lines of each fenced block right after `marker` in `text`."""
    blocks = []
    for part in text.split(marker)[1:]:
        body = re.match(r"\s*```[^\n]*\n(.*?)^```", part, re.S | re.M)
        assert body, f"no fenced block right after {marker}"
        blocks.append([line.split("  #")[0].strip() for line in body.group(1).splitlines()
                       if line.strip() and not line.strip().startswith("#")])
    return blocks
