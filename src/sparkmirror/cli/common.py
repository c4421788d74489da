"""What every `sparkmirror` command shares: loading a file with every problem reported, and the one mapping
of exceptions to exit codes."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from sparkmirror.cli.exit_codes import ExitStatus
from sparkmirror.errors import (
    ClientCredentialsError,
    ClusterAuthenticationError,
    ClusterUnreachableError,
    ConfigError,
    SparkmirrorError,
)

if TYPE_CHECKING:  # imported where used, so that `sparkmirror --help` stays fast
    from sparkmirror.config.client_settings import ClientSettings
    from sparkmirror.config.mm2 import MirrorMakerConfig
    from sparkmirror.config.model import FlowConfig

# A key or store that does not open with its password: the translation's wording (config/librdkafka/tls.py).


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


def guard(action: Callable[[], int | None], traceback: bool) -> None:
    try:
        code = action()
    except (SparkmirrorError, KeyboardInterrupt) as exc:
        if traceback:
            raise
        if not isinstance(exc, KeyboardInterrupt):
            click.echo(f"error: {exc}", err=True)
        sys.exit(int(_exit_status(exc)))
    sys.exit(int(code or ExitStatus.SUCCESS))


def split_aliases(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(a for v in values for a in v.replace(",", " ").split())


class MirrorMakerCommand(click.Command):
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


def config_argument(command: Callable) -> Callable:
    command = click.option("--clusters", multiple=True, metavar="ALIAS...",
                           help="Only the flows that target these cluster aliases (MM2's --clusters A B).")(command)
    return click.argument("config_file", required=False, type=click.Path(dir_okay=False, path_type=Path))(command)


# `--config FILE`, required: the commands that take the file by that name only (status, verify, offsets, drill)
config_option = click.option("--config", "config_file", required=True,
                             type=click.Path(dir_okay=False, path_type=Path), help="The MM2 properties file.")


def config_path(config_file: Path | None, config_option: Path | None) -> Path:
    path = config_file or config_option
    if path is None:
        raise click.UsageError("give the MM2 properties file, e.g. 'sparkmirror run mm2.properties'")
    return path


def load(path: Path, clusters: tuple[str, ...]
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
    targets = split_aliases(clusters) or None
    flows = config.enabled_flows(targets)
    problems = _check_clients(flows)
    if problems:
        raise _credentials_error(flows, problems) or ConfigError(problems, config.source)
    return config, flows, targets


def _check_clients(flows: list[FlowConfig]) -> list[str]:
    """What the load keeps for the flows that run: settings this version cannot honour, client settings
    librdkafka (or this build of it) cannot take, and consumer settings Spark's Kafka source refuses."""
    from sparkmirror.kafka.features import missing_features
    from sparkmirror.pipeline.options import source_options
    from sparkmirror.policy.plugged import check_class
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
        for spec in flow.custom_classes:  # the file's own MM2 classes: loaded and configured in their JVM
            found += _problems(lambda s=spec: check_class(s))
        problems += [p for p in dict.fromkeys(found) if p not in problems]
    return problems


def _credentials_error(flows: list[FlowConfig], problems: list[str]) -> ClientCredentialsError | None:
    """When every problem is a key or store its password does not open, the error for the first: a
    credentials problem (exit 5, as a refused login), naming the cluster and the password key to set."""
    clients = _clients_by_alias(flows)
    found = [next(((a, c.credential_problems[p]) for a, c in clients if p in c.credential_problems), None)
             for p in problems]
    if not found or None in found:
        return None
    alias, key = found[0]
    return ClientCredentialsError(alias, key, problems[0])


def _clients_by_alias(flows: list[FlowConfig]) -> list[tuple[str, ClientSettings]]:
    """Each flow's clients with the cluster they connect to."""
    return [pair for f in flows for pair in (
        (f.source, f.source_admin), (f.source, f.source_consumer), (f.target, f.target_admin),
        (f.target, f.target_producer), (f.offset_syncs_cluster, f.offset_syncs_producer),
        (f.target, f.heartbeats_producer), (f.target, f.target_consumer))]


def _problems(check: Callable[[], object]) -> list[str]:
    try:
        check()
    except ConfigError as exc:
        return exc.problems
    return []
