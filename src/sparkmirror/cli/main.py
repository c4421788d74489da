"""`sparkmirror` command: its group and the short commands; `run` and `status` have modules of their own.

Exceptions map to exit codes in one place, `cli/common.guard`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from sparkmirror.cli.common import MirrorMakerCommand, config_argument, config_option, config_path, guard, load
from sparkmirror.cli.exit_codes import ExitStatus
from sparkmirror.cli.exiting import EXIT_GRACE_S, exit_status, exit_within
from sparkmirror.cli.logs import LOG_FORMATS, setup_logging
from sparkmirror.cli.run import run
from sparkmirror.cli.status import status
from sparkmirror.cli.verify import verify
from sparkmirror.errors import ConfigError

if TYPE_CHECKING:  # imported where used, so that `sparkmirror --help` stays fast
    from sparkmirror.client import OffsetTranslation
    from sparkmirror.config.mm2 import MirrorMakerConfig
    from sparkmirror.config.model import FlowConfig
    from sparkmirror.takeover import OffsetsPlan


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Debug logging, including the Kafka client's own.")
@click.option("--traceback", is_flag=True, help="Show Python tracebacks instead of one-line errors.")
@click.option("--log-format", type=click.Choice(LOG_FORMATS), default="text", show_default=True,
              envvar="SPARKMIRROR_LOG_FORMAT", help="Log records as text lines or as JSON lines (one object each).")
@click.pass_context
def cli(ctx: click.Context, verbose: bool, traceback: bool, log_format: str) -> None:
    """Cross-cluster replication for Apache Kafka, MirrorMaker 2 compatible, on Apache Spark."""
    setup_logging(verbose, log_format)
    ctx.obj = {"traceback": traceback}


@cli.command(cls=MirrorMakerCommand)
@config_argument
@click.pass_obj
def validate(obj: dict[str, bool], config_file: Path | None, clusters: tuple[str, ...]) -> None:
    """Check CONFIG_FILE: every problem at once, each with its key and line; exit code 2 on errors."""

    def action() -> int:
        config, flows, targets = load(config_path(config_file, None), clusters)
        if any(f.sql_rules for f in flows):
            _check_sql_rules(config, flows)
        beats = config.heartbeat_only_pairs(targets)
        click.echo(f"{config.source}: valid; clusters {', '.join(config.clusters)}; "
                   f"flows to run: {', '.join(f.name for f in flows) or '(none)'}")
        if beats:
            click.echo(f"heartbeats only (MM2's cluster pairs): {', '.join(p.name for p in beats)}")
        return ExitStatus.SUCCESS

    guard(action, obj["traceback"])


@cli.command(cls=MirrorMakerCommand)
@config_argument
@click.option("--offline", is_flag=True, help="Only the resolved settings; do not contact the clusters.")
@click.pass_obj
def plan(obj: dict[str, bool], config_file: Path | None, clusters: tuple[str, ...], offline: bool) -> None:
    """Show what `run` would do: resolved flows, and with reachable clusters each source topic, its remote
    name, partitions and the configs it will be created with, and the topic ACLs it would create. Changes
    nothing."""

    def action() -> int:
        from sparkmirror.cli import render

        config, flows, targets = load(config_path(config_file, None), clusters)
        for line in render.config_summary(config, flows, config.heartbeat_only_pairs(targets)):
            click.echo(line)
        if offline or not flows:
            return ExitStatus.SUCCESS
        from sparkmirror.runtime.supervisor import Supervisor

        supervisor = Supervisor(config, Path("."), target_clusters=targets, check_state=False)
        supervisor.check_clusters()
        for flow in flows:
            topics = supervisor.plan_flow(flow)
            for line in render.topic_plan(flow, topics):
                click.echo(line)
            if flow.sync_topic_acls.enabled:
                for line in render.acl_plan(flow, supervisor.plan_acls(flow, topics)):
                    click.echo(line)
            if flow.schemas == "rewrite":
                for line in render.subject_plan(flow, supervisor.plan_subjects(flow, topics)):
                    click.echo(line)
        return ExitStatus.SUCCESS

    guard(action, obj["traceback"])


def _check_sql_rules(config: MirrorMakerConfig, flows: list[FlowConfig]) -> None:
    """Spark compiles the flows' SQL rules (a local session, started for this only): each expression that does
    not parse or type-check is a problem naming its key, with Spark's message."""
    from sparkmirror.pipeline.session import build_spark_session, stop_quietly
    from sparkmirror.pipeline.sql_rules import flow_problems

    spark = build_spark_session(config.spark)
    try:
        problems = flow_problems(spark, flows)
    finally:
        stop_quietly(spark, "Spark session")
    if problems:
        raise ConfigError(problems, config.source)


@cli.command(cls=MirrorMakerCommand)
@config_argument
@click.option("--sample", default=10, show_default=True, type=click.IntRange(1, 10_000),
              help="Records read from the start of each partition of each selected topic.")
