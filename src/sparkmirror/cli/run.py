"""`sparkmirror run`: replicate until stopped, with metrics, the web view and a progress display."""

from __future__ import annotations

import logging
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from sparkmirror.cli.common import MirrorMakerCommand, config_argument, config_path, guard, load
from sparkmirror.cli.exit_codes import ExitStatus
from sparkmirror.cli.progress_display import ProgressDisplay, flow_lines
from sparkmirror.errors import ConfigError
from sparkmirror.pipeline.submit import launched_by_spark_submit
from sparkmirror.runtime.stopping import DEFAULT_STOP_TIMEOUT_S

if TYPE_CHECKING:  # imported where used, so that `sparkmirror --help` stays fast
    from sparkmirror.runtime.supervisor import Supervisor
    from sparkmirror.web.server import MetricsServer


class _StopSignals:
    """SIGTERM and SIGINT only note that a stop was asked for; the main thread does the stopping.

    Doing the stop inside the handler deadlocked when the signal landed while the interrupted code was
    inside a client call (closing that client from the handler waited for the call it had interrupted).
    A second signal during the stop ends the process at once.
    """

    def __init__(self) -> None:
        self.signal: str | None = None
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._handle)
        # Under spark-submit our parent is its JVM, whose SIGTERM is not passed on: its end is a stop request too.
        self._submit_jvm = os.getppid() if launched_by_spark_submit() else None

    def _handle(self, signum: int, _frame: object) -> None:
        if self.signal is not None:
            os.write(2, f"{signal.Signals(signum).name} again: exiting without finishing the stop\n".encode())
            os._exit(int(ExitStatus.INTERRUPTED))
        self.signal = signal.Signals(signum).name

    def requested(self) -> bool:
        if self.signal is None and self._submit_jvm is not None and os.getppid() != self._submit_jvm:
            self.signal = "the end of spark-submit's JVM"
        return self.signal is not None


@click.command(cls=MirrorMakerCommand)
@config_argument
@click.option("--config", "config_option", type=click.Path(dir_okay=False, path_type=Path),
              help="The MM2 properties file (instead of the CONFIG_FILE argument).")
@click.option("--state-dir", type=click.Path(path_type=Path), default=Path("sparkmirror-state"),
              show_default=True, help="Where each flow keeps its read positions.")
@click.option("--stop-timeout", type=click.FloatRange(min=1), default=DEFAULT_STOP_TIMEOUT_S, show_default=True,
              metavar="SECONDS", help="How long a stop (SIGTERM, Ctrl-C) may take; steps still running then are "
                                      "abandoned, each named in the log.")
@click.option("--metrics-port", type=click.IntRange(0, 65535), default=None, metavar="PORT",
              help="Serve Prometheus metrics (/metrics), the status as JSON (/api/status) and the live web view (/) "
                   "on this port; 0 picks a free one. Default: sparkmirror.metrics.port, else none.")
@click.pass_obj
def run(obj: dict[str, bool], config_file: Path | None, clusters: tuple[str, ...], config_option: Path | None,
        state_dir: Path, stop_timeout: float, metrics_port: int | None) -> None:
    """Replicate the enabled flows of CONFIG_FILE until stopped (SIGTERM / Ctrl-C stop cleanly).

    Edits to CONFIG_FILE (or SIGHUP) are applied while running: a valid new version changes only the flows
    it touches; an invalid one is logged and the running configuration stays.
    """

    def action() -> int:
        from sparkmirror.runtime.supervisor import Supervisor

        path = config_path(config_file, config_option)
        config, flows, targets = load(path, clusters)
        if not flows:
            raise ConfigError(["no flow is enabled" + (f" with a target in --clusters {' '.join(clusters)}"
                                                        if clusters else "")
                               + "; set e.g. 'A->B.enabled = true'"], config.source)
        supervisor = Supervisor(config, state_dir, target_clusters=targets, config_path=path)
        port = metrics_port if metrics_port is not None else config.metrics_port
        server = _metrics_server(supervisor, port) if port is not None else None
        stop = _StopSignals()
        signal.signal(signal.SIGHUP, lambda *_: supervisor.request_reload())
        try:
            with ProgressDisplay(lambda: flow_lines(supervisor.status()), log_file=state_dir / "sparkmirror.log"):
                abandoned = supervisor.serve(stop.requested, stop_timeout)
        finally:
            if server is not None:
                server.stop()
        for line in supervisor.status().lines():  # a snapshot: safe while abandoned threads still run
            click.echo(line, err=True)
        if stop.signal:
            click.echo(f"stopped ({stop.signal})" + (f"; abandoned at the {stop_timeout:.0f} s deadline: "
                                                     f"{'; '.join(abandoned)}" if abandoned else ""), err=True)
        if abandoned:  # their threads may still be inside a client call: leave without waiting for them
            logging.shutdown()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(int(ExitStatus.SUCCESS))
        return ExitStatus.SUCCESS

    guard(action, obj["traceback"])


def _metrics_server(supervisor: Supervisor, port: int) -> MetricsServer:
    """The metrics port's server, started (its address printed), or the error naming the port."""
    from sparkmirror.web.server import MetricsServer

    server = MetricsServer(supervisor.status, port).start()
    click.echo(f"metrics: http://localhost:{server.port}/metrics; web view: http://localhost:{server.port}/",
               err=True)
    return server
