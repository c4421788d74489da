"""Transforms mode: what shaping records on the way costs.

Throughput: one backlog whose records all carry an `ssn` header and one in ten a `skip` mark, copied by
sparkmirror as it is (the baseline), by sparkmirror with MM2's chain DropHeaders(ssn) + Filter(HasHeaderKey skip),
and by MM2 with the same chain; each into remote topics of its own. Figures are source records per second (the
filtered ones are read and passed over too), so the ratios compare the same work.

Latency: sparkmirror in Real-Time Mode at the latency mode's rate, without and with a SQL filter that keeps every
record (`sparkmirror.filter`, evaluated per record in the JVM).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import replace

from benchmarks import dataset
from benchmarks.latency import measure_latency
from benchmarks.replicators import MirrorMakerRunner, Run, SparkmirrorRunner, measure_copy

PLAIN, SHAPED, MM2_SHAPED = "sparkmirror", "sparkmirror-transforms", "mm2-transforms"
RTM_PLAIN, RTM_FILTER = "sparkmirror-real-time", "sparkmirror-real-time-sql-filter"


def chain(flow: str) -> str:
    """MM2's transforms as a flow's keys (MM2 drops top-level `transforms.<alias>.*`, so per flow for both)."""
    return (f"{flow}.transforms = dropPii, skip\n"
            f"{flow}.transforms.dropPii.type = org.apache.kafka.connect.transforms.DropHeaders\n"
            f"{flow}.transforms.dropPii.headers = {dataset.SSN_HEADER}\n"
            f"{flow}.transforms.skip.type = org.apache.kafka.connect.transforms.Filter\n"
            f"{flow}.transforms.skip.predicate = marked\n{flow}.predicates = marked\n"
            f"{flow}.predicates.marked.type = org.apache.kafka.connect.transforms.predicates.HasHeaderKey\n"
            f"{flow}.predicates.marked.name = {dataset.SKIP_HEADER}\n")


# Keeps every latency record; `headers` is null on a record without any, hence the coalesce.
SQL_FILTER = "length(value) > 0 AND NOT coalesce(array_contains(headers.key, 'skip'), false)"


def run_transforms(args: argparse.Namespace, src: str, tgt: str, figures: Callable, create: Callable,
                   admins: Callable, log: Callable, timeout_s: float, result: dict) -> None:
    src_admin, tgt_admin = admins(src, tgt)
    create(src_admin, {"shaped": args.partitions})
    log(f"transforms: loading {args.records:,} records into 'shaped' (ssn header, one in ten marked skip)")
    dataset.load(src, ["shaped"], args.partitions, args.records, args.record_size, args.seed, shaped=True)
    kept = args.records - dataset.skipped(args.records)
    # Each copy on these clusters runs slower than the one before it (2026-11-27: the same plain copy at 105,800
    # records/s first and 83,500 third, its CPU 23.1 -> 27.8 s), so the rows run in the order plain, chain, MM2,
    # chain, plain: each sparkmirror row is the sum of a copy before and a copy after MM2's, so a drift over the
    # repeat weighs on every row alike.
    def sparkmirror(alias: str, settings: str = "") -> SparkmirrorRunner:
        return SparkmirrorRunner(src, tgt, args.cores, args.workdir, source_alias=alias, settings=settings)

    order = ((PLAIN, sparkmirror("smsrc"), args.records), (SHAPED, sparkmirror("shsrc", chain("shsrc->tgt")), kept),
             (MM2_SHAPED, MirrorMakerRunner(src, tgt, args.cores, args.workdir, source_alias="mm2shsrc",
                                            settings=chain("mm2shsrc->tgt"), name=MM2_SHAPED), kept),
             (SHAPED, sparkmirror("sh2src", chain("sh2src->tgt")), kept), (PLAIN, sparkmirror("sm2src"), args.records))
    runs: dict[str, list] = {}
    for name, runner, expected in order:
        if name == MM2_SHAPED and "mm2" not in args.replicators:
            continue
        log(f"{name}: replicating the backlog")
        run = measure_copy(runner, "shaped", {f"{runner.source_alias}.shaped": args.partitions}, expected,
                           tgt_admin, timeout_s)
        log(f"{name}: {figures(run, args.records, args.record_size)}")
        runs.setdefault(name, []).append((run, expected))
    rows = result.setdefault("transforms", {})
    for name, done in runs.items():
        rows[name] = {**figures(combined([r for r, _ in done]), args.records * len(done), args.record_size),
                      "records_written": done[0][1], "copies": len(done)}
    # Latency in the same balanced order (plain, filter, filter, plain), each copy on a topic of its own; a row is
    # the mean of its two copies' percentiles (max: the larger), its CPU their sum.
    sql = f"rtsrc->tgt.sparkmirror.filter = {SQL_FILTER}\n"
    latencies: dict[str, list[dict]] = {}
    for i, (name, settings) in enumerate(((RTM_PLAIN, ""), (RTM_FILTER, sql), (RTM_FILTER, sql), (RTM_PLAIN, ""))):
        topic = f"latency-{name}-{i}"
        create(src_admin, {topic: args.latency_partitions})
        runner = SparkmirrorRunner(src, tgt, args.cores, args.workdir, "real-time", source_alias="rtsrc",
                                   settings=settings)
        log(f"{name}: latency at {args.latency_rate_mb} MB/s for {args.latency_seconds:.0f} s")
        lat = measure_latency(runner, src, tgt, topic, args.latency_partitions, args.latency_rate_mb,
                              args.latency_seconds, args.record_size, args.latency_warmup_seconds)
        log(f"{name}: {lat}")
        latencies.setdefault(name, []).append(lat)
    for name, runs in latencies.items():
        rows[name] = {"p50_ms": round(sum(r["p50_ms"] for r in runs) / len(runs), 1),
                      "p99_ms": round(sum(r["p99_ms"] for r in runs) / len(runs), 1),
                      "max_ms": max(r["max_ms"] for r in runs), "cpu_s": round(sum(r["cpu_s"] for r in runs), 2),
                      "copies": len(runs)}


def combined(runs: list[Run]) -> Run:
    """Copies of the same backlog as one: their wall and CPU time summed, the first record's time and the peak
    memory their worst."""
    first = runs[0]
    usage = replace(first.usage, cpu_s=round(sum(r.usage.cpu_s for r in runs), 2),
                    peak_rss_mb=max(r.usage.peak_rss_mb for r in runs))
    return replace(first, wall_s=round(sum(r.wall_s for r in runs), 2),
                   first_record_s=max((r.first_record_s for r in runs if r.first_record_s is not None), default=None),
                   usage=usage)


def ratios(result: dict) -> None:
    """`transforms_throughput_ratio_vs_plain` (≥ 0.9 wanted), `transforms_throughput_ratio_vs_mm2` (≥ 1.5) and
    `sql_filter_latency_p50_ratio` (Real-Time Mode p50 with the filter over without, ≤ 1.1)."""
    rows = result.get("transforms", {})

    def rate(name: str) -> float | None:
        return rows.get(name, {}).get("records_per_s")

    if rate(SHAPED) and rate(PLAIN):
        result["transforms_throughput_ratio_vs_plain"] = round(rate(SHAPED) / rate(PLAIN), 3)
    if rate(SHAPED) and rate(MM2_SHAPED):
        result["transforms_throughput_ratio_vs_mm2"] = round(rate(SHAPED) / rate(MM2_SHAPED), 3)
    p50 = rows.get(RTM_FILTER, {}).get("p50_ms"), rows.get(RTM_PLAIN, {}).get("p50_ms")
    if all(p50):
        result["sql_filter_latency_p50_ratio"] = round(p50[0] / p50[1], 3)
