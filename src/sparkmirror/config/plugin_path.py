"""MM2's `plugin.path`: the folders (and jars) where a Connect worker finds classes a file names, listed as the
record path loads them, and searched for a class so that `validate` can name one that is missing.

As in Connect, each entry is a jar, or a folder holding jars, folders of classes and plugin folders (a folder of
jars or classes of its own, one level down). Reading jars is I/O; it runs once, when a file is loaded.
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from pathlib import Path


def class_roots(plugin_path: Sequence[str]) -> tuple[str, ...]:
    """The jars and class folders of a plugin path, in the order they are searched (absolute paths)."""
    roots: list[Path] = []
    for entry in (Path(p).expanduser() for p in plugin_path):
        if entry.is_file():
            roots.append(entry)
            continue
        if not entry.is_dir():
            continue
        roots.append(entry)
        for child in sorted(entry.iterdir()):
            if child.is_file() and child.suffix == ".jar":
                roots.append(child)
            elif child.is_dir():
                roots.append(child)
                roots.extend(sorted(j for j in child.iterdir() if j.is_file() and j.suffix == ".jar"))
    return tuple(str(r.resolve()) for r in roots)


def missing_entries(plugin_path: Sequence[str]) -> tuple[str, ...]:
    """Entries that are neither a folder nor a file."""
    return tuple(p for p in plugin_path if not Path(p).expanduser().exists())


def has_class(roots: Sequence[str], class_name: str) -> bool:
    """Whether a class of that name is in one of the jars or class folders."""
    member = class_name.replace(".", "/") + ".class"
    for root in map(Path, roots):
        if root.is_dir():
            if (root / member).is_file():
                return True
        else:
            try:
                with zipfile.ZipFile(root) as jar:
                    jar.getinfo(member)
                    return True
            except (KeyError, OSError, zipfile.BadZipFile):
                continue
    return False
