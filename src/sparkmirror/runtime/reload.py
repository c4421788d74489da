"""Hot reload: notice that the properties file changed (or SIGHUP), then validate and diff the new config.

ConfigWatcher does the noticing (a polling daemon thread), Reloader the deciding (load, validate, diff);
the supervisor applies an accepted diff. An invalid file (unparsable, not UTF-8, cut off, deleted, unreadable)
never replaces the running configuration, and neither class ever raises because of one.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sparkmirror.config.diff import ConfigDiff, describe_diff, diff_configs
from sparkmirror.config.mm2 import MirrorMakerConfig, load_config
from sparkmirror.errors import ConfigError

logger = logging.getLogger(__name__)

UNREADABLE = "unreadable"  # the watcher's content state of a file that is gone, unreadable or not a file


def _digest(path: Path) -> str:
    """SHA-256 of the file's bytes, or UNREADABLE.

    Opened non-blocking and checked to be a regular file, so a FIFO put in its place cannot hang the thread.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return UNREADABLE
    with os.fdopen(fd, "rb") as file:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return UNREADABLE
            return hashlib.sha256(file.read()).hexdigest()
        except OSError:
            return UNREADABLE


class ConfigWatcher:
    """Calls `on_change` from a daemon thread each time the file's content changes.

    Content means the bytes' hash: a touch or a save of identical text does not count. A file that is gone or
    unreadable is a content of its own (UNREADABLE), so its reload is rejected and logged, and its return
    counts again. New content counts once two polls in a row see it, so a change is noticed within two
    `poll_s`, and a file caught mid-write or briefly missing (an editor replacing it) does not count. Only
    the properties file itself is watched, not files it references through `${file:...}` providers;
    SIGHUP (the supervisor's `request_reload`) re-reads those too. The baseline is the content at
    construction. `on_change` never raises out of the thread: its exceptions are logged and the watcher
    keeps going.
    """

    def __init__(self, path: Path, on_change: Callable[[], None], poll_s: float = 1.0) -> None:
        self.path = Path(path)
        self._on_change = on_change
        self._poll_s = poll_s
        self._digest = _digest(self.path)
        self._pending: str | None = None  # content seen once, not yet twice
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._checks = 0
        self._thread: threading.Thread | None = None

    @property
    def checks(self) -> int:
        """How many checks the thread has completed (for tests and diagnostics)."""
        return self._checks

    def start(self) -> None:
        """Start polling; calling it again while running does nothing."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"config-watcher-{self.path.name}", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop polling and wait (at most `timeout_s`) for a running callback to finish."""
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self._poll_s)
            self._wake.clear()
            if self._stop.is_set():
                return
            self._check()
            self._checks += 1

    def _check(self) -> None:
        digest = _digest(self.path)
        changed = digest != self._digest and digest == self._pending
        self._pending = digest if digest != self._digest else None
        if not changed:
            return
        self._digest, self._pending = digest, None
        reason = "the file is gone or cannot be read" if digest == UNREADABLE else "content changed"
        logger.info("configuration %s: %s, reloading", self.path, reason)
        try:
            self._on_change()
        except Exception:  # the thread must survive any callback failure, as a scheduler task would
            logger.exception("configuration %s: reload callback failed; still watching", self.path)


@dataclass(frozen=True, slots=True)
class Unchanged:
    """The file loads and nothing the running flows use differs; `Reloader.current` still moves to it."""


@dataclass(frozen=True, slots=True)
class Rejected:
    """The file is invalid; the current configuration stays."""

    problems: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Accepted:
    """The file is valid and differs; `config` is now current and `diff` says what to apply."""

    config: MirrorMakerConfig
    diff: ConfigDiff


ReloadResult = Unchanged | Rejected | Accepted


class Reloader:
    """Loads the file again and decides what a reload means; never starts or stops anything itself.

    `current` only ever moves to a configuration that loaded without problems.
    """

    def __init__(self, path: Path, current: MirrorMakerConfig, target_clusters: tuple[str, ...] | None = None,
                 loader: Callable[[Path], MirrorMakerConfig] = load_config) -> None:
        self.path = Path(path)
        self._current = current
        self._target_clusters = target_clusters
        self._loader = loader
        self._lock = threading.Lock()

    @property
    def current(self) -> MirrorMakerConfig:
        """The configuration the process runs (the last accepted one)."""
        return self._current

    def check(self) -> ReloadResult:
        """Load, validate and diff against `current`; logs the outcome.

        Never raises: the supervisor calls it from its loop, and no file, however broken, may end the
        replication that runs. Whatever cannot be loaded is Rejected with one ERROR line.
        """
        with self._lock:
            try:
                new = self._load()
                diff = diff_configs(self._current, new, self._target_clusters)
            except ConfigError as exc:
                return self._reject(tuple(exc.problems))
            except Exception as exc:  # a loader bug must not stop the running flows either
                logger.debug("configuration %s: loading failed", self.path, exc_info=True)
                return self._reject((f"cannot load {self.path}: {type(exc).__name__}: {exc}",))
            old, self._current = self._current, new  # also when empty: later diffs compare with the file
            for warning in new.warnings:
                if warning not in old.warnings:
                    logger.warning("configuration %s: %s", self.path, warning)
            if diff.is_empty:
                logger.info("configuration %s reloaded: no change to the running flows", self.path)
                return Unchanged()
            for line in describe_diff(diff):
                logger.info("configuration %s: %s", self.path, line)
            return Accepted(new, diff)

    def _load(self) -> MirrorMakerConfig:
        try:
            mode: int | None = self.path.stat().st_mode
        except OSError:
            mode = None  # gone or not allowed: the loader says which
        if mode is not None and not stat.S_ISREG(mode):  # reading a FIFO would block the control loop
            raise ConfigError([f"cannot read {self.path}: not a regular file"], str(self.path))
        return self._loader(self.path)

    def _reject(self, problems: tuple[str, ...]) -> Rejected:
        logger.error("configuration %s rejected, the previous configuration keeps running: %s",
                     self.path, "; ".join(problems))
        return Rejected(problems)
