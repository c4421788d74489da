"""`sparkmirror validate` on a file it cannot read: exit 2 and one problem line naming the file, no traceback."""

from click.testing import CliRunner

from sparkmirror.cli.main import cli

HEAD = b"clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\n"


def validate(path) -> tuple[int, list[str], str]:
    result = CliRunner().invoke(cli, ["validate", str(path)])
    problems = [line for line in result.stderr.splitlines() if line.startswith("  - ")]
    return result.exit_code, problems, result.output


def test_validate_a_file_that_is_not_utf8_exits_2_naming_the_file(tmp_path):
    path = tmp_path / "mm2.properties"
    path.write_bytes(HEAD + "A->B.topics = café\n".encode("latin-1"))
    code, problems, output = validate(path)
    assert code == 2, output
    assert problems == [f"  - cannot read {path}: not UTF-8 text (byte 0xe9 at line 4, column 18); "
                        f"save the file as UTF-8"]
    assert "Traceback" not in output and "UnicodeDecodeError" not in output


def test_validate_a_half_written_or_missing_file_exits_2_naming_it(tmp_path):
    path = tmp_path / "mm2.properties"
    path.write_bytes(HEAD + b"A->B.ena")
    code, problems, output = validate(path)
    assert code == 2, output
    assert problems == ["  - A->B.ena: the last line has no value and no line break: the file looks cut off "
                        "mid-write; complete the line (mm2.properties:4)"]
    path.unlink()
    code, problems, output = validate(path)
    assert (code, problems) == (2, [f"  - cannot read {path}: No such file or directory"]), output
