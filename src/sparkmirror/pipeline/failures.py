"""Reading the cause out of a failed query's error text, which wraps py4j, Spark and Python layers.

Pure text handling (no pyspark import), so it is unit-tested without a JVM.
"""

from __future__ import annotations

import re

_OUR_ERROR = re.compile(r"sparkmirror\.errors\.\w+Error: (.+?)(?:\n\s*(?:at |\t|JVM stacktrace)|\n\n|\Z)", re.S)
_DATA_LOSS = re.compile(r"Could not read records in offset \[(\d+), (\d+)\) for topic partition (\S+)")
_EXCEPTION = re.compile(r"(?:^|[\s:])(?:[a-z_]\w*\.)*([A-Z]\w*(?:Exception|Error)): ")
_WRAPPERS = {"SparkException", "Py4JException", "Py4JJavaError", "StreamingQueryException", "PythonException",
             "CapturedException", "ExecutionException"}


def root_cause(exc: object) -> str:
    """The most specific cause in a Spark error: ours, source data loss, or the deepest exception named."""
    text = str(getattr(exc, "desc", None) or exc)
    ours = _OUR_ERROR.search(text)
    if ours:
        return ours.group(1).strip()
    loss = _DATA_LOSS.search(text)
    if loss:
        start, end, tp = loss.groups()
        return (f"records {start}..{int(end) - 1} of source partition {tp} are no longer on the source cluster "
                f"(deleted by retention, or the topic was deleted) before they were replicated. The flow's "
                f"retry continues at the earliest record still there and names the records lost in a warning; "
                f"to lose none, give the source topic a longer retention than the replication lag")
    causes = [m for m in _EXCEPTION.finditer(text) if m.group(1) not in _WRAPPERS]
    if causes:
        deepest = causes[-1]
        message = text[deepest.end():].split("\n", 1)[0].strip()
        return f"{deepest.group(1)}: {message}"
    return text.strip().splitlines()[0] if text.strip() else repr(exc)
