"""`sparkmirror` command. All exception -> exit code mapping happens here, in one place."""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from sparkmirror.cli.exit_codes import ExitStatus
from sparkmirror.errors import (
    ClusterAuthenticationError,
    ClusterUnreachableError,
    ConfigError,
    SparkmirrorError,
)
from sparkmirror.runtime.stopping import DEFAULT_STOP_TIMEOUT_S

if TYPE_CHECKING:  # imported where used, so that `sparkmirror --help` stays fast
    from sparkmirror.client import OffsetTranslation
    from sparkmirror.config.mm2 import MirrorMakerConfig
    from sparkmirror.config.model import FlowConfig

logger = logging.getLogger("sparkmirror")


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # librdkafka reports every failed connection attempt; our own errors say what matters.
    logging.getLogger("sparkmirror.librdkafka").setLevel(logging.DEBUG if verbose else logging.CRITICAL)
    for noisy in ("py4j", "pyspark"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def _exit_status(exc: BaseException) -> ExitStatus:
    if isinstance(exc, ConfigError):
        return ExitStatus.CONFIG_ERROR
    if isinstance(exc, ClusterUnreachableError):
        return ExitStatus.CLUSTER_UNREACHABLE
    if isinstance(exc, ClusterAuthenticationError):
        return ExitStatus.AUTHENTICATION_FAILED
    if isinstance(exc, KeyboardInterrupt):
        return ExitStatus.INTERRUPTED
    return ExitStatus.ERROR


def _guard(action: Callable[[], int | None], traceback: bool) -> None:
    try:
        code = action()
    except (SparkmirrorError, KeyboardInterrupt) as exc:
        if traceback:
            raise
        if not isinstance(exc, KeyboardInterrupt):
            click.echo(f"error: {exc}", err=True)
        sys.exit(int(_exit_status(exc)))
    sys.exit(int(code or ExitStatus.SUCCESS))


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Debug logging, including the Kafka client's own.")
@click.option("--traceback", is_flag=True, help="Show Python tracebacks instead of one-line errors.")
@click.pass_context
def cli(ctx: click.Context, verbose: bool, traceback: bool) -> None:
    """Cross-cluster replication for Apache Kafka, MirrorMaker 2 compatible, on Apache Spark."""
    _setup_logging(verbose)
    ctx.obj = {"traceback": traceback}


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

    def _handle(self, signum: int, _frame: object) -> None:
        if self.signal is not None:
            os.write(2, f"{signal.Signals(signum).name} again: exiting without finishing the stop\n".encode())
            os._exit(int(ExitStatus.INTERRUPTED))
        self.signal = signal.Signals(signum).name

    def requested(self) -> bool:
        return self.signal is not None


def _split_aliases(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(a for v in values for a in v.replace(",", " ").split())


class _MirrorMakerCommand(click.Command):
    """Accepts MM2's `--clusters A B` (several values after one flag) as well as `--clusters A,B`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        expanded: list[str] = []
        greedy = False
        for arg in args:
            if arg == "--clusters":
                greedy = True
                continue
            if greedy and not arg.startswith("-") and not Path(arg).is_file():  # `--clusters B mm2.properties`
                expanded += ["--clusters", arg]
                continue
            greedy = False
            expanded.append(arg)
        return super().parse_args(ctx, expanded)


def _config_argument(command: Callable) -> Callable:
    command = click.option("--clusters", multiple=True, metavar="ALIAS...",
                           help="Only the flows that target these cluster aliases (MM2's --clusters A B).")(command)
    return click.argument("config_file", required=False, type=click.Path(dir_okay=False, path_type=Path))(command)


def _config_path(config_file: Path | None, config_option: Path | None) -> Path:
    path = config_file or config_option
    if path is None:
        raise click.UsageError("give the MM2 properties file, e.g. 'sparkmirror run mm2.properties'")
    return path


def _load(path: Path, clusters: tuple[str, ...]
          ) -> tuple[MirrorMakerConfig, list[FlowConfig], tuple[str, ...] | None]:
    """The validated config, the flows to run and the `--clusters` targets. Every problem of those flows
    (the file's, and their client settings') is reported here, before any cluster is contacted."""
    from sparkmirror.config.mm2 import load_config

    config = load_config(path)
    for warning in config.warnings:
        click.echo(f"warning: {warning}", err=True)
    if config.unused_keys:
        click.echo(f"warning: keys sparkmirror does not use (MM2/Connect worker settings or unknown): "
                   f"{', '.join(config.unused_keys)}", err=True)
    targets = _split_aliases(clusters) or None
    flows = config.enabled_flows(targets)
    problems = _check_clients(flows)
    if problems:
        raise ConfigError(problems, config.source)
    return config, flows, targets


def _check_clients(flows: list[FlowConfig]) -> list[str]:
    """What the load keeps for the flows that run: settings this version cannot honour, client settings
    librdkafka (or this build of it) cannot take, and consumer settings Spark's Kafka source refuses."""
    from sparkmirror.kafka.features import missing_features
    from sparkmirror.pipeline.options import source_options
    from sparkmirror.runtime.capabilities import cannot_honour

    problems: list[str] = []
    for flow in flows:
        found = cannot_honour(flow)
        # The JVM writer takes target_producer's Java settings; they were always checked as librdkafka's too.
        for client in (flow.target_producer, *flow.rdkafka_clients):
            found += list(client.problems) or missing_features(client.translation.settings, client.origin)
        consumer = flow.source_consumer
        found += _problems(lambda c=consumer: source_options(c, {}, describe=c.origin))
        found += _problems(lambda f=flow: f.reset_policy)
        problems += [p for p in dict.fromkeys(found) if p not in problems]
    return problems


def _problems(check: Callable[[], object]) -> list[str]:
    try:
        check()
    except ConfigError as exc:
        return exc.problems
    return []


@cli.command(cls=_MirrorMakerCommand)
@_config_argument
@click.pass_obj
def validate(obj: dict[str, bool], config_file: Path | None, clusters: tuple[str, ...]) -> None:
    """Check CONFIG_FILE: every problem at once, each with its key and line; exit code 2 on errors."""

    def action() -> int:
        config, flows, _ = _load(_config_path(config_file, None), clusters)
        click.echo(f"{config.source}: valid; clusters {', '.join(config.clusters)}; "
                   f"flows to run: {', '.join(f.name for f in flows) or '(none)'}")
        return ExitStatus.SUCCESS

    _guard(action, obj["traceback"])


@cli.command(cls=_MirrorMakerCommand)
@_config_argument
@click.option("--offline", is_flag=True, help="Only the resolved settings; do not contact the clusters.")
@click.pass_obj
def plan(obj: dict[str, bool], config_file: Path | None, clusters: tuple[str, ...], offline: bool) -> None:
    """Show what `run` would do: resolved flows, and with reachable clusters each source topic, its remote
    name, partitions and the configs it will be created with. Changes nothing."""

    def action() -> int:
        from sparkmirror.cli import render
        from sparkmirror.runtime.capabilities import not_performed

        config, flows, targets = _load(_config_path(config_file, None), clusters)
        for line in render.config_summary(config, flows):
            click.echo(line)
        for flow in flows:
            missing = not_performed(flow)
            if missing:
                click.echo(f"flow {flow.name}: not performed by this version: {'; '.join(missing)}")
        if offline or not flows:
            return ExitStatus.SUCCESS
        from sparkmirror.runtime.supervisor import Supervisor

        supervisor = Supervisor(config, Path("."), target_clusters=targets, check_state=False)
        supervisor.check_clusters()
        for flow in flows:
            for line in render.topic_plan(flow, supervisor.plan_flow(flow)):
                click.echo(line)
        return ExitStatus.SUCCESS

    _guard(action, obj["traceback"])


@cli.command(cls=_MirrorMakerCommand)
@_config_argument
@click.option("--config", "config_option", type=click.Path(dir_okay=False, path_type=Path),
              help="The MM2 properties file (instead of the CONFIG_FILE argument).")
@click.option("--state-dir", type=click.Path(path_type=Path), default=Path("sparkmirror-state"),
              show_default=True, help="Where each flow keeps its read positions.")
@click.option("--stop-timeout", type=click.FloatRange(min=1), default=DEFAULT_STOP_TIMEOUT_S, show_default=True,
              metavar="SECONDS", help="How long a stop (SIGTERM, Ctrl-C) may take; steps still running then are "
                                      "abandoned, each named in the log.")
@click.pass_obj
def run(obj: dict[str, bool], config_file: Path | None, clusters: tuple[str, ...], config_option: Path | None,
        state_dir: Path, stop_timeout: float) -> None:
    """Replicate the enabled flows of CONFIG_FILE until stopped (SIGTERM / Ctrl-C stop cleanly).

    Edits to CONFIG_FILE (or SIGHUP) are applied while running: a valid new version changes only the flows
    it touches; an invalid one is logged and the running configuration stays.
    """

    def action() -> int:
        from sparkmirror.runtime.capabilities import not_performed
        from sparkmirror.runtime.supervisor import Supervisor

        path = _config_path(config_file, config_option)
        config, flows, targets = _load(path, clusters)
        if not flows:
            raise ConfigError(["no flow is enabled" + (f" with a target in --clusters {' '.join(clusters)}"
                                                        if clusters else "")
                               + "; set e.g. 'A->B.enabled = true'"], config.source)
        for flow in flows:
            missing = not_performed(flow)
            if missing:
                click.echo(f"warning: flow {flow.name}: MM2 features not performed by this version: "
                           f"{'; '.join(missing)}", err=True)
        supervisor = Supervisor(config, state_dir, target_clusters=targets, config_path=path)
        stop = _StopSignals()
        signal.signal(signal.SIGHUP, lambda *_: supervisor.request_reload())
        abandoned = supervisor.serve(stop.requested, stop_timeout)
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

    _guard(action, obj["traceback"])


def _offsets_options(command: Callable) -> Callable:
    for decorator in reversed([
        click.option("--config", "config_file", required=True, type=click.Path(dir_okay=False, path_type=Path),
                     help="The MM2 properties file."),
        click.option("--group", required=True, help="The consumer group."),
        click.option("--from", "source", required=True, metavar="ALIAS", help="The cluster the group consumes from."),
        click.option("--to", "target", required=True, metavar="ALIAS", help="The cluster it moves to."),
        click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table."),
    ]):
        command = decorator(command)
    return command


def _print_translation(plan: OffsetTranslation, as_json: bool) -> None:
    from sparkmirror.cli import render

    if as_json:
        import json

        click.echo(json.dumps(plan.to_json(), indent=2))
        return
    for warning in plan.warnings:
        click.echo(f"warning: {warning}", err=True)
    for line in render.offset_translation(plan):
        click.echo(line)


@cli.group()
def offsets() -> None:
    """Consumer group offsets across clusters."""


@offsets.command("translate")
@_offsets_options
@click.pass_obj
def offsets_translate(obj: dict[str, bool], config_file: Path, group: str, source: str, target: str,
                      as_json: bool) -> None:
    """Per partition: the group's committed offset on --from, where it resumes on --to, the lag there."""

    def action() -> int:
        from sparkmirror import client

        _print_translation(client.translate_offsets(_load(config_file, ())[0], group, source, target), as_json)
        return ExitStatus.SUCCESS

    _guard(action, obj["traceback"])


def _move_command(name: str, doc: str) -> None:
    @cli.command(name, help=doc)
    @_offsets_options
    @click.option("--apply", is_flag=True, help="Commit the offsets on --to (default: only show the plan).")
    @click.option("--allow-untranslated", is_flag=True,
                  help="Apply even if some partitions cannot be translated (they start at auto.offset.reset).")
    @click.pass_obj
    def command(obj: dict[str, bool], config_file: Path, group: str, source: str, target: str, as_json: bool,
                apply: bool, allow_untranslated: bool) -> None:
        def action() -> int:
            from sparkmirror import client

            move = getattr(client, name)
            plan = move(_load(config_file, ())[0], group, source, target, apply=apply,
                        allow_untranslated=allow_untranslated)
            _print_translation(plan, as_json)
            if not as_json:
                click.echo(f"committed on '{target}' for group '{group}'" if plan.applied
                           else "dry run: nothing changed; add --apply to commit these offsets")
            return ExitStatus.SUCCESS

        _guard(action, obj["traceback"])


_move_command("failover", "Move consumer group --group from cluster --from (possibly down) to --to: show where "
                          "each partition resumes, what it re-reads and what was not replicated; --apply commits "
                          "the offsets on --to, refusing while the group has active members there.")
_move_command("failback", "Return consumer group --group from --from (where it failed over to) to the recovered "
                          "cluster --to, through the reverse of the flow that copied its topics; --apply commits.")


@cli.command()
@click.option("--records", default=200_000, show_default=True, help="Records to produce on cluster A.")
@click.option("--partitions", default=6, show_default=True, help="Partitions of the demo topic.")
@click.option("--value-size", default=512, show_default=True, help="Bytes per record value.")
@click.pass_obj
def demo(obj: dict[str, bool], records: int, partitions: int, value_size: int) -> None:
    """Start two local clusters, replicate a sample topic A -> B, print the per-partition result."""

    def action() -> int:
        from sparkmirror.cli.demo import run_demo

        ok = run_demo(records=records, partitions=partitions, value_size=value_size, out=click.echo)
        return ExitStatus.SUCCESS if ok else ExitStatus.MISMATCH

    _guard(action, obj["traceback"])


@cli.command()
@click.pass_obj
def setup(obj: dict[str, bool]) -> None:
    """Check Java, resolve the pinned Kafka and Spark connector jars, build the record path and the class archive."""

    def action() -> int:
        from sparkmirror.jars import ensure_all
        from sparkmirror.pipeline.class_archive import ensure

        for group, folder in ensure_all().items():
            click.echo(f"{group}: {len(list(folder.glob('*.jar')))} jars in {folder}")
        archive = ensure()
        click.echo(f"Spark driver class archive: {archive}" if archive else
                   "Spark driver class archive: none (sessions start without one; see the warning above)")
        return ExitStatus.SUCCESS

    _guard(action, obj["traceback"])


def main() -> None:
    cli(prog_name="sparkmirror")

