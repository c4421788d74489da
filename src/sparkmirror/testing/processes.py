"""Processes as /proc shows them, for tests that require every process of a local cluster to end."""

from __future__ import annotations

import contextlib
import os


def alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        return _stat(pid)[0] != b"Z"
    except FileNotFoundError:
        return False


def _stat(pid: int | str) -> list[bytes]:
    """The fields of /proc/<pid>/stat after the command name: state, ppid, pgrp, ..."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rpartition(b")")[2].split()


def _live_processes() -> dict[int, list[bytes]]:
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError):
                fields = _stat(name)
                if fields[0] != b"Z":
                    found[int(name)] = fields
    return found


def group_members(pgid: int) -> list[int]:
    """Live processes of a process group (the JVM, and its watchdog when there is one)."""
    return [pid for pid, fields in _live_processes().items() if int(fields[2]) == pgid]


def process_tree(root: int) -> dict[int, str]:
    """`root` and its live descendants, whatever their process group, each with its command line."""
    by_parent: dict[int, list[int]] = {}
    for pid, fields in _live_processes().items():
        by_parent.setdefault(int(fields[1]), []).append(pid)
    tree, todo = {}, [root]
    while todo:
        pid = todo.pop()
        command = command_line(pid)
        if command is not None:
            tree[pid] = command
            todo += by_parent.get(pid, [])
    return tree


def command_line(pid: int) -> str | None:
    """The process's arguments joined by spaces, or None once it has gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None


def children(parent: int) -> list[int]:
    """Live processes whose parent is `parent`, from each process's own stat: /proc/<pid>/task/*/children
    races threads that end while it is read."""
    return [pid for pid, fields in _live_processes().items() if int(fields[1]) == parent]
