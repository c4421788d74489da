"""Hot reload never lets a broken properties file out: every kind is Rejected, logged once, and never raises.

Real files in tmp_path: garbage, bytes that are not UTF-8, a file cut off mid-write, deleted (and back),
unreadable, and things that are not regular files (a directory, a FIFO).
"""

from __future__ import annotations

import logging
import os
import pickle
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.unit.properties_text import A_TO_B

from sparkmirror.config.mm2 import load_config
from sparkmirror.runtime.reload import Accepted, ConfigWatcher, Rejected, Reloader, Unchanged

WAIT_S = 5.0
POLL_S = 0.01
LOGGER = "sparkmirror.runtime.reload"
BASE = A_TO_B
CHANGED = BASE.replace("orders", "orders|payments")


def wait_until(predicate: Callable[[], bool], what: str, timeout_s: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        threading.Event().wait(0.005)


def replace(path: Path, content: str | bytes) -> None:
    """Write the way editors save: a whole new file renamed over the old one."""
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(content.encode() if isinstance(content, str) else content)
    os.replace(tmp, path)


def settle(watcher: ConfigWatcher, checks: int = 3) -> None:
    """Let the watcher complete a few more checks, so a spurious callback would have happened."""
    target = watcher.checks + checks
    wait_until(lambda: watcher.checks >= target, f"{checks} more checks")


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "mm2.properties"
    path.write_text(BASE, encoding="utf-8")
    return path


def rejection_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno >= logging.WARNING]


def check_rejected(reloader: Reloader, caplog, problem: str) -> None:
    """One check: Rejected naming `problem`, one ERROR line naming the file, and `current` unchanged."""
    before = reloader.current
    caplog.clear()
    with caplog.at_level(logging.INFO, logger=LOGGER):
        result = reloader.check()
    assert isinstance(result, Rejected), result
    assert any(problem in p for p in result.problems), result.problems
    [line] = rejection_lines(caplog)
    assert line.startswith(f"configuration {reloader.path} rejected, the previous configuration keeps running: ")
    assert problem in line and "\n" not in line
    assert reloader.current is before


@pytest.mark.parametrize(("content", "problem"), [
    (b"lorem ipsum\n%%% ::: ===\n", "clusters: missing"),
    (bytes(range(256)), "not UTF-8 text (byte 0x80 at line 2, column 118)"),
    (BASE.encode() + "A->B.groups = café\n".encode("latin-1"), "not UTF-8 text (byte 0xe9 at line 6"),
    (BASE.encode()[:BASE.index("A->B.enabled") + len("A->B.ena")],
     "A->B.ena: the last line has no value and no line break: the file looks cut off mid-write"),
    (BASE.encode()[:BASE.index("= true") + len("= tr")], "expected true or false, got 'tr'"),
    (BASE.encode() + b"A->B.topics = \\u00", "an invalid \\u escape"),
    (b"", "clusters: missing"),
], ids=["garbage", "binary", "latin-1", "cut-in-a-key", "cut-in-a-value", "cut-in-an-escape", "empty"])
def test_reloader_rejects_a_file_that_cannot_be_read_as_properties(config_file, caplog, content, problem):
    reloader = Reloader(config_file, load_config(config_file))
    config_file.write_bytes(content)
    check_rejected(reloader, caplog, problem)


def test_reloader_rejects_a_deleted_file_then_applies_it_when_it_comes_back_changed(config_file, caplog):
    reloader = Reloader(config_file, load_config(config_file))
    config_file.unlink()
    check_rejected(reloader, caplog, f"cannot read {config_file}: No such file or directory")
    config_file.write_text(CHANGED, encoding="utf-8")
    result = reloader.check()
    assert isinstance(result, Accepted) and "A->B" in result.diff.changed


def test_reloader_rejects_what_is_not_a_regular_file_without_blocking(config_file, caplog):
    reloader = Reloader(config_file, load_config(config_file))
    config_file.unlink()
    config_file.mkdir()
    check_rejected(reloader, caplog, "not a regular file")
    config_file.rmdir()
    os.mkfifo(config_file)  # opening it to read would block until a writer came
    check_rejected(reloader, caplog, "not a regular file")


