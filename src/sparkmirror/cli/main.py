"""`sparkmirror` command. All exception -> exit code mapping happens here, in one place."""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import click

from sparkmirror.cli.exit_codes import ExitStatus
from sparkmirror.errors import (
    ClusterUnreachableError,
    ConfigError,
    SparkmirrorError,
)

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


def _split_aliases(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(a for v in values for a in v.replace(",", " ").split())


@cli.command()
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="An MM2 properties file (connect-mirror-maker.properties).")
@click.option("--clusters", multiple=True,
              help="Run only the flows that target these cluster aliases (MM2's --clusters).")
@click.option("--state-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("sparkmirror-state"),
              show_default=True, help="Where Spark keeps each flow's progress (checkpoints).")
@click.pass_obj
def run(obj: dict[str, bool], config_path: Path, clusters: tuple[str, ...], state_dir: Path) -> None:
    """Replicate the enabled flows of CONFIG until stopped (SIGTERM / Ctrl-C stop cleanly)."""

    def action() -> int:
        from sparkmirror.config.mm2 import load_config  # noqa: PLC0415 - keep --help fast
        from sparkmirror.runtime.supervisor import Supervisor  # noqa: PLC0415

        config = load_config(config_path)
        if config.unknown_keys:
            logger.warning("ignoring keys sparkmirror does not use: %s", ", ".join(config.unknown_keys))
        supervisor = Supervisor(config, state_dir, target_clusters=_split_aliases(clusters) or None)
        if not supervisor.flows:
            raise ConfigError(["no flow is enabled; set e.g. 'A->B.enabled = true'"], config.source)
        signal.signal(signal.SIGTERM, lambda *_: supervisor.stop())
        try:
            supervisor.start()
            supervisor.wait()
        finally:
            supervisor.shutdown()
        return ExitStatus.SUCCESS

    _guard(action, obj["traceback"])


@cli.command()
@click.option("--records", default=200_000, show_default=True, help="Records to produce on cluster A.")
@click.option("--partitions", default=6, show_default=True, help="Partitions of the demo topic.")
@click.option("--value-size", default=512, show_default=True, help="Bytes per record value.")
@click.pass_obj
def demo(obj: dict[str, bool], records: int, partitions: int, value_size: int) -> None:
    """Start two local clusters, replicate a sample topic A -> B, print the per-partition result."""

    def action() -> int:
        from sparkmirror.embedded.demo import run_demo  # noqa: PLC0415

        ok = run_demo(records=records, partitions=partitions, value_size=value_size, out=click.echo)
        return ExitStatus.SUCCESS if ok else ExitStatus.MISMATCH

    _guard(action, obj["traceback"])


@cli.command()
@click.pass_obj
def setup(obj: dict[str, bool]) -> None:
    """Check Java and resolve the pinned Kafka and Spark connector jars into the cache."""

    def action() -> int:
        from sparkmirror.embedded.jars import ensure_all  # noqa: PLC0415

        for group, folder in ensure_all().items():
            click.echo(f"{group}: {len(list(folder.glob('*.jar')))} jars in {folder}")
        return ExitStatus.SUCCESS

    _guard(action, obj["traceback"])


def main() -> None:
    cli(prog_name="sparkmirror")

