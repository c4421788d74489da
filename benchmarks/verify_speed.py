"""How fast `sparkmirror verify` proves a copy whole, beside a plain read of the same two topics.

Two local clusters; --records records of --record-size bytes (benchmarks/dataset.load) over --partitions
partitions, copied by `sparkmirror run` (benchmarks/replicators.measure_copy); then, in one Spark session on
`local[--cores]`, in turn: a plain read of both topics (every record's value fetched and summed: the least any
comparison must do) and `verify` of the flow, which must report the copy whole; then `verify --sample 0.01`, and
`verify` of the flow with a transform chain that changes no record (the cost of running the chain). Prints
records/s verified and the ratios of verify's time to the plain read's and of the other two to the full verify's,
and writes benchmarks/results/verify-<time>.json.

    python -m benchmarks.verify_speed                      # 2,000,000 records of 1 KiB
    python -m benchmarks.verify_speed --records 200000     # a quick look
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from benchmarks import dataset
from benchmarks.replicators import SparkmirrorRunner, measure_copy
from benchmarks.run import RESULTS, log, machine, timeout_for
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import NewTopicSpec
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER, start_clusters

TOPIC = "verify-bench"
ALIAS = "smsrc"  # SparkmirrorRunner's source alias: the remote topic is smsrc.verify-bench


SAMPLE = 0.01
# MM2's DropHeaders of a header no record has: every record goes through the record path's transform step
SHAPING_CHAIN = (f"{ALIAS}->tgt.transforms = drop\n"
                 f"{ALIAS}->tgt.transforms.drop.type = org.apache.kafka.connect.transforms.DropHeaders\n"
                 f"{ALIAS}->tgt.transforms.drop.headers = absent\n")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--records", type=int, default=2_000_000)
    p.add_argument("--record-size", type=int, default=1024)
    p.add_argument("--partitions", type=int, default=6)
    p.add_argument("--cores", type=int, default=2)
    p.add_argument("--seed", type=int, default=7)
    return p.parse_args(argv)


def plain_read_s(spark, bootstrap: str, topic: str, partitions: int) -> tuple[float, int]:
    """Seconds to read every record of a topic with Spark's Kafka source, and how many it read."""
    started = time.monotonic()
    row = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
           .option("assign", json.dumps({topic: list(range(partitions))}))
           .option("startingOffsets", "earliest").option("endingOffsets", "latest").load()
           .selectExpr("count(*) AS n", "sum(length(value)) AS bytes").collect()[0])
    return time.monotonic() - started, int(row["n"])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("sparkmirror.librdkafka").setLevel(logging.CRITICAL)
    result: dict = {"started": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine(),
                    "parameters": vars(args)}
    source, target = start_clusters(["verify-src", "verify-tgt"])
    spark = None
    try:
        with tempfile.TemporaryDirectory(prefix="sparkmirror-verify-bench-") as tmp:
            work = Path(tmp)
            src, tgt = source.bootstrap_servers, target.bootstrap_servers
            ClusterAdmin("src", {"bootstrap.servers": src}).create_topics([NewTopicSpec(TOPIC, args.partitions, 1)])
            log(f"loading {args.records} records of {args.record_size} bytes")
            dataset.load(src, [TOPIC], args.partitions, args.records, args.record_size, args.seed)
            runner = SparkmirrorRunner(src, tgt, args.cores, work)
            remote = {f"{ALIAS}.{TOPIC}": args.partitions}
            copy = measure_copy(runner, TOPIC, remote, args.records, ClusterAdmin("tgt", {"bootstrap.servers": tgt}),
                                timeout_for(args.records))
            log(f"copied in {copy.wall_s:.1f} s")
            config = work / "verify.properties"
            config.write_text(f"clusters = {ALIAS}, tgt\n{ALIAS}.bootstrap.servers = {src}\n"
                              f"tgt.bootstrap.servers = {tgt}\n{ALIAS}->tgt.enabled = true\n"
                              f"{ALIAS}->tgt.topics = {TOPIC}\n{SINGLE_BROKER}")
            from sparkmirror.pipeline.session import build_spark_session
            from sparkmirror.verification import verify

            spark = build_spark_session({"spark.master": f"local[{args.cores}]"})
            plain_read_s(spark, src, TOPIC, args.partitions)  # warm: the session's first job loads classes
            read_source, n_source = plain_read_s(spark, src, TOPIC, args.partitions)
            read_target, n_target = plain_read_s(spark, tgt, f"{ALIAS}.{TOPIC}", args.partitions)
            plain = read_source + read_target
            log(f"plain read of both topics: {plain:.1f} s ({n_source} + {n_target} records)")
            report = verify(config, spark=spark)
            if not report.whole:
                raise SystemExit(f"verify found differences in a clean copy: {report.to_json()['flows']}")
            result.update({
                "copy_s": round(copy.wall_s, 1), "plain_read_s": round(plain, 2),
                "verify_s": round(report.seconds, 2), "records_read": report.records,
                "verify_records_per_s": round(report.records_per_s), "source_records_per_s":
                    round(report.records / 2 / report.seconds), "ratio_to_plain_read": round(report.seconds / plain, 2),
                "whole": report.whole})
            log(f"verify: whole, {report.records} records read in {report.seconds:.1f} s "
                f"({report.records_per_s:,.0f} records/s; {report.records / 2 / report.seconds:,.0f} source "
                f"records/s), {report.seconds / plain:.2f}x a plain read of both topics")
            sampled = verify(config, spark=spark, sample=SAMPLE)
            shaped_config = work / "shaped.properties"  # a chain that changes nothing here: its cost alone
            shaped_config.write_text(config.read_text() + SHAPING_CHAIN)
            shaped = verify(shaped_config, spark=spark)
            if not (sampled.whole and shaped.whole):
                raise SystemExit("verify --sample or verify through a transform chain found differences in a clean "
                                 "copy")
            result.update({"sample": SAMPLE, "sample_verify_s": round(sampled.seconds, 2),
                           "sample_ratio_to_full": round(sampled.seconds / report.seconds, 2),
                           "transforms_verify_s": round(shaped.seconds, 2),
                           "transforms_ratio_to_full": round(shaped.seconds / report.seconds, 2)})
            log(f"verify --sample {SAMPLE}: {sampled.seconds:.1f} s ({sampled.seconds / report.seconds:.2f}x full); "
                f"through a transform chain: {shaped.seconds:.1f} s ({shaped.seconds / report.seconds:.2f}x full)")
    finally:
        if spark is not None:
            spark.stop()
        for cluster in (source, target):
            cluster.stop()
        RESULTS.mkdir(exist_ok=True)
        out = RESULTS / f"verify-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}.json"
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
