"""The progress display: its render helpers, and what it writes on a (fake) terminal and off one."""

import io
import logging
import re
import threading
from types import SimpleNamespace

import pytest

from sparkmirror.cli import logs
from sparkmirror.cli.progress_display import ProgressDisplay, bar_line, duration, flow_lines, human_bytes, shorten
from sparkmirror.runtime.progress import ProgressSnapshot
from sparkmirror.runtime.status import FlowStatus, Status

NEVER = 3600.0  # an interval the test never reaches: only the first and the final draw happen
log = logging.getLogger("sparkmirror.test.display")


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def screen(out: str) -> tuple[list[str], bool]:
    """What a terminal shows after `out` (its rows, the last one where the cursor is) and whether the cursor is
    visible: enough of a terminal to follow rich's Live. Any other escape code fails the test."""
    rows, row, col, visible = [""], 0, 0, True
    for piece in re.findall(r"\x1b\[[0-9;?]*[A-Za-z]|\r|\n|[^\x1b\r\n]+", out):
        if piece == "\n":
            row, col = row + 1, 0
            rows += [""] * (row + 1 - len(rows))
        elif piece == "\r":
            col = 0
        elif piece == "\x1b[2K":
            rows[row] = ""
        elif up := re.fullmatch(r"\x1b\[(\d+)A", piece):
            row -= int(up[1])
            assert row >= 0, "the cursor went above the output"
        elif piece in ("\x1b[?25l", "\x1b[?25h"):
            visible = piece.endswith("h")
        else:
            assert not piece.startswith("\x1b"), f"an escape code this test does not know: {piece!r}"
            rows[row] = rows[row][:col].ljust(col) + piece + rows[row][col + len(piece):]
            col += len(piece)
    return rows, visible


@pytest.fixture(autouse=True)
def _terminal_and_root_logger(monkeypatch):
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLUMNS", "60")
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def flow(name="A->B", state="running", records=1_234_567, failure=None, **extra):
    progress = ProgressSnapshot(name, batches=3, records=records, bytes=98_765_432, elapsed_s=10.0,
                                retries=2)
    fields = dict(flow=name, state=state, failure=failure, assignment={"orders": 6}, positions={},
                  progress=progress, restarts=3, last_restart=None)
    if extra:  # the lag fields, whether or not FlowStatus has them yet
        return SimpleNamespace(**fields, **extra)
    return FlowStatus(**fields)


# -- render helpers -------------------------------------------------------------------------------------------
def test_flow_lines_show_state_records_rate_bytes_starts_and_retries_one_line_per_flow():
    lines = flow_lines(Status((flow(), flow("B->A", "idle", records=0))))
    assert len(lines) == 2
    assert lines[0] == ("A->B  running     1,234,567 records    123,457 records/s    98.8 MB  "
                        "3 start(s), 2 retries")
    assert lines[1].startswith("B->A  idle                0 records          0 records/s")


def test_flow_lines_show_lag_when_the_status_has_it_and_a_short_failure():
    failure = "Py4JJavaError: An error occurred while calling o42.start.\n: java.lang.Oops " + "x" * 200
    (line,) = flow_lines(Status((flow(state="failed", failure=failure, lag_records=4_200, lag_seconds=1.25),)))
    assert "lag 4,200 records, 1.2 s" in line
    assert line.endswith("failure: " + shorten(failure))
    assert "\n" not in line and "java.lang.Oops" not in line
    (without,) = flow_lines(Status((flow(lag_records=None, lag_seconds=None),)))
    assert "lag" not in without


def test_flow_lines_take_the_lag_from_the_status_recovery_point_at_now():
    asked = []

    def recovery_point(now_ms):
        asked.append(now_ms)
        return SimpleNamespace(records=12, seconds=None) if now_ms else None

    (line,) = flow_lines(Status((flow(recovery_point=recovery_point),)), now_ms=1_000)
    assert "lag 12 records  3 start(s)" in line and asked == [1_000]
    (before_measured,) = flow_lines(Status((flow(recovery_point=recovery_point),)), now_ms=0)
    assert "lag" not in before_measured
    assert flow_lines(Status(())) == ["no flow is running"]


def test_shorten_keeps_the_first_line_within_the_limit():
    assert shorten("  short  failure \nsecond line") == "short failure"
    assert shorten("y" * 100, limit=20) == "y" * 17 + "..."
    assert shorten("") == ""


