"""ConfigWatcher (content changes, trigger, failure isolation, stop) and Reloader with real temp files."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.unit.properties_text import A_TO_B

from sparkmirror.config.mm2 import load_config
from sparkmirror.errors import ConfigError
from sparkmirror.runtime.reload import Accepted, ConfigWatcher, Rejected, Reloader, Unchanged

WAIT_S = 5.0
POLL_S = 0.01
NEVER_S = 3600.0  # a poll interval no test reaches: only trigger() or stop() wakes the thread
BASE = A_TO_B


def wait_until(predicate: Callable[[], bool], what: str, timeout_s: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout_s
    delay = 0.001
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        threading.Event().wait(delay)
        delay = min(delay * 2, 0.05)


def replace(path: Path, text: str) -> None:
    """Write the way editors save: a whole new file renamed over the old one, never seen half-written."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


class Calls:
    """A callback that counts its calls and can be told to raise."""

    def __init__(self, fail_first: int = 0) -> None:
        self.count = 0
        self.fail_first = fail_first

    def __call__(self) -> None:
        self.count += 1
        if self.count <= self.fail_first:
            raise RuntimeError(f"callback failure {self.count}")


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "mm2.properties"
    path.write_text(BASE, encoding="utf-8")
    return path


@pytest.fixture
def watch(config_file: Path):
    watchers: list[ConfigWatcher] = []

    def watch(on_change: Callable[[], None], poll_s: float = POLL_S) -> ConfigWatcher:
        watcher = ConfigWatcher(config_file, on_change, poll_s=poll_s)
        watchers.append(watcher)
        watcher.start()
        return watcher

    yield watch
    for watcher in watchers:
        watcher.stop()


def settle(watcher: ConfigWatcher, checks: int = 3) -> None:
    """Let the watcher complete a few more checks, so a spurious callback would have happened."""
    target = watcher.checks + checks
    wait_until(lambda: watcher.checks >= target, f"{checks} more checks")


# -- ConfigWatcher -------------------------------------------------------------------------------------------

def test_watcher_fires_once_per_content_change(config_file, watch):
    calls = Calls()
    watcher = watch(calls)
    replace(config_file, BASE + "A->B.tasks.max = 2\n")
    wait_until(lambda: calls.count == 1, "the first change")
    settle(watcher)
    assert calls.count == 1
    replace(config_file, BASE + "A->B.tasks.max = 3\n")
    wait_until(lambda: calls.count == 2, "the second change")
    settle(watcher)
    assert calls.count == 2


def test_touch_or_identical_rewrite_does_not_fire(config_file, watch):
    calls = Calls()
    watcher = watch(calls, poll_s=0.2)  # two polls while the file is missing would count: keep them far apart
    os.utime(config_file, (time.time() + 60, time.time() + 60))
    settle(watcher)
    saved = config_file.with_suffix(".saved")
    saved.write_text(BASE, encoding="utf-8")
    config_file.unlink()  # an editor replacing the file: briefly missing, back with the same bytes
    os.replace(saved, config_file)
    settle(watcher)
    replace(config_file, BASE)
    settle(watcher)
    assert calls.count == 0  # a file gone for two polls does count: see test_reload_bad_files.py


def test_a_raising_callback_is_logged_and_the_watcher_keeps_going(config_file, watch, caplog):
    calls = Calls(fail_first=1)
    watch(calls)
    with caplog.at_level(logging.ERROR, logger="sparkmirror.runtime.reload"):
        replace(config_file, BASE + "A->B.tasks.max = 2\n")
        wait_until(lambda: calls.count == 1, "the failing callback")
        replace(config_file, BASE + "A->B.tasks.max = 3\n")
        wait_until(lambda: calls.count == 2, "the callback after a failure")
    failures = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(failures) == 1
    assert "callback failure 1" in failures[0].exc_text
    replace(config_file, BASE + "A->B.tasks.max = 4\n")
    wait_until(lambda: calls.count == 3, "the next change's callback")


def test_stop_is_prompt_and_idempotent(watch):
    watcher = watch(Calls(), poll_s=NEVER_S)
    started = time.monotonic()
    watcher.stop()
    assert time.monotonic() - started < 1.0
    watcher.stop()
    assert watcher.checks == 0
    ConfigWatcher(Path("never-started"), Calls()).stop()


# -- Reloader ------------------------------------------------------------------------------------------------

def test_reloader_accepts_a_valid_change_and_moves_current(config_file, caplog):
    reloader = Reloader(config_file, load_config(config_file))
    config_file.write_text(BASE.replace("orders", "orders|payments") + "A->B.tasks.max = 2\n", encoding="utf-8")
    with caplog.at_level(logging.INFO, logger="sparkmirror.runtime.reload"):
        result = reloader.check()
    assert isinstance(result, Accepted)
    assert result.diff.restarts == ("A->B",)
    assert result.config is reloader.current
    assert reloader.current.flow("A", "B").topics == ("orders|payments",)
    assert any("flow A->B: topics changed ('orders' -> 'orders|payments'); tasks.max changed" in r.getMessage()
               for r in caplog.records)
    assert isinstance(reloader.check(), Unchanged)


def test_reloader_reports_an_identical_file_as_unchanged(config_file):
    current = load_config(config_file)
    reloader = Reloader(config_file, current)
    assert reloader.check() == Unchanged()


def test_reloader_rejects_an_invalid_file_and_keeps_the_current_config(config_file, caplog):
    current = load_config(config_file)
    reloader = Reloader(config_file, current)
    config_file.write_text(BASE.replace("orders", "orders[") + "A->B.tasks.max = zero\n", encoding="utf-8")
    with caplog.at_level(logging.INFO, logger="sparkmirror.runtime.reload"):
        result = reloader.check()
    assert isinstance(result, Rejected)
    assert len(result.problems) == 2
    assert reloader.current is current
    [error] = [r for r in caplog.records if r.levelno == logging.ERROR]
    message = error.getMessage()
    assert "previous configuration keeps running" in message
    assert all(problem in message for problem in result.problems)
    assert not [r for r in caplog.records if r.levelno == logging.INFO]


def test_reloader_rejects_a_file_without_a_cluster_named_by_target_clusters(config_file):
    current = load_config(config_file)
    reloader = Reloader(config_file, current, target_clusters=("B",))
    config_file.write_text(BASE.replace("clusters = A, B", "clusters = A, C").replace("B.", "C.")
                           .replace("A->B", "A->C"), encoding="utf-8")
    result = reloader.check()
    assert isinstance(result, Rejected) and "--clusters" in result.problems[0]
    assert reloader.current is current


def test_reloader_uses_the_given_loader(config_file):
    def failing_loader(path: Path):
        raise ConfigError(["cannot read it"], str(path))

    reloader = Reloader(config_file, load_config(config_file), loader=failing_loader)
    assert reloader.check() == Rejected(("cannot read it",))


def test_watcher_drives_the_reloader(config_file, watch):
    reloader = Reloader(config_file, load_config(config_file))
    results: list[object] = []
    watch(lambda: results.append(reloader.check()))
    replace(config_file, BASE.replace("enabled = true", "enabled = false"))
    wait_until(lambda: bool(results), "a reload")
    [result] = results
    assert isinstance(result, Accepted) and result.diff.removed == ("A->B",)
