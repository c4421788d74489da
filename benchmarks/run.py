"""Benchmark sparkmirror against real MirrorMaker 2 and the target broker's own produce limit.

    .venv/bin/python -m benchmarks.run            # full run (see benchmarks/README.md)
    .venv/bin/python -m benchmarks.run --quick    # reduced dataset

Every replicator's copy is verified (target count == source count) before a figure is reported.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from benchmarks import dataset, schemas, transforms
from benchmarks.latency import measure_direct_latency, measure_latency
from benchmarks.metrics_cost import markdown as metrics_cost_markdown
from benchmarks.metrics_cost import run_metrics_cost
from benchmarks.mm2_offsets import CommittedSourceOffsets, untransactional_partitions
from benchmarks.replicators import (
    EXACTLY_ONCE_POSITIONS,
    MM2_EXACTLY_ONCE_ALIAS,
    CopyIncomplete,
    MirrorMakerRunner,
    Run,
    SparkmirrorRunner,
    committed_positions,
    exactly_once_runner,
    measure_copy,
    measure_limit,
    mm2_exactly_once_runner,
    spark_kafka_runner,
)
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import NewTopicSpec
from sparkmirror.pipeline import class_archive
from sparkmirror.testing.kafka_cluster import start_clusters

RESULTS = Path(__file__).parent / "results"
MODES = ("throughput", "metrics", "latency", "scale", "transforms", "schemas")
# `metrics` adds 2 x --metrics-reps copies, `transforms` three copies and two latency runs, `schemas` four copies and
# two schema registries: asked for by name
DEFAULT_MODES = ("throughput", "latency", "scale")
RUNNERS = {"mm2": MirrorMakerRunner, "sparkmirror": SparkmirrorRunner, "sparkmirror-exactly-once": exactly_once_runner,
           "mm2-exactly-once": mm2_exactly_once_runner, "sparkmirror-spark-kafka": spark_kafka_runner}
QUICK = {"records": 50_000, "latency_seconds": 5.0, "latency_warmup_seconds": 3.0, "scale_topics": 10,
         "scale_partitions": 5}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--records", type=int, default=2_000_000, help="backlog records (throughput and scale)")
    p.add_argument("--record-size", type=int, default=1024, help="value bytes per record")
    p.add_argument("--partitions", type=int, default=12, help="partitions of the throughput topic")
    p.add_argument("--cores", type=int, default=2, help="cores for sparkmirror (local[N]) = MM2 tasks.max")
    p.add_argument("--latency-rate-mb", type=float, default=5.0, help="latency mode produce rate, MB/s")
    p.add_argument("--latency-seconds", type=float, default=30.0, help="latency mode produce time")
    p.add_argument("--latency-partitions", type=int, default=None,
                   help="partitions of the latency topics (default: --partitions); with many, leave "
                        "sparkmirror-spark-kafka out of Real-Time Mode (it runs a task per partition)")
    p.add_argument("--latency-idle-seconds", type=float, default=0.0,
                   help="latency mode: after the measured records, the replicator's CPU this long with nothing "
                        "produced (idle_cpu_s_per_minute, latency_idle_cpu_ratio_vs_mm2)")
    p.add_argument("--latency-warmup-seconds", type=float, default=10.0,
                   help="latency mode: produce at the rate this long first; those records are reported apart "
                        "(startup_*), the figures are the rest's")
    p.add_argument("--repeats", type=int, default=1,
                   help="run the modes this many times, each on fresh clusters; the figures are the medians "
                        "and the ratios of each repeat are listed")
    p.add_argument("--scale-topics", type=int, default=100)
    p.add_argument("--scale-partitions", type=int, default=10)
    p.add_argument("--scale-records", type=int, default=None, help="scale backlog (default: --records)")
    p.add_argument("--modes", default=",".join(DEFAULT_MODES),
                   help=f"comma list of {', '.join(MODES)} (default: {', '.join(DEFAULT_MODES)})")
    p.add_argument("--replicators", default="mm2,sparkmirror,sparkmirror-exactly-once",
                   help=f"comma list of {', '.join(RUNNERS)}")
    p.add_argument("--latency-triggers", default="micro-batch,real-time",
                   help="sparkmirror trigger modes measured in latency mode (comma list)")
    p.add_argument("--metrics-reps", type=int, default=2,
                   help="metrics mode: backlog copies with metrics off and as many on, alternating the order")
    p.add_argument("--quick", action="store_true", help=f"reduced run: {QUICK}")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out", type=Path, default=RESULTS, help="folder for the JSON result")
    args = p.parse_args(argv)
    if args.quick:
        for key, value in QUICK.items():
            if getattr(args, key) == p.get_default(key):
                setattr(args, key, value)
    args.modes = [m for m in args.modes.split(",") if m]
    args.replicators = [r for r in args.replicators.split(",") if r]
    unknown = set(args.modes) - set(MODES) | set(args.replicators) - set(RUNNERS)
    if unknown:
        p.error(f"unknown mode or replicator: {', '.join(sorted(unknown))}")
    if "metrics" in args.modes and ("sparkmirror" not in args.replicators or args.metrics_reps < 1):
        p.error("the metrics mode needs the sparkmirror replicator and --metrics-reps of 1 or more")
    args.scale_records = args.scale_records or args.records
    args.latency_triggers = [m for m in args.latency_triggers.split(",") if m]
    args.latency_partitions = args.latency_partitions or args.partitions
    return args


def figures(run: Run, records: int, record_size: int) -> dict[str, float | None]:
    mb = records * (record_size + dataset.KEY_BYTES) / 1e6
    return {"records_per_s": round(records / run.wall_s, 1), "mb_per_s": round(mb / run.wall_s, 2),
            "wall_s": run.wall_s, "first_record_s": run.first_record_s, "cpu_s": run.usage.cpu_s,
            "cpu_s_per_million_records": round(run.usage.cpu_s / records * 1e6, 2),
            "peak_rss_mb": run.usage.peak_rss_mb}


def timeout_for(records: int) -> float:
    return 300 + records / 2_000  # generous: a stall is an error, slowness is a figure


def machine() -> dict[str, object]:
    """The machine, and whether sparkmirror's driver maps setup's class archive (its start-up differs by seconds)."""
    meminfo = Path("/proc/meminfo").read_text().splitlines()
    mem_kb = next(int(line.split()[1]) for line in meminfo if line.startswith("MemTotal"))
    return {"cores": os.cpu_count(), "memory_gib": round(mem_kb / 2**20, 1), "platform": platform.platform(),
            "python": platform.python_version(),
            "spark_driver_class_archive": bool(class_archive.driver_java_options())}


def log(msg: str) -> None:
    print(f"[{datetime.now(UTC):%H:%M:%S}] {msg}", flush=True)


def run_throughput(args: argparse.Namespace, src: str, tgt: str, runners: dict, result: dict) -> None:
    src_admin, tgt_admin = _admins(src, tgt)
    _create(src_admin, {"bench": args.partitions})
    log(f"loading {args.records:,} records of {args.record_size} B into 'bench' ({args.partitions} partitions)")
    load_s = dataset.load(src, ["bench"], args.partitions, args.records, args.record_size, args.seed)
    result["load_s"] = round(load_s, 1)
    _create(tgt_admin, {"limit": args.partitions})
    log(f"limit: {args.cores} ProducerPerformance(s) into the target with the writer's producer settings")
    run, tool_rate = measure_limit(tgt, "limit", args.records, args.record_size, tgt_admin, args.partitions,
                                   producers=args.cores)
    result["replicators"].setdefault("limit", {}).update(figures(run, args.records, args.record_size),
                                                         producer_perf_records_per_s=tool_rate)
    for name, runner in runners.items():
        log(f"{name}: replicating the backlog")
        remote = {f"{runner.source_alias}.bench": args.partitions}
        with copied_counter(name, tgt, remote) as counter:
            run = measure_copy(runner, "bench", remote, args.records, tgt_admin, timeout_for(args.records), counter)
        result["replicators"].setdefault(name, {}).update(figures(run, args.records, args.record_size))
        log(f"{name}: {result['replicators'][name]}")


@contextmanager
def copied_counter(name: str, target: str, remote: dict[str, int]) -> Iterator[Callable[[], int] | None]:
    """How a replicator's copied records are counted: the exactly-once rows' remote topics hold transaction
    markers too, so what their transactions committed counts them (sparkmirror's positions group, MM2's source
    offsets); the others' offsets do. MM2's count is then checked to have come with transaction markers in
    every partition it copied, so a row that quietly wrote without transactions fails instead."""
    if name == "sparkmirror-exactly-once":
        partitions = [(topic, p) for topic, count in remote.items() for p in range(count)]
        yield lambda: committed_positions(target, EXACTLY_ONCE_POSITIONS, partitions)
    elif name == "mm2-exactly-once":
        offsets = CommittedSourceOffsets(target, MM2_EXACTLY_ONCE_ALIAS, remote)
        try:
            yield offsets
            marks = ClusterAdmin("target", {"bootstrap.servers": target}).watermarks_of(remote)
            ends = {(t, p): high for t, parts in marks.items() for p, (_, high) in parts.items()}
            if plain := untransactional_partitions(offsets.positions(), ends):
                raise CopyIncomplete(f"{name} wrote without transaction markers to {plain}")
        finally:
            offsets.close()
    else:
        yield None


LATENCY_FIGURES = ("p50_ms", "p99_ms", "max_ms", "startup_p99_ms", "startup_max_ms", "tail_seconds")


def run_latency(args: argparse.Namespace, src: str, tgt: str, runners: dict, result: dict) -> None:
    src_admin, _ = _admins(src, tgt)
    runners = dict(runners)
    for kind, make in (("sparkmirror", SparkmirrorRunner), ("sparkmirror-spark-kafka", spark_kafka_runner)):
        if kind in runners:  # one entry per trigger mode, micro-batch first
            base = runners.pop(kind)
            for trigger in args.latency_triggers:
                runner = make(base.source, base.target, base.cores, base.workdir, trigger)
                runners[runner.name] = runner
    _create(src_admin, {"latency-direct": args.latency_partitions})
    log(f"direct: latency of a consumer on the source itself at {args.latency_rate_mb} MB/s")
    direct = measure_direct_latency(src, "latency-direct", args.latency_partitions, args.latency_rate_mb,
                                    args.latency_seconds, args.record_size, args.latency_warmup_seconds)
    result["replicators"].setdefault("direct", {}).update({k: direct[k] for k in LATENCY_FIGURES if k in direct})
    log(f"direct: {direct}")
    for name, runner in runners.items():
        topic = f"latency-{name}"
        _create(src_admin, {topic: args.latency_partitions})
        log(f"{name}: latency at {args.latency_rate_mb} MB/s for {args.latency_seconds:.0f} s")
        lat = measure_latency(runner, src, tgt, topic, args.latency_partitions, args.latency_rate_mb,
                              args.latency_seconds, args.record_size, args.latency_warmup_seconds,
                              args.latency_idle_seconds)
        entry = result["replicators"].setdefault(name, {})
        entry.update({k: lat[k] for k in (*LATENCY_FIGURES, "idle_cpu_s_per_minute") if k in lat})
        entry["latency_records"] = lat["records"]
        produced = lat["records"] + lat.get("startup_records", 0)  # the CPU was used for the warm-up's too
        entry["latency_cpu_s_per_million_records"] = round(lat["cpu_s"] / max(produced, 1) * 1e6, 2)
        log(f"{name}: {lat}")


def run_metrics(args: argparse.Namespace, src: str, tgt: str, runners: dict, result: dict) -> None:
    run_metrics_cost(args, src, tgt, runners, result, log, timeout_for(args.records))


def run_transforms(args: argparse.Namespace, src: str, tgt: str, runners: dict, result: dict) -> None:
    args.workdir = next(iter(runners.values())).workdir
    transforms.run_transforms(args, src, tgt, figures, _create, _admins, log, timeout_for(args.records), result)


def run_schemas(args: argparse.Namespace, src: str, tgt: str, runners: dict, result: dict) -> None:
    args.workdir = next(iter(runners.values())).workdir
    schemas.run_schemas(args, src, tgt, figures, _create, _admins, log, timeout_for(args.records), result)


def run_scale(args: argparse.Namespace, src: str, tgt: str, runners: dict, result: dict) -> None:
    src_admin, tgt_admin = _admins(src, tgt)
    topics = [f"scale-{i:03d}" for i in range(args.scale_topics)]
    _create(src_admin, dict.fromkeys(topics, args.scale_partitions))
    log(f"loading {args.scale_records:,} records over {len(topics)} topics x {args.scale_partitions} partitions")
    dataset.load(src, topics, args.scale_partitions, args.scale_records, args.record_size, args.seed + 1)
    for name, runner in runners.items():
        log(f"{name}: replicating {len(topics) * args.scale_partitions} partitions")
        remote = {f"{runner.source_alias}.{t}": args.scale_partitions for t in topics}
        with copied_counter(name, tgt, remote) as counter:
            run = measure_copy(runner, "scale-.*", remote, args.scale_records, tgt_admin,
                               timeout_for(args.scale_records), counter)
        result["scale"][name] = figures(run, args.scale_records, args.record_size)
        log(f"{name}: {result['scale'][name]}")


def _admins(src: str, tgt: str) -> tuple[ClusterAdmin, ClusterAdmin]:
    return ClusterAdmin("source", {"bootstrap.servers": src}), ClusterAdmin("target", {"bootstrap.servers": tgt})


def _create(admin: ClusterAdmin, topics: dict[str, int]) -> None:
    for name, error in admin.create_topics([NewTopicSpec(t, n, 1) for t, n in topics.items()]).items():
        if error:
            raise RuntimeError(f"creating {name}: {error}")


def ratios(result: dict) -> None:
    reps = result["replicators"]
    sm = reps.get("sparkmirror", {}).get("records_per_s")
    if sm and reps.get("mm2", {}).get("records_per_s"):
        result["throughput_ratio_vs_mm2"] = round(sm / reps["mm2"]["records_per_s"], 3)
    if sm and reps.get("limit", {}).get("records_per_s"):
        result["throughput_ratio_vs_limit"] = round(sm / reps["limit"]["records_per_s"], 3)
    once = reps.get("sparkmirror-exactly-once", {}).get("records_per_s")
    if sm and once:
        result["exactly_once_throughput_ratio_vs_at_least_once"] = round(once / sm, 3)
    mm2, mm2_once = (reps.get(name, {}).get("records_per_s") for name in ("mm2", "mm2-exactly-once"))
    if mm2 and mm2_once:
        result["mm2_exactly_once_throughput_ratio_vs_mm2"] = round(mm2_once / mm2, 3)
    mm2_p99 = reps.get("mm2", {}).get("p99_ms")
    sm_p99 = [row["p99_ms"] for name, row in reps.items() if name.startswith("sparkmirror") and row.get("p99_ms")]
    if mm2_p99 and sm_p99:  # sparkmirror's best trigger mode against MM2, same run
        result["latency_p99_ratio_vs_mm2"] = round(min(sm_p99) / mm2_p99, 3)
    latency_ratios(result)
    scale = result["scale"]
    if scale.get("sparkmirror") and scale.get("mm2"):
        result["scale_throughput_ratio_vs_mm2"] = round(
            scale["sparkmirror"]["records_per_s"] / scale["mm2"]["records_per_s"], 3)
    transforms.ratios(result)
    schemas.ratios(result)


LONG_LATENCY_S = 300  # a latency run this long gives latency_long_p99_ratio_vs_mm2 (the epoch ends show)


def latency_ratios(result: dict) -> None:
    """Latency against MM2's in the same run, of sparkmirror's row with the lowest p99: p50 and p99 over as many
    partitions as the run had when that is 1,000 or more (`latency_1000p_...`), p99 of a long run, and each
    sparkmirror row's latency CPU per million records."""
    reps, params = result["replicators"], result.get("parameters", {})
    mm2 = reps.get("mm2", {})
    rows = {name: row for name, row in reps.items() if name.startswith("sparkmirror") and row.get("p99_ms")}
    if not mm2.get("p99_ms") or not rows:
        return
    best = min(rows, key=lambda name: rows[name]["p99_ms"])
    partitions = params.get("latency_partitions") or 0
    if partitions >= 1000:
        result[f"latency_{partitions}p_p50_ratio_vs_mm2"] = round(rows[best]["p50_ms"] / mm2["p50_ms"], 3)
        result[f"latency_{partitions}p_p99_ratio_vs_mm2"] = round(rows[best]["p99_ms"] / mm2["p99_ms"], 3)
        result[f"latency_{partitions}p_replicator"] = best
    if params.get("latency_seconds", 0) >= LONG_LATENCY_S:
        result["latency_long_p99_ratio_vs_mm2"] = round(rows[best]["p99_ms"] / mm2["p99_ms"], 3)
    mm2_cpu = mm2.get("latency_cpu_s_per_million_records")
    if mm2_cpu:
        result["latency_cpu_ratio_vs_mm2"] = {name: round(row["latency_cpu_s_per_million_records"] / mm2_cpu, 3)
                                              for name, row in rows.items()
                                              if row.get("latency_cpu_s_per_million_records")}
    mm2_idle = mm2.get("idle_cpu_s_per_minute")
    if mm2_idle:
        result["latency_idle_cpu_ratio_vs_mm2"] = {name: round(row["idle_cpu_s_per_minute"] / mm2_idle, 3)
                                                   for name, row in rows.items() if row.get("idle_cpu_s_per_minute")}


