"""The cache folder of the jar resolver, and the markers that say what a folder in it was made from."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "SPARKMIRROR_CACHE"
_MARKER = ".resolved-from"


def cache_dir() -> Path:
    """`$SPARKMIRROR_CACHE`, else `~/.cache/sparkmirror`."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser().resolve() if env else Path.home() / ".cache" / "sparkmirror"


def is_current(folder: Path, digest: str) -> bool:
    """Whether `folder` was last made from inputs whose digest is `digest`."""
    marker = folder / _MARKER
    return marker.is_file() and marker.read_text().strip() == digest


def mark_current(folder: Path, digest: str) -> None:
    """Record that `folder` is now made from inputs whose digest is `digest`."""
    (folder / _MARKER).write_text(digest)
