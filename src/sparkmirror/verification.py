"""`sparkmirror verify`: is a flow's copy whole? Record by record, from the clusters alone.

For each source partition the flow replicates, the records up to the replicated position (from the offset syncs;
with `to_end`, up to the source's end) are compared with the remote partition's records up to the last offset
sync's target offset, on Spark (`pipeline/verification.py`); `offsets/verification.py` names what differs. It
reads only, so it runs beside a live flow (what is copied after its start is left for the next run), and it
verifies a copy made by MM2 just as well (sparse syncs: up to the records' ends, see `offsets/verification`).

    from sparkmirror import verification
    report = verification.verify("mm2.properties"); print(report.whole, report.flows[0].counts)
"""

from __future__ import annotations

import fnmatch
import secrets
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from sparkmirror.config.mm2 import MirrorMakerConfig, load_config
from sparkmirror.config.model import FlowConfig
from sparkmirror.errors import ConfigError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.mirror_status import read_offset_syncs, topic_selector
from sparkmirror.offsets.flow_report import syncs_by_partition
from sparkmirror.offsets.verification import FlowVerdict, PartitionRange, VerifyReport, judge, plan_range
from sparkmirror.pipeline.options import schema_ids_spec, transforms_spec

Progress = Callable[[str], None]


def select_flows(config: MirrorMakerConfig, names: Sequence[str]) -> list[FlowConfig]:
    """The enabled flows, or those named (`A->B`); a name that is no flow of the file is an error."""
    enabled = {f.name: f for f in config.enabled_flows()}
    if not names:
        return list(enabled.values())
    unknown = [n for n in names if n not in enabled]
    if unknown:
        raise ConfigError([f"--flow {n}: no enabled flow of this name; the file's enabled flows are "
                           f"{', '.join(enabled) or '(none)'}" for n in unknown])
    return [enabled[n] for n in names]


def plan_flow(flow: FlowConfig, topics: Sequence[str] = (), to_end: bool = False,
              from_offset: int | None = None, notes: list[str] | None = None) -> list[PartitionRange]:
    """The ranges of one flow: every partition of the source topics it replicates (or those matching `topics`,
    shell patterns), against its remote partitions on the target."""
    notes = notes if notes is not None else []
    source = ClusterAdmin(flow.source, flow.source_admin.rdkafka)
    target = ClusterAdmin(flow.target, flow.target_admin.rdkafka)
    selected = topic_selector(flow)
    partitions = {t: n for t, n in source.topic_partitions().items() if selected(t)
                  and (not topics or any(fnmatch.fnmatchcase(t, p) for p in topics))}
    remote = {t: flow.policy.format_remote_topic(flow.source, t) for t in partitions}
    on_target = target.topic_partitions()
    missing = sorted(t for t in partitions if remote[t] not in on_target)
    if missing:
        notes.append(f"flow {flow.name}: {len(missing)} topic(s) have no remote topic on '{flow.target}' yet: "
                     f"{', '.join(missing)}; all their records count as missing")
    source_marks = source.watermarks_of(partitions)
    target_marks = target.watermarks_of({remote[t]: min(n, on_target[remote[t]]) for t, n in partitions.items()
                                         if remote[t] in on_target})
    syncs = syncs_by_partition(read_offset_syncs(flow, notes))
    return [plan_range(t, p, remote[t], source_marks[t][p], target_marks.get(remote[t], {}).get(p),
                       syncs.get((t, p), []), to_end, from_offset)
            for t in sorted(partitions) for p in range(partitions[t])]


def shaping(flow: FlowConfig, exempt: tuple[str, ...] = ()) -> dict[str, object] | None:
    """What the flow's record path does to a record besides the SQL rules, as its writer is told (runtime/engine):
    the provenance header, MM2's transforms and the schema id rewrite (not of the `exempt` topics, the heartbeats);
    None when none, and the records are written as read."""
    transforms = transforms_spec(flow.transforms, flow.errors_tolerance, flow.plugin_path, flow.source)
    provenance = {"source": flow.source, "target": flow.target} if flow.provenance_enabled else None
    schema_ids = schema_ids_spec(flow.schemas, flow.schemas_unknown_ids, flow.source_registry, flow.target_registry,
                                 exempt)
    if transforms is None and provenance is None and schema_ids is None:
        return None
    return {"provenance": provenance, "transforms": transforms, "schema_ids": schema_ids}


def verify(config: MirrorMakerConfig | str | Path, flows: Sequence[str] = (), topics: Sequence[str] = (),
           to_end: bool = False, from_offset: int | None = None, sample: float | None = None, spark=None,
           progress: Progress = lambda _line: None, on_session: Callable[[object], None] = lambda _s: None
           ) -> VerifyReport:
    """Verify the named flows (default: every enabled one). `spark`: a SparkSession to use (else one is built
    from the file's `spark.*` settings, and stopped at the end); `on_session` is handed it (a progress display
    reads its stages). `sample` (0 < fraction < 1): a random subset of each partition's records, the same
    records on both sides (a record's copy is always drawn with it); a record changed on the way then shows as
    one missing and one extra."""
    if sample is not None and not 0 < sample <= 1:
        raise ConfigError(f"--sample {sample}: a fraction of the records, above 0 and at most 1 (0.01: one in 100)")
    drawn = None if sample is None or sample == 1 else (sample, secrets.randbelow(1 << 30))
    cfg = config if isinstance(config, MirrorMakerConfig) else load_config(config)
    chosen = select_flows(cfg, flows)
    own_session = spark is None
    if own_session:
        from sparkmirror.pipeline.session import build_spark_session

        spark = build_spark_session(cfg.spark)
    on_session(spark)
    began = time.monotonic()
    verdicts, notes, records = [], [], 0
    try:
        from sparkmirror.pipeline.verification import compare

        for flow in chosen:
            flow_notes: list[str] = []
            ranges = plan_flow(flow, topics, to_end, from_offset, flow_notes)
            progress(f"verifying {flow.name}: {len(ranges)} partition(s), "
                     f"{sum(r.source_to - r.source_from for r in ranges)} source records")
            exempt = tuple(r.topic for r in ranges if flow.policy.is_heartbeats_topic(r.topic))
            found = compare(spark, ranges, flow.source_consumer, flow.target_consumer, flow.sql_rules, exempt,
                            sample=drawn, shaping=shaping(flow, exempt))
            partitions = tuple(judge(r, found[r.key]) for r in ranges)
            records += sum(p.source_records + p.target_records for p in partitions)
            verdicts.append(FlowVerdict(flow.name, partitions, tuple(flow_notes)))
    finally:
        if own_session:
            from sparkmirror.pipeline.session import stop_quietly

            stop_quietly(spark, "the Spark session")
    if drawn is not None:
        notes.append(f"a sample: about {drawn[0]:.2%} of each partition's records (salt {drawn[1]}), the same "
                     f"records on both sides; counts are the sample's")
    return VerifyReport(tuple(verdicts), records, time.monotonic() - began, tuple(notes))
