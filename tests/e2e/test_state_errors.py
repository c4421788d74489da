"""`sparkmirror run --state-dir <bad>`: one `error:` line naming the path, exit 1, before any cluster is contacted.

The clusters' bootstrap is a closed port: had the run reached the cluster probe, it would end with exit 3 and
"unreachable" instead (the last test shows that it does, with a good state dir).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import cli_command

DEAD = "127.0.0.1:1"
STATE_ERROR_LIMIT_S = 30  # a Python start and the config check on a busy 2-core machine; no cluster wait
UNREACHABLE_LIMIT_S = 60
needs_non_root = pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes whatever the bits say")


def run(tmp_path: Path, state_dir: Path, limit_s: float = STATE_ERROR_LIMIT_S) -> subprocess.CompletedProcess:
    config = tmp_path / "mm2.properties"
    config.write_text(f"clusters = A, B\nA.bootstrap.servers = {DEAD}\nB.bootstrap.servers = {DEAD}\n"
                      "A->B.enabled = true\nA->B.topics = orders\nsync.topic.acls.enabled = false\n")
    started = time.monotonic()
    result = subprocess.run(cli_command("run", str(config), "--state-dir", str(state_dir)),
                            capture_output=True, text=True, timeout=limit_s)
    result.elapsed_s = time.monotonic() - started  # type: ignore[attr-defined]
    return result


def the_error_line(result: subprocess.CompletedProcess, path: Path) -> str:
    """Exit 1, exactly one `error:` line naming `path`, no traceback, no cluster contacted."""
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert result.returncode == 1, result.stderr
    assert len(errors) == 1, result.stderr
    assert str(path) in errors[0]
    assert "Traceback" not in result.stderr and "unreachable" not in result.stderr
    assert result.elapsed_s < STATE_ERROR_LIMIT_S  # type: ignore[attr-defined]
    return errors[0]


def positions_file(state_dir: Path, content: str) -> Path:
    path = state_dir / "flows" / "A-to-B" / "positions.json"
    path.parent.mkdir(parents=True)
    path.write_text(content)
    return path


def test_a_state_dir_below_a_regular_file(tmp_path):
    (tmp_path / "file").write_text("x")
    line = the_error_line(run(tmp_path, tmp_path / "file" / "state"), tmp_path / "file" / "state")
    assert line == (f"error: state dir {tmp_path / 'file' / 'state'}: not a directory (a regular file is in the way "
                    f"at {tmp_path / 'file'}); choose another --state-dir or remove the file")


def test_a_file_where_the_flow_folder_belongs(tmp_path):
    (tmp_path / "state" / "flows").mkdir(parents=True)
    (tmp_path / "state" / "flows" / "A-to-B").write_text("x")
    line = the_error_line(run(tmp_path, tmp_path / "state"), tmp_path / "state" / "flows" / "A-to-B")
    assert "not a directory (a regular file is in the way at" in line


@pytest.mark.parametrize(("content", "problem"), [
    ("null", "not a positions file: expected an object of topic -> position, got null"),
    ('{"orders": null}', "not a positions file: topic 'orders': expected an object"),
    ('{"orders": {"topic_id": "x", "next_offsets": {"0": -5}}}',
     "not a positions file: topic 'orders', partition 0: the offset must be an integer"),
    ('{"orders": {"topic_id": "x", "next_off', "not valid JSON ("),
])
def test_a_positions_file_of_the_wrong_shape_is_left_untouched(tmp_path, content, problem):
    path = positions_file(tmp_path / "state", content)
    line = the_error_line(run(tmp_path, tmp_path / "state"), path)
    assert line.startswith(f"error: {path}: {problem}")
    assert line.endswith("restore it, or delete it to replicate the flow afresh from auto.offset.reset")
    assert path.read_text() == content


def test_a_state_dir_that_is_a_regular_file(tmp_path):
    (tmp_path / "state").write_text("x")
    the_error_line(run(tmp_path, tmp_path / "state"), tmp_path / "state")


@needs_non_root
def test_an_unwritable_state_dir(tmp_path):
    (tmp_path / "state").mkdir(mode=0o555)
    try:
        line = the_error_line(run(tmp_path, tmp_path / "state"), tmp_path / "state")
    finally:
        (tmp_path / "state").chmod(0o700)
    assert "not writable (Permission denied)" in line


@needs_non_root
def test_an_unreadable_positions_file(tmp_path):
    path = positions_file(tmp_path / "state", "{}")
    path.chmod(0o000)
    line = the_error_line(run(tmp_path, tmp_path / "state"), path)
    assert "cannot read it (Permission denied)" in line


def test_with_a_good_state_dir_the_same_run_reaches_the_clusters(tmp_path):
    result = run(tmp_path, tmp_path / "state", UNREACHABLE_LIMIT_S)
    assert result.returncode == 3, result.stderr
    assert f"is unreachable at bootstrap.servers={DEAD}" in result.stderr
    assert (tmp_path / "state").is_dir()