@click.pass_obj
def preview(obj: dict[str, bool], config_file: Path | None, clusters: tuple[str, ...], sample: int) -> None:
    """Show what the flows' SQL rules do to real records: for the first --sample records of each partition of
    every topic a flow selects, kept or dropped, and each masked field before and after. Writes nothing."""

    def action() -> int:
        from sparkmirror.cli import render
        from sparkmirror.pipeline.options import source_options
        from sparkmirror.pipeline.session import build_spark_session, stop_quietly
        from sparkmirror.pipeline.sql_rules import flow_problems
        from sparkmirror.pipeline.sql_rules import preview as preview_records
        from sparkmirror.runtime.supervisor import Supervisor

        config, flows, targets = load(config_path(config_file, None), clusters)
        shaped = [f for f in flows if f.sql_rules]
        if not shaped:
            click.echo("no flow to run has SQL rules (sparkmirror.filter, sparkmirror.mask.*, "
                       "sparkmirror.drop.headers): nothing to preview")
            return ExitStatus.SUCCESS
        supervisor = Supervisor(config, Path("."), target_clusters=targets, check_state=False)
        supervisor.check_clusters()
        spark = build_spark_session(config.spark)
        try:
            problems = flow_problems(spark, shaped)
            if problems:
                raise ConfigError(problems, config.source)
            for flow in shaped:
                topics = supervisor.plan_flow(flow)
                offsets = {t: dict.fromkeys(range(n), -2) for t, n in topics.source_partitions.items()}
                if not offsets:
                    click.echo(f"flow {flow.name}: no topic selected")
                    continue
                options = {**source_options(flow.source_consumer, offsets, describe=flow.source_consumer.origin),
                           "endingOffsets": "latest"}
                for line in render.sql_preview(flow, preview_records(spark, options, flow.sql_rules, sample)):
                    click.echo(line)
        finally:
            stop_quietly(spark, "Spark session")
        return ExitStatus.SUCCESS

    guard(action, obj["traceback"])


