"""Logging of the `sparkmirror` command: plain text lines or JSON lines, on one console handler.

JSON lines are for log shippers (systemd's journal, Loki, Elasticsearch): one object per record, never a
newline inside one, so a line is a record even when a message or a traceback spans lines.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import TextIO

LOG_FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# Every attribute a LogRecord has of its own; anything else on a record came from a caller's `extra=`.
_RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", logging.INFO, "", 0, "", None, None))) | {
    "message", "asctime"}

_console: logging.Handler | None = None


class JsonLinesFormatter(logging.Formatter):
    """One JSON object per record: time (ISO-8601 UTC, ms), level, logger, message, thread, and the
    formatted traceback as `exception` when there is one, plus the JSON-serialisable `extra=` fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
                    .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "thread": record.threadName,
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        for key, value in vars(record).items():
            if key not in _RECORD_ATTRIBUTES and key not in entry and _serialisable(value):
                entry[key] = value
        return json.dumps(entry, ensure_ascii=False)


def _serialisable(value: object) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def setup_logging(verbose: bool, log_format: str = "text", stream: TextIO | None = None) -> logging.Handler:
    """Route every record to `stream` (stderr when None, looked up at call time so tests can swap it).

    Calling it again replaces the handler it installed before; handlers others put on the root logger (a
    test runner's, say) stay. Returns the console handler, which a progress display takes over while active.
    """
    global _console
    if log_format not in LOG_FORMATS:
        raise ValueError(f"log format {log_format!r}: expected one of {', '.join(LOG_FORMATS)}")
    root = logging.getLogger()
    if _console is not None:
        root.removeHandler(_console)
    handler = logging.StreamHandler(sys.stderr if stream is None else stream)
    handler.setFormatter(JsonLinesFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT))
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    _console = handler
    logging.captureWarnings(True)  # Python warnings (pyspark's, say) become records: one line, one format
    # librdkafka reports every failed connection attempt; our own errors say what matters.
    logging.getLogger("sparkmirror.librdkafka").setLevel(logging.DEBUG if verbose else logging.CRITICAL)
    for noisy in ("py4j", "pyspark"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return handler


def console_handler() -> logging.Handler | None:
    """The handler `setup_logging` installed last, if any."""
    return _console