@pytest.mark.parametrize(("done", "total", "rate", "expected"), [
    (0, 200, 0.0, "[>         ]   0%  0 / 200 records  0 records/s"),
    (100, 200, 10.0, "[=====>    ]  50%  100 / 200 records  10 records/s  ETA 10 s"),
    (200, 200, 10.0, "[==========] 100%  200 / 200 records  10 records/s"),
    (250, 200, 10.0, "[==========] 100%  250 / 200 records  10 records/s"),
    (5, 0, 1.0, "[>         ]   0%  5 / 0 records  1 records/s"),
])
def test_bar_line(done, total, rate, expected):
    assert bar_line(done, total, rate, width=10) == expected


def test_bar_line_is_as_wide_as_asked_with_thousands_separators():
    line = bar_line(90_000, 200_000, 12_345.0)
    assert line.index("]") == 31
    assert "90,000 / 200,000 records  12,345 records/s  ETA 9 s" in line


def test_sizes_and_durations_for_people():
    assert [human_bytes(n) for n in (0, 999, 1_500, 12_300_000, 4_000_000_000, 5 * 10**15)] == [
        "0 B", "999 B", "1.5 kB", "12.3 MB", "4.0 GB", "5,000.0 TB"]
    assert [duration(s) for s in (0.4, 59, 125, 3720)] == ["0 s", "59 s", "2 min 05 s", "1 h 02 min"]


# -- on a terminal --------------------------------------------------------------------------------------------
def test_on_a_terminal_warnings_print_above_the_block_and_info_goes_only_to_the_log_file(tmp_path):
    tty = FakeTty()
    logs.setup_logging(verbose=False, stream=tty)
    log_file = tmp_path / "state" / "sparkmirror.log"
    with ProgressDisplay(lambda: ["flow A->B running", "flow B->A idle"], stream=tty, interval_s=NEVER,
                         log_file=log_file) as display:
        assert display.active
        assert screen(tty.getvalue())[0] == [f"log: {log_file} (warnings and errors show here too)",
                                              "flow A->B running", "flow B->A idle"]
        log.info("batch 7 written")
        log.warning("target refused a [batch]")
    rows, cursor_visible = screen(tty.getvalue())

    assert rows[0] == f"log: {log_file} (warnings and errors show here too)"
    assert rows[1].endswith(" WARNING sparkmirror.test.display: target refused a [batch]")  # no markup
    assert rows[2:] == ["flow A->B running", "flow B->A idle", ""]  # the final state left, the cursor below it
    assert cursor_visible
    assert "batch 7 written" not in tty.getvalue()
    written = log_file.read_text()
    assert "INFO sparkmirror.test.display: batch 7 written" in written
    assert "WARNING sparkmirror.test.display: target refused a [batch]" in written


def test_the_run_and_demo_lines_show_their_figures_on_a_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    tty = FakeTty()
    with ProgressDisplay(lambda: [*flow_lines(Status((flow(),))), bar_line(90_000, 200_000, 12_345.0, width=10)],
                         stream=tty, interval_s=NEVER):
        pass
    rows, _ = screen(tty.getvalue())
    assert rows == ["A->B  running     1,234,567 records    123,457 records/s    98.8 MB  3 start(s), 2 retries",
                    "[====>     ]  45%  90,000 / 200,000 records  12,345 records/s  ETA 9 s", ""]


def test_the_cursor_stays_visible_while_the_block_is_shown():
    """A second Ctrl-C ends `run` with os._exit, past any cleanup: a hidden cursor would stay hidden."""
    tty = FakeTty()
    with ProgressDisplay(lambda: ["x"], stream=tty, interval_s=NEVER):
        assert screen(tty.getvalue()) == (["x"], True)


def test_after_the_display_logging_is_as_before(tmp_path):
    tty = FakeTty()
    console = logs.setup_logging(verbose=False, stream=tty)
    before = list(logging.getLogger().handlers)
    with ProgressDisplay(lambda: ["x"], stream=tty, interval_s=NEVER, log_file=tmp_path / "l.log"):
        assert console not in logging.getLogger().handlers
    assert logging.getLogger().handlers == before
    log.info("plain again")
    assert tty.getvalue().endswith("INFO sparkmirror.test.display: plain again\n")


