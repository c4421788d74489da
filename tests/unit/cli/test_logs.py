"""`--log-format json`: one JSON object per line, with the fields log shippers index."""

import io
import json
import logging
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from sparkmirror.cli import logs
from sparkmirror.cli.main import cli

BROKEN = Path(__file__).parents[2] / "data" / "mm2" / "broken" / "bad_values.properties"


@pytest.fixture(autouse=True)
def _root_logger_restored():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def json_lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_each_record_is_one_json_line_with_time_level_logger_message_and_thread():
    stream = io.StringIO()
    logs.setup_logging(verbose=False, log_format="json", stream=stream)
    log = logging.getLogger("sparkmirror.test")
    log.info("flow %s started", "A->B")
    log.debug("not at INFO")
    log.warning("two\nlines")

    first, second = json_lines(stream)
    assert first["message"] == "flow A->B started" and first["level"] == "INFO"
    assert first["logger"] == "sparkmirror.test" and first["thread"] == "MainThread"
    assert first["time"].endswith("Z") and len(first["time"]) == len("2025-01-31T12:34:56.789Z")
    assert second["message"] == "two\nlines" and second["level"] == "WARNING"
    assert "exception" not in first


def test_an_exception_is_its_formatted_traceback_inside_the_one_line():
    stream = io.StringIO()
    logs.setup_logging(verbose=False, log_format="json", stream=stream)
    try:
        raise ValueError("broken offset")
    except ValueError:
        logging.getLogger("sparkmirror.test").exception("checkpoint failed")

    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    entry = json.loads(lines[0])
    assert entry["level"] == "ERROR"
    assert entry["exception"].startswith("Traceback (most recent call last):")
    assert "ValueError: broken offset" in entry["exception"]


def test_extra_fields_are_kept_when_json_can_hold_them():
    stream = io.StringIO()
    logs.setup_logging(verbose=False, log_format="json", stream=stream)
    logging.getLogger("sparkmirror.test").info("batch", extra={"flow": "A->B", "records": 12, "handle": object()})

    (entry,) = json_lines(stream)
    assert entry["flow"] == "A->B" and entry["records"] == 12
    assert "handle" not in entry
    assert "args" not in entry and "msg" not in entry  # the record's own attributes are not extras


def test_text_format_is_todays_line_and_verbose_means_debug():
    stream = io.StringIO()
    logs.setup_logging(verbose=True, log_format="text", stream=stream)
    logging.getLogger("sparkmirror.test").debug("probe %d", 3)
    assert stream.getvalue().rstrip().endswith(" DEBUG sparkmirror.test: probe 3")
    assert logging.getLogger("sparkmirror.librdkafka").level == logging.DEBUG


def test_calling_setup_again_replaces_its_handler_and_quiets_librdkafka():
    first, second = io.StringIO(), io.StringIO()
    logs.setup_logging(verbose=False, stream=first)
    logs.setup_logging(verbose=False, log_format="json", stream=second)
    logging.getLogger("sparkmirror.test").warning("once")
    assert first.getvalue() == ""
    assert json_lines(second)[0]["message"] == "once"
    assert logging.getLogger("sparkmirror.librdkafka").level == logging.CRITICAL
    assert logging.getLogger("py4j").level == logging.WARNING


def test_python_warnings_become_records_too():
    stream = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        logging.captureWarnings(False)
        logs.setup_logging(verbose=False, log_format="json", stream=stream)
        warnings.warn("pandas too new", FutureWarning, stacklevel=1)
        logging.captureWarnings(False)
    (entry,) = json_lines(stream)
    assert entry["logger"] == "py.warnings" and "FutureWarning: pandas too new" in entry["message"]


def test_an_unknown_format_is_refused():
    with pytest.raises(ValueError, match="log format 'xml'"):
        logs.setup_logging(verbose=False, log_format="xml")


@pytest.mark.parametrize("how", ["option", "env"])
def test_the_cli_takes_log_format_from_the_option_or_the_environment(how):
    args = ["--log-format", "json"] if how == "option" else []
    env = {"SPARKMIRROR_LOG_FORMAT": "json"} if how == "env" else {}
    result = CliRunner(env=env).invoke(cli, [*args, "validate", str(BROKEN)])
    assert result.exit_code == 2
    handler = logs.console_handler()
    assert handler is not None and isinstance(handler.formatter, logs.JsonLinesFormatter)
    record = logging.LogRecord("sparkmirror", logging.ERROR, __file__, 1, "invalid %s", ("config",), None)
    assert json.loads(handler.format(record))["message"] == "invalid config"


def test_the_cli_refuses_an_unknown_log_format():
    result = CliRunner().invoke(cli, ["--log-format", "xml", "validate", str(BROKEN)])
    assert result.exit_code == 2 and "'xml' is not one of 'text', 'json'" in result.output
