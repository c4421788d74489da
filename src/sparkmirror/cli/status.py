"""`sparkmirror status --config F [--json]`: each flow's state, lag and offset syncs, from the clusters alone."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from sparkmirror.cli.common import config_option, guard, load
from sparkmirror.cli.exit_codes import ExitStatus
from sparkmirror.cli.render import table

if TYPE_CHECKING:  # imported where used, so that `sparkmirror --help` stays fast
    from sparkmirror.offsets.flow_report import FlowReport, StatusReport


def _cell(value: object) -> str:
    return "-" if value is None else str(value)


def _seconds(value: float | None) -> str:
    return "?" if value is None else f"{value:.1f}"


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def flow_lines(flow: FlowReport) -> list[str]:
    """One flow: its state and lag, a row per source partition, then its groups' latest checkpoints."""
    lag = ("lag unknown" if flow.lag_records is None
           else f"lag {flow.lag_records} records, {_seconds(flow.lag_seconds)} s")
    runs = ("" if flow.runs_in is None else f"; runs in {flow.runs_in}" if flow.runs_in
            else "; no sparkmirror process runs it")
    lines = [f"flow {flow.flow}: {flow.state}; {lag}; {flow.throughput:.1f} records/s "
             f"(measured {_when(flow.measured_ms)}){runs}"]
    lines += [f"  unreachable: {u.error}" for u in flow.unreachable]
    if flow.removed_before_copy:
        lines.append(f"  removed before copy: {flow.removed_before_copy} records were removed at the source "
                     f"(retention, DeleteRecords) before the flow copied them; the target will never have them")
    header = ("topic", "partition", "state", "end", "replicated to", "lag", "lag s", "records/s", "last offset sync",
              *(("removed before copy",) if flow.removed_before_copy else ()))
    rows = [(p.topic, str(p.partition), p.state, _cell(p.end_offset), _cell(p.position), _cell(p.lag_records),
             "-" if p.lag_records is None else _seconds(p.lag_seconds), f"{p.throughput:.1f}",
             "-" if p.last_sync is None else f"{p.last_sync.upstream_offset} -> {p.last_sync.downstream_offset}, "
                                             f"{p.last_sync.age_s:.0f} s ago",
             *((str(p.removed_before_copy),) if flow.removed_before_copy else ()))
            for p in flow.partitions]
    lines += table(header, rows) if rows else ["  (no source partition to replicate)"]
    if any(u.cluster == flow.target for u in flow.unreachable):
        lines.append(f"  checkpoints on {flow.target}: not read ({flow.target} did not answer)")
    elif flow.groups:
        lines.append(f"  checkpoints on {flow.target}:")
        lines += table(("group", "partitions", "newest checkpoint"), [
            (g.group, str(len(g.partitions)), f"{_when(g.timestamp_ms)} ({g.age_s:.0f} s ago)") for g in flow.groups])
    else:
        lines.append(f"  checkpoints on {flow.target}: none")
    lines += [f"  note: {n}" for n in flow.notes]
    return lines


def report_lines(report: StatusReport) -> list[str]:
    lines = [line for flow in report.flows for line in flow_lines(flow)] or ["no flow is enabled"]
    for p in report.pairs:
        beat = (f"newest beat {_when(p.last_beat_ms)} ({p.age_s:.1f} s ago)" if p.last_beat_ms is not None
                and p.age_s is not None else p.error or "no beat in its target's heartbeats topic")
        lines.append(f"heartbeats {p.source}->{p.target} (no flow, heartbeats only): {p.state}; {beat}")
    return lines


@click.command()
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
@click.pass_obj
def status(obj: dict[str, bool], config_file: Path, as_json: bool) -> None:
    """Per enabled flow and source partition: state, lag (records, seconds), throughput, last offset sync,
    and each group's last checkpoint. Read from the clusters alone, so it also answers when sparkmirror is
    stopped or runs elsewhere. Exit code 3 (after the report) when a cluster did not answer."""
    def action() -> int:
        from sparkmirror.mirror_status import read_status

        config, flows, _ = load(config_file, ())
        report = read_status(config, flows)
        if as_json:
            click.echo(json.dumps(report.to_json(), indent=2))
        else:
            for line in report_lines(report):
                click.echo(line)
        return ExitStatus.CLUSTER_UNREACHABLE if report.unreachable else ExitStatus.SUCCESS

    guard(action, obj["traceback"])
