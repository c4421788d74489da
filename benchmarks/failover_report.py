"""The failover benchmark's results: where each sampled commit resumes on B, and the tables it prints."""

from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass, field

REPLICATORS = ("mm2", "sparkmirror")
MM2_DEFAULT_OFFSET_LAG_MAX = 100


@dataclass
class Position:
    partition: int
    processed: int  # records the consumer processed on A
    upstream: int  # the offset it committed on A
    downstream: int | None  # the checkpoint's offset on B; None: no checkpoint for the partition at all
    rereads: int
    misses: int
    stale: bool  # the latest checkpoint is for an earlier commit (the translation had not moved)


@dataclass
class Result:
    name: str
    positions: list[Position] = field(default_factory=list)
    visible_s: list[float] = field(default_factory=list)  # commit -> the partition's checkpoint visible
    offset_syncs: int = 0
    remote_records: int = 0
    source_records: int = 0
    aborted_on_target: int = 0


def sample_counts(records: int, samples: int) -> list[int]:
    return sorted({round(i * records / (samples - 1)) for i in range(samples)}) if samples > 1 else [records]


def summary(r: Result) -> dict[str, float | int]:
    """Re-reads and misses over the positions that have a checkpoint; `no_checkpoint` counts the others."""
    checkpointed = [p for p in r.positions if p.downstream is not None]
    rereads = [p.rereads for p in checkpointed]
    return {"samples": len(r.positions), "exact": sum(1 for p in checkpointed if not p.rereads and not p.misses),
            "no_checkpoint": len(r.positions) - len(checkpointed),
            "rereads_total": sum(rereads), "rereads_mean": round(statistics.fmean(rereads), 2) if rereads else 0,
            "rereads_max": max(rereads, default=0), "misses": sum(p.misses for p in checkpointed),
            "stale": sum(1 for p in checkpointed if p.stale),
            "timed": len(r.visible_s),
            "visible_median_s": round(statistics.median(r.visible_s), 2) if r.visible_s else float("nan"),
            "visible_max_s": round(max(r.visible_s), 2) if r.visible_s else float("nan"),
            "offset_syncs": r.offset_syncs}


COLUMNS = ("samples", "exact", "no_checkpoint", "rereads_total", "rereads_mean", "rereads_max", "misses", "stale",
           "timed", "visible_median_s", "visible_max_s", "offset_syncs")


def report(results: dict[str, Result], args: argparse.Namespace) -> None:
    rows = {name: summary(r) for name, r in results.items()}
    print(f"\n{args.partitions} partitions x {args.records:,} records"
          f"{' (transactional)' if args.transactional else ''}, {len(sample_counts(args.records, args.samples))} "
          f"positions per partition; MM2 offset.lag.max = {MM2_DEFAULT_OFFSET_LAG_MAX} (default)\n")
    print("| replicator | " + " | ".join(COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 1) + "|")
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(f"{row[c]:,}" for c in COLUMNS) + " |")
    print(f"\nMean re-reads by records processed per partition (of {args.records:,}):\n")
    print("| processed | " + " | ".join(results) + " |")
    print("|---" * (len(results) + 1) + "|")
    for count in sample_counts(args.records, args.samples):
        cells = []
        for r in results.values():
            at = [p for p in r.positions if p.processed == count and p.downstream is not None]
            cells.append(f"{statistics.fmean(p.rereads for p in at):,.1f}" if at else "")
        print(f"| {count:,} | " + " | ".join(cells) + " |")
    for name, r in results.items():
        if r.aborted_on_target:
            print(f"\n{name}: B holds {r.aborted_on_target:,} records of aborted transactions "
                  f"({r.remote_records:,} records on B, {r.source_records:,} committed on A)")
    if set(REPLICATORS) <= rows.keys():
        sm, mm = rows["sparkmirror"], rows["mm2"]
        print()
        for key in ("rereads_mean", "rereads_max", "visible_median_s"):
            ratio = sm[key] / mm[key] if mm[key] else float("nan")
            print(f"{key} sparkmirror / mm2: {sm[key]} / {mm[key]} = {ratio:.3g}")
        print(f"exact positions: sparkmirror {sm['exact']}/{sm['samples']}, mm2 {mm['exact']}/{mm['samples']}")