def test_reloader_turns_a_loader_bug_into_a_rejection(config_file, caplog):
    def broken_loader(path: Path):
        raise RuntimeError("bug in the loader")

    reloader = Reloader(config_file, load_config(config_file), loader=broken_loader)
    check_rejected(reloader, caplog, f"cannot load {config_file}: RuntimeError: bug in the loader")


def unprivileged(action):
    """Run `action()` in a forked child as user nobody (root reads a chmod 000 file); returns its result."""
    if os.geteuid() != 0:
        return action()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no pytest machinery, report through the pipe and leave
        code = 0
        try:
            os.close(read_end)
            os.setgid(65534)
            os.setuid(65534)
            with os.fdopen(write_end, "wb") as out:
                pickle.dump(action(), out)
        except BaseException:  # noqa: BLE001 - any failure is reported as the exit status
            code = 1
        os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0 and data, "the unprivileged child failed"
    return pickle.loads(data)  # noqa: S301 - our own child's bytes


def test_reloader_rejects_a_file_it_may_not_read(config_file):
    reloader = Reloader(config_file, load_config(config_file))
    config_file.write_text(CHANGED, encoding="utf-8")
    config_file.chmod(0)
    try:
        result = unprivileged(reloader.check)
    finally:
        config_file.chmod(0o644)
    assert isinstance(result, Rejected)
    assert result.problems == (f"cannot read {config_file}: Permission denied",)


# -- the watcher and the reloader together, as the supervisor wires them -------------------------------------

@pytest.fixture
def watched(config_file: Path):
    """A watcher that feeds the reloader, recording each result; stopped at teardown."""
    reloader = Reloader(config_file, load_config(config_file))
    results: list[object] = []
    watcher = ConfigWatcher(config_file, lambda: results.append(reloader.check()), poll_s=POLL_S)
    watcher.start()
    yield watcher, reloader, results
    watcher.stop()


def next_result(results: list[object], count: int, what: str) -> object:
    wait_until(lambda: len(results) >= count, what)
    return results[count - 1]


def test_a_deleted_file_is_rejected_while_gone_and_applied_when_back_changed(config_file, watched, caplog):
    watcher, reloader, results = watched
    original = reloader.current
    with caplog.at_level(logging.INFO, logger=LOGGER):
        config_file.unlink()
        gone = next_result(results, 1, "the reload of the deleted file")
        assert isinstance(gone, Rejected) and "No such file or directory" in gone.problems[0]
        settle(watcher)
        assert len(results) == 1, "a file that stays gone is rejected once"
        replace(config_file, CHANGED)
        back = next_result(results, 2, "the reload of the file back with a change")
    assert isinstance(back, Accepted) and reloader.current is back.config is not original
    assert back.config.flow("A", "B").topics == ("orders|payments",)
    assert any("the file is gone or cannot be read, reloading" in m for m in
               [r.getMessage() for r in caplog.records])


def test_a_deleted_file_back_unchanged_reloads_as_unchanged(config_file, watched):
    _, reloader, results = watched
    original = reloader.current
    config_file.unlink()
    assert isinstance(next_result(results, 1, "the reload of the deleted file"), Rejected)
    replace(config_file, BASE)
    assert next_result(results, 2, "the reload of the file back as it was") == Unchanged()
    assert reloader.current.flow("A", "B") == original.flow("A", "B")


def test_every_kind_of_broken_edit_is_rejected_and_the_watcher_keeps_going(config_file, watched):
    watcher, reloader, results = watched
    original = reloader.current
    broken = [b"\x00\xff\xfe garbage \x89PNG\r\n", b"clusters = A, B\nA.bootstrap.servers = a:9092\nA->B.ena",
              BASE.encode() + b"A->B.topics = \xe9t\xe9\n", b"total garbage without any structure"]
    for n, content in enumerate(broken, start=1):
        replace(config_file, content)
        assert isinstance(next_result(results, n, f"the reload of broken edit {n}"), Rejected), content
        assert reloader.current is original
    config_file.unlink()
    os.mkfifo(config_file)
    assert isinstance(next_result(results, len(broken) + 1, "the reload of a FIFO"), Rejected)
    config_file.unlink()
    replace(config_file, CHANGED)
    assert isinstance(next_result(results, len(broken) + 2, "the reload of a valid edit"), Accepted)
    settle(watcher)
    assert len(results) == len(broken) + 2
