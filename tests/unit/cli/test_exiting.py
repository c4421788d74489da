"""A finished command leaves within its bound even when a thread it started never ends."""

from __future__ import annotations

import subprocess
import sys
import textwrap

STUCK = 'threading.Thread(target=threading.Event().wait, name="stuck-client-call").start()'


def _run(code: str) -> subprocess.CompletedProcess[bytes]:
    # Without the bound these processes never end: the timeout turns that into a failure.
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, timeout=60)


def test_a_thread_that_never_ends_does_not_keep_the_process_alive() -> None:
    proc = _run(f"""
        import sys, threading
        from sparkmirror.cli.exiting import exit_within
        {STUCK}
        exit_within(0.5, 3)
        sys.exit(3)
    """)
    assert proc.returncode == 3
    assert b"still waiting for: stuck-client-call" in proc.stderr


def test_a_clean_exit_is_not_delayed_or_reported() -> None:
    proc = _run("""
        import sys, time
        from sparkmirror.cli.exiting import exit_within
        exit_within(30, 0)
        sys.exit(0)
    """)
    assert proc.returncode == 0
    assert proc.stderr == b""


def test_the_command_line_entry_point_arms_the_bound_with_the_commands_status() -> None:
    proc = _run(f"""
        import sys, threading
        import sparkmirror.cli.main as cli_main
        cli_main.EXIT_GRACE_S = 0.5
        {STUCK}
        sys.argv = ["sparkmirror", "validate", "/nonexistent/mm2.properties"]
        cli_main.main()
    """)
    assert proc.returncode == 2, proc.stderr  # validate's exit status for a file that cannot be read
    assert b"still waiting for: stuck-client-call" in proc.stderr
