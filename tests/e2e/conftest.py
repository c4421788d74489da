"""The sparkmirror CLI as a separate process against real clusters."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if "/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


def cli_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "sparkmirror", *args]


@pytest.fixture
def start_cli(tmp_path):
    """Start `sparkmirror ...` in its own process group; every started process is killed at teardown."""
    procs: list[subprocess.Popen] = []

    def start(*args: str, log_name: str = "cli") -> subprocess.Popen:
        log = open(tmp_path / f"{log_name}-{len(procs)}.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen(cli_command(*args), stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, env=dict(os.environ))
        proc.log_path = Path(log.name)  # type: ignore[attr-defined]
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait()