def test_an_exception_in_the_block_ends_the_display_cleanly_and_passes_through(tmp_path):
    tty = FakeTty()
    logs.setup_logging(verbose=False, stream=tty)
    before = list(logging.getLogger().handlers)
    with pytest.raises(RuntimeError, match="boom"), ProgressDisplay(lambda: ["records 5"], stream=tty,
                                                                     interval_s=NEVER) as display:
        raise RuntimeError("boom")
    assert not display.active
    assert screen(tty.getvalue()) == (["records 5", ""], True)
    assert logging.getLogger().handlers == before


def test_the_block_is_redrawn_in_place_by_its_thread():
    tty = FakeTty()
    calls = 0
    redrawn = threading.Event()

    def render() -> list[str]:
        nonlocal calls
        calls += 1
        if calls >= 3:
            redrawn.set()
        return [f"draw {calls}", "second line"]

    with ProgressDisplay(render, stream=tty, interval_s=0.01):
        assert redrawn.wait(30), "the display's thread never redrew the block"
    out = tty.getvalue()
    assert out.index("draw 1") < out.index("draw 2") < out.index("draw 3")
    rows, _ = screen(out)
    assert rows == [f"draw {calls}", "second line", ""]  # each draw over the last: no block left above


def test_a_render_stuck_on_the_thread_does_not_hold_up_warnings():
    tty = FakeTty()
    logs.setup_logging(verbose=False, stream=tty)
    stuck, release = threading.Event(), threading.Event()
    calls = 0

    def render() -> list[str]:
        nonlocal calls
        calls += 1
        if calls == 2:  # the thread's first redraw
            stuck.set()
            release.wait(30)
        return ["records 1"]

    with ProgressDisplay(render, stream=tty, interval_s=0.01):
        assert stuck.wait(30)
        warn = threading.Thread(target=log.warning, args=("printed while the render hangs",))
        warn.start()
        warn.join(10)
        printed = not warn.is_alive() and "printed while the render hangs" in tty.getvalue()
        release.set()
    assert printed, "a warning waited for the stuck render"


def test_a_failing_render_shows_its_error_in_the_block_and_the_display_goes_on():
    tty = FakeTty()
    answers = iter([["records 10"]])

    def render() -> list[str]:
        return next(answers)  # StopIteration from the second call on

    with ProgressDisplay(render, stream=tty, interval_s=NEVER):
        pass
    assert screen(tty.getvalue())[0] == ["records 10", "(progress unavailable: StopIteration: )", ""]


def test_lines_are_cut_to_the_terminal_width_and_never_span_lines():
    tty = FakeTty()
    with ProgressDisplay(lambda: ["z" * 100, "one\ntwo"], stream=tty, interval_s=NEVER):
        pass
    assert screen(tty.getvalue())[0] == ["z" * 60, "one two", ""]


# -- off a terminal -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["pipe", "pipe with FORCE_COLOR", "dumb terminal", "json logs"])
def test_off_a_terminal_or_with_json_logs_the_display_writes_nothing_and_logging_stays(case, monkeypatch, tmp_path):
    stream = io.StringIO() if case.startswith("pipe") else FakeTty()
    if case == "dumb terminal":
        monkeypatch.setenv("TERM", "dumb")
    if case == "pipe with FORCE_COLOR":  # CI runners set these; rich alone would then call the pipe a terminal
        monkeypatch.setenv("FORCE_COLOR", "1")
        monkeypatch.setenv("TTY_COMPATIBLE", "1")
    logs.setup_logging(verbose=False, log_format="json" if case == "json logs" else "text", stream=stream)
    with ProgressDisplay(lambda: ["never shown"], stream=stream, interval_s=0.01,
                         log_file=tmp_path / "unused.log") as display:
        assert not display.active
        log.info("still on the console")
    out = stream.getvalue()
    assert "never shown" not in out and "\x1b" not in out
    assert out.count("\n") == 1 and "still on the console" in out
    assert not (tmp_path / "unused.log").exists()


def test_off_a_terminal_print_above_writes_plain_whole_lines(monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    pipe = io.StringIO()
    line = bar_line(90_000, 200_000, 12_345.0) + "  " + "w" * 100  # past the 60 columns: not wrapped, not cut
    with ProgressDisplay(lambda: ["never shown"], stream=pipe, interval_s=NEVER) as display:
        display.print_above(line)
        display.print_above("A at localhost:9092, B at localhost:9093 (3.1 s)")
    assert pipe.getvalue() == line + "\nA at localhost:9092, B at localhost:9093 (3.1 s)\n"