def _offsets_options(command: Callable) -> Callable:
    for decorator in reversed([
        config_option,
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

        _print_translation(client.translate_offsets(load(config_file, ())[0], group, source, target), as_json)
        return ExitStatus.SUCCESS

    guard(action, obj["traceback"])


@cli.command("drill")
@_offsets_options
@click.pass_obj
def drill(obj: dict[str, bool], config_file: Path, group: str, source: str, target: str, as_json: bool) -> None:
    """A failover drill that changes nothing: per partition of --group, the record it would read first on --to
    (at its translated offset) found among those it would read next on --from: "would re-read N, would miss M".
    Exit code 0 when it would miss nothing, 4 otherwise."""

    def action() -> int:
        from sparkmirror import client

        report = client.drill(load(config_file, ())[0], group, source, target)
        if as_json:
            click.echo(json.dumps(report.to_json(), indent=2))
        else:
            for warning in report.warnings:
                click.echo(f"warning: {warning}")
            for p in report.partitions:
                verdict = (f"would re-read {p.reread}, would miss {p.miss}" if p.miss is not None
                           else "unknown")
                lag = f"; {p.not_replicated} record(s) not replicated yet" if p.not_replicated else ""
                click.echo(f"{p.topic}-{p.partition}: committed {p.committed} on {source} -> "
                           f"{p.remote_topic or '-'}@{'-' if p.translated is None else p.translated} on {target}: "
                           f"{verdict}{lag}{'; ' + p.note if p.note else ''}")
            click.echo(f"drill of group '{group}': nothing committed, nothing moved")
        return ExitStatus.SUCCESS if report.ok else ExitStatus.MISMATCH

    guard(action, obj["traceback"])


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
            plan = move(load(config_file, ())[0], group, source, target, apply=apply,
                        allow_untranslated=allow_untranslated)
            _print_translation(plan, as_json)
            if not as_json:
                click.echo(f"committed on '{target}' for group '{group}'" if plan.applied
                           else "dry run: nothing changed; add --apply to commit these offsets")
            return ExitStatus.SUCCESS

        guard(action, obj["traceback"])


_move_command("failover", "Move consumer group --group from cluster --from (possibly down) to --to: show where "
                          "each partition resumes, what it re-reads and what was not replicated; --apply commits "
                          "the offsets on --to, refusing while the group has active members there.")
_move_command("failback", "Return consumer group --group from --from (where it failed over to) to the recovered "
                          "cluster --to, through the reverse of the flow that copied its topics; --apply commits.")


def _takeover_options(command: Callable) -> Callable:
    for decorator in reversed([
        config_option,
        click.option("--from", "source", required=True, metavar="ALIAS", help="The flow's source cluster."),
        click.option("--to", "target", required=True, metavar="ALIAS", help="The flow's target cluster."),
        click.option("--apply", is_flag=True, help="Write the plan (default: only show it)."),
        click.option("--force", is_flag=True, help="Go on even while the remote topics are being written."),
        click.option("--offsets-topic", metavar="TOPIC", help="MM2's Connect offsets topic on --to (default: "
                                                              "dedicated mode's: the file's <to>.offset.storage.topic, "
                                                              "else mm2-offsets.<from>.internal)."),
        click.option("--connector", default="MirrorSourceConnector", show_default=True,
                     help="The name of MM2's MirrorSourceConnector (on a Connect cluster, the name it was posted "
                          "as)."),
        click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table."),
        click.pass_obj,
    ]):
        command = decorator(command)
    return command


def _or_dash(value: int | None) -> str:
    return "-" if value is None else str(value)


def _echo_plan(plan: OffsetsPlan, lines: list[str], as_json: bool) -> int:
    """A take-over's or hand-back's plan: its JSON, or its notes and then `lines`."""
    if as_json:
        click.echo(json.dumps(plan.to_json(), indent=2))
        return ExitStatus.SUCCESS
    for line in (*(f"note: {note}" for note in plan.notes), *lines):
        click.echo(line)
    return ExitStatus.SUCCESS


@cli.command("takeover")
@_takeover_options
def takeover(obj: dict[str, bool], config_file: Path, source: str, target: str, apply: bool, force: bool,
             offsets_topic: str | None, connector: str, as_json: bool) -> None:
    """Continue a stopped MM2's copy of flow --from -> --to: per partition where MM2 got to (its Connect offsets
    and offset syncs), where sparkmirror starts and how many records it may copy again; --apply commits the
    starts, which `sparkmirror run` then continues from. Refused (exit 1) while the remote topics are written."""

    def action() -> int:
        from sparkmirror import takeover as takeover_module

        plan = takeover_module.take_over(load(config_file, ())[0], source, target, apply=apply, force=force,
                                         connector=connector, offsets_topic=offsets_topic)
        lines = []
        for p in plan.partitions:
            sync = "-" if p.sync is None else f"{p.sync.upstream_offset}->{p.sync.downstream_offset}"
            lines.append(f"{p.topic}-{p.partition} -> {p.remote_topic}: mm2 committed {_or_dash(p.committed)}, "
                         f"newest sync {sync}, remote end {p.remote_end}: start at {p.start} ({p.basis}), at most "
                         f"{p.duplicates} copied again")
        done = ("committed: `sparkmirror run` continues from here" if plan.applied
                else "dry run: nothing changed; add --apply to commit these starts")
        lines.append(f"flow {plan.flow}: {len(plan.partitions)} partition(s), at most {plan.duplicates} record(s) "
                     f"copied again; {done}")
        return _echo_plan(plan, lines, as_json)

    guard(action, obj["traceback"])


@cli.command("handback")
@_takeover_options
def handback(obj: dict[str, bool], config_file: Path, source: str, target: str, apply: bool, force: bool,
             offsets_topic: str | None, connector: str, as_json: bool) -> None:
    """The way back to MM2 for flow --from -> --to: per partition sparkmirror's position and MM2's; --apply
    writes sparkmirror's into MM2's Connect offsets, where MM2 continues from when it starts. Stop sparkmirror
    first: refused (exit 1) while the remote topics are written."""

    def action() -> int:
        from sparkmirror import takeover as takeover_module

        plan = takeover_module.hand_back(load(config_file, ())[0], source, target, apply=apply, force=force,
                                         connector=connector, offsets_topic=offsets_topic)
        lines = [f"{p.topic}-{p.partition}: sparkmirror at {_or_dash(p.position)}, mm2 committed "
                 f"{_or_dash(p.committed)}" for p in plan.partitions]
        lines.append(f"flow {plan.flow}: " + (f"written to '{plan.offsets_topic}': start MM2 to continue from here"
                                              if plan.applied else "dry run: nothing changed; add --apply to write "
                                                                   "these positions for MM2"))
        return _echo_plan(plan, lines, as_json)

    guard(action, obj["traceback"])


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

    guard(action, obj["traceback"])


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

    guard(action, obj["traceback"])


@cli.command("submit-args")
@click.option("--scheme", type=click.Choice(["local"]), default=None,
              help="Name the files as local:// URIs: they are already on every node (the container image's own).")
@click.pass_obj
def submit_args(obj: dict[str, bool], scheme: str | None) -> None:
    """Print spark-submit's arguments for sparkmirror (jars, Python, log settings, application file):
    spark-submit --master <url> $(sparkmirror submit-args) run mm2.properties"""

    def action() -> int:
        import shlex

        from sparkmirror.pipeline.submit import submit_arguments

        click.echo(shlex.join(submit_arguments(scheme or "")))
        return ExitStatus.SUCCESS

    guard(action, obj["traceback"])


cli.add_command(run)
cli.add_command(status)
cli.add_command(verify)


def main() -> None:
    from sparkmirror.pipeline.class_host import ensure_class_host

    ensure_class_host()  # where a file's own MM2 classes run, started only if one is named
    try:
        cli(prog_name="sparkmirror")
    except SystemExit as done:  # click ends every command this way, with its exit status
        exit_within(EXIT_GRACE_S, exit_status(done.code))
        raise
    except BaseException:  # --traceback lets errors through
        exit_within(EXIT_GRACE_S, 1)
        raise

