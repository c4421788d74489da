"""A live block of progress lines at the bottom of a terminal, with warnings printed above it.

While the block is shown, INFO records would scroll it away line by line, so the console gets only
WARNING and above (each printed above the block) and the rest goes to an optional log file. Off a
terminal (CI, systemd, a pipe) or with JSON logs the display does nothing: logs stay plain lines there.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

from sparkmirror.cli.logs import TEXT_FORMAT, JsonLinesFormatter

if TYPE_CHECKING:
    from sparkmirror.runtime.status import FlowStatus, Status

FAILURE_CHARS = 80
DEFAULT_COLUMNS = 120

# ANSI: cursor up n lines, carriage return, erase from the cursor to the end of the screen.
_UP = "\x1b[{}A"
_ERASE_DOWN = "\r\x1b[J"


def is_terminal(stream: TextIO) -> bool:
    """A TTY that understands ANSI (TERM=dumb does not, e.g. Emacs shells)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


class ProgressDisplay:
    """Redraws `render()`'s lines in place every `interval_s` on a terminal, until the block ends.

    Usage: `with ProgressDisplay(lambda: flow_lines(supervisor.status()), log_file=path): ...`.
    `render` runs on the display's thread; if it raises, the block shows the error and keeps going.
    On exit the final state is drawn once and left on screen. `active` says whether anything is shown.
    """

    def __init__(self, render: Callable[[], list[str]], stream: TextIO | None = None, interval_s: float = 1.0,
                 log_file: Path | None = None) -> None:
        self._render = render
        self._stream = sys.stderr if stream is None else stream
        self._interval_s = interval_s
        self._log_file = log_file
        self._lock = threading.Lock()  # around every write to the stream while active
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lines: list[str] = []  # last lines rendered without error
        self._shown: list[str] = []  # the block now on screen, redrawn under each record printed above it
        self._drawn = 0  # lines to erase before the next draw (0 once the final block is left on screen)
        self._taken: list[logging.Handler] = []  # console handlers set aside while active
        self._installed: list[logging.Handler] = []
        self.active = False

    # -- life --------------------------------------------------------------------------------------------
    def __enter__(self) -> ProgressDisplay:
        console = self._console_handlers()
        if not is_terminal(self._stream) or any(isinstance(h.formatter, JsonLinesFormatter) for h in console):
            return self
        self._take_over_logging(console)
        self.active = True
        if self._log_file is not None:
            self.print_above(f"log: {self._log_file} (warnings and errors show here too)")
        self._draw(self._safe_render())
        self._thread = threading.Thread(target=self._loop, name="progress-display", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if not self.active:
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self._interval_s + 5)  # a render stuck past this is left behind
        self._draw(self._safe_render())
        with self._lock:
            self.active = False
            self._drawn = 0  # the final block stays on screen
        self._give_back_logging()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                self._draw(self._safe_render())
            except (OSError, ValueError):  # the terminal went away (closed, hung up): nothing left to draw on
                return

    # -- drawing -----------------------------------------------------------------------------------------
    def _safe_render(self) -> list[str]:
        try:
            lines = [str(line) for line in self._render()]
        except Exception as exc:  # noqa: BLE001 - the display must never end the command it shows
            return [*self._lines, f"(progress unavailable: {type(exc).__name__}: {exc})"]
        self._lines = lines
        return lines

    def _draw(self, lines: list[str]) -> None:
        with self._lock:
            if not self.active:
                return
            self._write(self._erase() + self._block(lines))
            self._shown = lines
            self._drawn = len(lines)

    def print_above(self, text: str) -> None:
        """Print `text` above the block (or plainly on the stream when the display is not active)."""
        with self._lock:
            if not self.active:
                self._write(text + "\n")
                return
            self._write(self._erase() + text + "\n" + self._block(self._shown))

    def _erase(self) -> str:
        return _UP.format(self._drawn) + _ERASE_DOWN if self._drawn else ""

    def _block(self, lines: list[str]) -> str:
        width = self._columns() - 1  # never the last column: some terminals wrap there
        return "".join(" ".join(line.splitlines())[:width] + "\n" for line in lines)

    def _columns(self) -> int:
        try:
            columns = os.get_terminal_size(self._stream.fileno()).columns
        except (AttributeError, OSError, ValueError):
            columns = 0
        if columns > 0:  # a pseudo-terminal nobody sized (`script`, some CI runners) says 0
            return columns
        try:
            return max(int(os.environ.get("COLUMNS", "")), 2)
        except ValueError:
            return DEFAULT_COLUMNS

    def _write(self, text: str) -> None:
        self._stream.write(text)
        self._stream.flush()

    # -- logging -----------------------------------------------------------------------------------------
    def _console_handlers(self) -> list[logging.Handler]:
        return [h for h in logging.getLogger().handlers
                if isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler)
                and h.stream is self._stream]

    def _take_over_logging(self, console: list[logging.Handler]) -> None:
        above = _AboveBlockHandler(self)
        above.setFormatter(console[0].formatter if console and console[0].formatter
                           else logging.Formatter(TEXT_FORMAT))
        self._installed = [above]
        if self._log_file is not None:  # opened first: a file that cannot be written leaves logging as it was
            self._log_file.parent.mkdir(parents=True, exist_ok=True)
            to_file = logging.FileHandler(self._log_file, encoding="utf-8")
            to_file.setFormatter(logging.Formatter(TEXT_FORMAT))
            self._installed.append(to_file)
        root = logging.getLogger()
        for handler in console:
            root.removeHandler(handler)
        self._taken = console
        for handler in self._installed:
            root.addHandler(handler)

    def _give_back_logging(self) -> None:
        root = logging.getLogger()
        for handler in self._installed:
            root.removeHandler(handler)
            handler.close()
        for handler in self._taken:
            root.addHandler(handler)
        self._installed, self._taken = [], []