COLUMNS = ("records_per_s", "mb_per_s", "wall_s", "first_record_s", "cpu_s", "cpu_s_per_million_records",
           "peak_rss_mb", "p50_ms", "p99_ms", "max_ms", "startup_p99_ms", "latency_cpu_s_per_million_records",
           "idle_cpu_s_per_minute")
RATIOS = ("throughput_ratio_vs_mm2", "throughput_ratio_vs_limit", "exactly_once_throughput_ratio_vs_at_least_once",
          "mm2_exactly_once_throughput_ratio_vs_mm2", "scale_throughput_ratio_vs_mm2", "latency_p99_ratio_vs_mm2",
          "metrics_on_off_ratio", "transforms_throughput_ratio_vs_plain", "transforms_throughput_ratio_vs_mm2",
          "sql_filter_latency_p50_ratio", "latency_1000p_p50_ratio_vs_mm2", "latency_1000p_p99_ratio_vs_mm2",
          "latency_1000p_replicator", "latency_long_p99_ratio_vs_mm2", "latency_cpu_ratio_vs_mm2",
          "latency_idle_cpu_ratio_vs_mm2", "schema_rewrite_throughput_ratio")


def markdown(result: dict) -> str:
    def table(rows: dict[str, dict]) -> list[str]:
        out = ["| replicator | " + " | ".join(COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
        for name, row in rows.items():
            out.append(f"| {name} | " + " | ".join("" if row.get(c) is None else f"{row[c]:,}" for c in COLUMNS) + " |")
        return out
    lines = ["### throughput and latency", *table(result["replicators"])]
    if result["scale"]:
        lines += ["", f"### scale ({result['parameters']['scale_topics']} topics x "
                      f"{result['parameters']['scale_partitions']} partitions)", *table(result["scale"])]
    if result.get("transforms"):
        lines += ["", "### transforms (records/s of the source backlog; latency in Real-Time Mode)",
                  *table(result["transforms"])]
    if result.get("schemas"):
        lines += ["", "### schemas (records/s of a wire-format backlog, ids kept and rewritten)",
                  *table(result["schemas"])]
    lines += [*metrics_cost_markdown(result), ""]
    spread = result.get("ratios_per_repeat", {})
    for key in RATIOS:
        if key in result:
            each = f" (each repeat: {', '.join(map(str, spread[key]))})" if key in spread else ""
            lines.append(f"- {key}: {result[key]}{each}")
    return "\n".join(lines)


def combine(result: dict, repeats: list[dict]) -> None:
    """The medians of the repeats' figures as the result's rows (ratios() then takes its ratios from those), and
    each repeat's own ratios beside them; the metrics mode's table stays in each repeat."""
    for section in ("replicators", "scale", "transforms"):
        names = dict.fromkeys(name for rep in repeats for name in rep.get(section, {}))
        for name in names:
            rows = [rep[section][name] for rep in repeats if name in rep.get(section, {})]
            keys = dict.fromkeys(key for row in rows for key in row)
            result.setdefault(section, {})[name] = {key: _median([row.get(key) for row in rows]) for key in keys}
    for key in dict.fromkeys(k for rep in repeats for k, v in rep.items() if isinstance(v, int | float)):
        result[key] = _median([rep.get(key) for rep in repeats])  # load_s, metrics_on_off_ratio
    for rep in repeats:
        ratios(rep)
    result["ratios_per_repeat"] = {key: [rep.get(key) for rep in repeats] for key in RATIOS
                                   if any(key in rep for rep in repeats)}


def _median(values: list) -> object:
    numbers = sorted(v for v in values if isinstance(v, int | float))
    if not numbers:
        return next((v for v in values if v is not None), None)
    return round(statistics.median(numbers), 2)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("sparkmirror.librdkafka").setLevel(logging.CRITICAL)
    params = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    result: dict = {"started": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine(),
                    "parameters": params, "replicators": {}, "scale": {}}
    started = time.monotonic()
    repeats: list[dict] = []
    try:
        for number in range(args.repeats):
            if args.repeats > 1:
                log(f"repeat {number + 1} of {args.repeats}")
            repeats.append({"replicators": {}, "scale": {}})
            run_modes(args, repeats[-1])
    except Exception as exc:  # the rows measured so far are kept, marked failed, before the error is raised
        result["failed"] = f"{type(exc).__name__}: {str(exc)[:2000]}"
        raise
    finally:
        if len(repeats) == 1:
            result.update(repeats[0])
        elif repeats:
            combine(result, repeats)
            result["repeats"] = repeats
        write_result(args, result, started)
    return 0


def run_modes(args: argparse.Namespace, result: dict) -> None:
    """Every mode asked for, each on a source and a target cluster of its own.

    New clusters per mode keep one mode's leftovers (the throughput mode's three 2 GB writes into the
    target, the scale mode's thousand partitions) out of the next mode's brokers."""
    for mode, fn in (("throughput", run_throughput), ("metrics", run_metrics), ("latency", run_latency),
                     ("scale", run_scale), ("transforms", run_transforms), ("schemas", run_schemas)):
        if mode not in args.modes:
            continue
        log(f"{mode}: starting source and target clusters")
        clusters = start_clusters(["bench-source", "bench-target"], heap="1g")
        src, tgt = (c.bootstrap_servers for c in clusters)
        try:
            with tempfile.TemporaryDirectory(prefix="sparkmirror-bench-") as work:
                runners = {name: RUNNERS[name](src, tgt, args.cores, Path(work)) for name in args.replicators}
                fn(args, src, tgt, runners, result)
        finally:
            for c in clusters:
                c.stop()


def write_result(args: argparse.Namespace, result: dict, started: float) -> None:
    ratios(result)
    result["total_s"] = round(time.monotonic() - started, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    failed = "-failed" if "failed" in result else ""
    path = args.out / f"bench-{datetime.now(UTC):%Y%m%dT%H%M%SZ}{'-quick' if args.quick else ''}{failed}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(markdown(result))
    log(f"result written to {path} (total {result['total_s']} s)")


if __name__ == "__main__":
    sys.exit(main())
