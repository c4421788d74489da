"""`sparkmirror verify --config F`: the copy compared with its source record by record; exit 0 when whole."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from sparkmirror.cli.common import config_option, guard, load
from sparkmirror.cli.exit_codes import ExitStatus
from sparkmirror.cli.render import table

if TYPE_CHECKING:  # imported where used, so that `sparkmirror --help` stays fast
    from sparkmirror.offsets.verification import FlowVerdict, VerifyReport

_SHOWN_PER_FLOW = 20  # differences printed per flow in the table (all are in --json, up to its own cap)


def flow_lines(flow: FlowVerdict) -> list[str]:
    counts = flow.counts
    found = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n) or "nothing differs"
    lines = [f"flow {flow.flow}: {'whole' if flow.whole else 'NOT whole'}; {found}"]
    lines += [f"  note: {n}" for n in flow.notes]
    header = ("topic", "partition", "source range", "target range", "compared", "missing", "extra", "duplicate",
              "changed", "out of order", "not copied yet")
    rows = [(p.topic, str(p.partition), f"{p.source_from}-{p.source_to}", f"{p.target_from}-{p.target_to}",
             f"{p.source_records}/{p.target_records}", *(str(p.counts[k]) for k in
                                                         ("missing", "extra", "duplicate", "changed", "out of order")),
             str(p.not_copied_yet)) for p in flow.partitions]
    lines += table(header, rows)
    shown = 0
    for p in flow.partitions:
        lines += [f"  note: {p.topic}-{p.partition}: {n}" for n in p.notes]
        for d in p.differences:
            if shown == _SHOWN_PER_FLOW:
                lines.append("  ... (all of them: --json)")
                break
            shown += 1
            where = ", ".join(x for x in (
                f"source {p.topic}-{p.partition}@{d.source_offset}" if d.source_offset is not None else "",
                f"target {p.remote_topic}-{p.partition}@{d.target_offset}" if d.target_offset is not None else "")
                if x)
            lines.append(f"  {d.kind}: {where}{'; ' + d.note if d.note else ''}")
    return lines


def report_lines(report: VerifyReport) -> list[str]:
    lines = [line for flow in report.flows for line in flow_lines(flow)] or ["no flow is enabled"]
    lines += [f"note: {n}" for n in report.notes]
    lines.append(f"{report.records} records read in {report.seconds:.1f} s ({report.records_per_s:,.0f} records/s)")
    return lines


@click.command()
@config_option
@click.option("--flow", "flows", multiple=True, help="A flow to verify (A->B); repeat for more. Default: all enabled.")
@click.option("--topic", "topics", multiple=True, help="Source topics to verify (shell patterns); repeat for more.")
@click.option("--from-offset", type=click.IntRange(min=0), default=None,
              help="Compare each source partition from this offset on (default: its log start).")
@click.option("--to-end", is_flag=True,
              help="Compare up to the source's end offsets: records never copied count as missing (default: up to "
                   "what the offset syncs say was copied, so a live flow's lag is no difference).")
@click.option("--sample", type=click.FloatRange(min=0, max=1, min_open=True), default=None,
              help="Check a random fraction of each partition's records (0.01: about one in 100), the same records "
                   "on both sides.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
@click.pass_obj
def verify(obj: dict[str, bool], config_file: Path, flows: tuple[str, ...], topics: tuple[str, ...],
           from_offset: int | None, to_end: bool, sample: float | None, as_json: bool) -> None:
    """Compare each flow's source records with the records on its target, partition by partition (a digest of
    key, value, headers and timestamp, after the flow's SQL rules): missing, extra, duplicated, changed and
    out-of-order records, with their offsets. Reads only; runs beside a live flow. Exit code 0 when every copy
    is whole, 4 when something differs."""
    def action() -> int:
        from sparkmirror.cli.progress_display import ProgressDisplay, duration
        from sparkmirror.pipeline.verification import task_progress
        from sparkmirror.verification import verify as run_verify

        config, _, _ = load(config_file, ())
        shown = {"step": "starting Spark", "spark": None, "began": time.monotonic()}

        def render() -> list[str]:
            done, total = task_progress(shown["spark"]) if shown["spark"] is not None else (0, 0)
            tasks = f"; Spark tasks {done}/{total}" if total else ""
            return [f"verify: {shown['step']}{tasks}; {duration(time.monotonic() - shown['began'])}"]

        def step(line: str) -> None:
            shown["step"] = line
            if display is not None and not display.active:
                click.echo(line, err=True)

        display = ProgressDisplay(render) if not as_json else None
        with display or contextlib.nullcontext():
            report = run_verify(config, flows, topics, to_end, from_offset, sample, progress=step,
                                on_session=lambda spark: shown.update(spark=spark))
        if as_json:
            click.echo(json.dumps(report.to_json(), indent=2))
        else:
            for line in report_lines(report):
                click.echo(line)
        return ExitStatus.SUCCESS if report.whole else ExitStatus.MISMATCH

    guard(action, obj["traceback"])