class _AboveBlockHandler(logging.Handler):
    """The console while the display is active: WARNING and above, each printed above the block."""

    def __init__(self, display: ProgressDisplay) -> None:
        super().__init__(logging.WARNING)
        self._display = display

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
        except Exception:  # noqa: BLE001 - logging's own convention: report and carry on
            self.handleError(record)
            return
        self._display.print_above(text)


# -- what the two users show ---------------------------------------------------------------------------
def flow_lines(status: Status, now_ms: int | None = None) -> list[str]:
    """One line per flow of `sparkmirror run`: state, records, records/s, bytes, lag, starts, retries, failure.

    `now_ms` (wall clock by default) dates the lag: its seconds are the age of the oldest record not copied.
    """
    if not status.flows:
        return ["no flow is running"]
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    name_width = max(len(f.flow) for f in status.flows)
    return [_flow_line(f, name_width, now_ms) for f in status.flows]


def _flow_line(flow: FlowStatus, name_width: int, now_ms: int) -> str:
    progress = flow.progress
    parts = [f"{flow.flow:<{name_width}}  {flow.state:<7}", f"{progress.records:>12,} records",
             f"{progress.records_per_s:>9,.0f} records/s", f"{human_bytes(progress.bytes):>9}"]
    lag = _lag(flow, now_ms)
    if lag:
        parts.append(lag)
    parts.append(f"{flow.restarts} start(s), {progress.retries} retries")
    if flow.failure:
        parts.append(f"failure: {shorten(flow.failure)}")
    return "  ".join(parts)


def _lag(flow: FlowStatus, now_ms: int) -> str | None:
    """`FlowStatus.recovery_point(now_ms)` where the status has it, else `lag_records`/`lag_seconds` fields."""
    point = getattr(flow, "recovery_point", None)
    if callable(point):
        measured = point(now_ms)
        records, seconds = (measured.records, measured.seconds) if measured is not None else (None, None)
    else:
        records, seconds = getattr(flow, "lag_records", None), getattr(flow, "lag_seconds", None)
    shown = ([f"{records:,} records"] if records is not None else []) + (
        [f"{seconds:,.1f} s"] if seconds is not None else [])
    return f"lag {', '.join(shown)}" if shown else None


def bar_line(done: int, total: int, rate: float, width: int = 30) -> str:
    """`[=====>     ]  45%  90,000 / 200,000 records  12,345 records/s  ETA 9 s` (ETA while unfinished)."""
    fraction = min(max(done / total, 0.0), 1.0) if total > 0 else 0.0
    filled = int(fraction * width)
    bar = "=" * filled + (">" + " " * (width - filled - 1) if filled < width else "")
    line = f"[{bar}] {fraction:>4.0%}  {done:,} / {total:,} records  {rate:,.0f} records/s"
    if rate > 0 and done < total:
        line += f"  ETA {duration((total - done) / rate)}"
    return line


def human_bytes(count: int) -> str:
    """Decimal units, like the demo's MB/s: 999 B, 1.5 kB, 12.3 MB."""
    if count < 1000:
        return f"{count} B"
    value = count / 1000
    for unit in ("kB", "MB", "GB"):
        if value < 1000:
            return f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:,.1f} TB"


def duration(seconds: float) -> str:
    """`9 s`, `2 min 05 s`, `1 h 02 min`."""
    whole = int(seconds + 0.5)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def shorten(text: str, limit: int = FAILURE_CHARS) -> str:
    """The first line of `text`, whitespace collapsed, cut to `limit` characters."""
    first = " ".join(text.strip().splitlines()[0].split()) if text.strip() else ""
    return first if len(first) <= limit else first[:limit - 3] + "..."
