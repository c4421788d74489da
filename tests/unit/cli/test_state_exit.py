"""A StateError is exit 1 with one `error:` line; `run` reports it before it builds any flow or client."""

from __future__ import annotations

from click.testing import CliRunner

from sparkmirror.cli.common import _exit_status
from sparkmirror.cli.exit_codes import ExitStatus
from sparkmirror.cli.main import cli
from sparkmirror.errors import StateError


def test_a_state_error_is_exit_1():
    assert _exit_status(StateError("x")) is ExitStatus.ERROR


def test_run_with_a_state_dir_below_a_file_exits_1_with_one_line(tmp_path):
    config = tmp_path / "mm2.properties"
    config.write_text("clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\n"
                      "A->B.enabled = true\nsync.topic.acls.enabled = false\n")
    (tmp_path / "file").write_text("x")
    result = CliRunner().invoke(cli, ["run", str(config), "--state-dir", str(tmp_path / "file" / "state")])
    assert result.exit_code == ExitStatus.ERROR, result.output
    assert result.stderr.splitlines() == [
        f"error: state dir {tmp_path / 'file' / 'state'}: not a directory (a regular file is in the way at "
        f"{tmp_path / 'file'}); choose another --state-dir or remove the file"]
