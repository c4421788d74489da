"""A live block of progress lines at the bottom of a terminal, with warnings printed above it.

While the block is shown, INFO records would scroll it away line by line, so the console gets only
WARNING and above (each printed above the block) and the rest goes to an optional log file. Off a
terminal (CI, systemd, a pipe) or with JSON logs the display does nothing: logs stay plain lines there.
The drawing (cursor moves, erasing, printing above the block, terminal width) is rich's `Live`.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

from rich.console import Console
from rich.live import Live
from rich.text import Text

from sparkmirror.cli.logs import TEXT_FORMAT, JsonLinesFormatter

if TYPE_CHECKING:
    from sparkmirror.runtime.status import FlowStatus, Status

FAILURE_CHARS = 80


def plain_console(stream: TextIO) -> Console:
    """A rich Console on `stream` that prints text as given: no markup, colour, highlighting or emoji codes.

    It is a terminal only when `stream` is a TTY: rich would also believe FORCE_COLOR or TTY_COMPATIBLE, which
    CI runners set, and put cursor moves into a log. A TTY with TERM=dumb (Emacs shells) is rich's dumb terminal.
    """
    isatty = getattr(stream, "isatty", None)
    return Console(file=stream, force_terminal=bool(isatty and isatty()), color_system=None, markup=False,
                   highlight=False, emoji=False)


class ProgressDisplay:
    """Redraws `render()`'s lines in place every `interval_s` on a terminal, until the block ends.

    Usage: `with ProgressDisplay(lambda: flow_lines(supervisor.status()), log_file=path): ...`.
    `render` runs on the display's own thread, not rich's: a render stuck in a call (a Spark status over
    Py4J) then neither freezes the warnings printed above nor holds up the end of the block. If it raises,
    the block shows the error and keeps going. On exit the final state is drawn once and left on screen.
    `active` says whether anything is shown.
    """

    def __init__(self, render: Callable[[], list[str]], stream: TextIO | None = None, interval_s: float = 1.0,
                 log_file: Path | None = None) -> None:
        self._render = render
        self._stream = sys.stderr if stream is None else stream
        self._console = plain_console(self._stream)
        self._interval_s = interval_s
        self._log_file = log_file
        self._lock = threading.Lock()  # one writer at a time: the block's updates and the lines printed above
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._live: Live | None = None
        self._lines: list[str] = []  # last lines rendered without error
        self._taken: list[logging.Handler] = []  # console handlers set aside while active
        self._installed: list[logging.Handler] = []

    @property
    def active(self) -> bool:
        return self._live is not None

    # -- life --------------------------------------------------------------------------------------------
    def __enter__(self) -> ProgressDisplay:
        console = self._console_handlers()
        if (not self._console.is_terminal or self._console.is_dumb_terminal
                or any(isinstance(h.formatter, JsonLinesFormatter) for h in console)):
            return self
        self._take_over_logging(console)
        try:
            if self._log_file is not None:
                self.print_above(f"log: {self._log_file} (warnings and errors show here too)")
            live = Live(_block(self._safe_render()), console=self._console, auto_refresh=False,
                        redirect_stdout=False, redirect_stderr=False)
            live.start(refresh=True)
            # Left visible: a second Ctrl-C ends `run` with os._exit, which would leave the shell without one.
            self._console.show_cursor(True)
        except BaseException:
            self._give_back_logging()
            raise
        self._live = live
        self._thread = threading.Thread(target=self._loop, name="progress-display", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._live is None:
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self._interval_s + 5)  # a render stuck past this is left behind
        block = _block(self._safe_render())
        try:
            with self._lock:
                live, self._live = self._live, None
                live.update(block)
                live.stop()  # draws the final state, ends its line and leaves it on screen
        finally:
            self._give_back_logging()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval_s):
            block = _block(self._safe_render())
            with self._lock:
                if self._live is None:  # ended while this render ran
                    return
                try:
                    self._live.update(block, refresh=True)
                except (OSError, ValueError):  # the terminal went away (closed, hung up): nothing left to draw on
                    return

    def _safe_render(self) -> list[str]:
        try:
            lines = [str(line) for line in self._render()]
        except Exception as exc:  # noqa: BLE001 - the display must never end the command it shows
            return [*self._lines, f"(progress unavailable: {type(exc).__name__}: {exc})"]
        self._lines = lines
        return lines

    def print_above(self, text: str) -> None:
        """Print `text` above the block (or plainly on the stream when the display is not active)."""
        with self._lock:
            self._console.print(text, soft_wrap=True)  # soft: a long record is wrapped by the terminal, not cut

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


def _block(lines: list[str]) -> Text:
    """One screen line per entry: embedded newlines joined, cut (not wrapped) at the terminal's width."""
    return Text("\n".join(" ".join(line.splitlines()) for line in lines), no_wrap=True, overflow="crop")


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
