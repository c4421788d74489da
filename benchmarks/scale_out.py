"""Scale-out on a Spark standalone cluster: the same backlog copied with 1 and then 2 executors (one core
each, one per worker), and how the tasks spread over them.

The backlog goes in about ten micro-batches (`sparkmirror.max.offsets.per.trigger`). Printed per run:
records/s from the first record on the target to the last (the session's start, ~20 s on a cluster, is left
out), records per executor core-second of wall time, records per second of executor CPU (Spark's own
per-task CPU time, from the event log: the figure that carries over to a bigger cluster), and the tasks each
executor ran. Every process runs on this machine, brokers included, so with 2 cores the second executor
competes with the brokers and the driver: read the ratio with that in mind.

    python -m benchmarks.scale_out --records 2000000 --partitions 8
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks.dataset import load
from benchmarks.replicators import SparkmirrorRunner, measure_copy
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import NewTopicSpec
from sparkmirror.testing.kafka_cluster import start_clusters
from sparkmirror.testing.spark_cluster import LocalSparkCluster

COPY_TIMEOUT_S = 1200.0


def executor_tasks(event_dir: Path) -> tuple[Counter[str], float]:
    """Tasks per executor id and their executor CPU time in seconds, from the application's event log."""
    tasks: Counter[str] = Counter()
    cpu_ns = 0
    for log in (f for f in event_dir.rglob("*") if f.is_file()):  # Spark 4: a folder of rolled files per app
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            if '"SparkListenerTaskEnd"' not in line:
                continue
            event = json.loads(line)
            tasks[event["Task Info"]["Executor ID"]] += 1
            cpu_ns += (event.get("Task Metrics") or {}).get("Executor CPU Time", 0)
    return tasks, cpu_ns / 1e9


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", type=int, default=2_000_000)
    p.add_argument("--partitions", type=int, default=8)
    p.add_argument("--record-size", type=int, default=200)
    p.add_argument("--executors", default="1,2,2,1",
                   help="executor counts to measure, in order (comma list; alternate them against drift)")
    args = p.parse_args(argv)
    counts = [int(n) for n in args.executors.split(",")]
    work = Path(tempfile.mkdtemp(prefix="sparkmirror-scale-out-"))
    source, target = start_clusters(["scale-src", "scale-tgt"])
    results = []
    try:
        with LocalSparkCluster("scale-out", workers=max(counts)) as cluster:
            topic = "scale-out"
            ClusterAdmin("src", {"bootstrap.servers": source.bootstrap_servers}).create_topics(
                [NewTopicSpec(topic, args.partitions, 1)])
            load(source.bootstrap_servers, [topic], args.partitions, args.records, args.record_size, seed=7)
            target_admin = ClusterAdmin("tgt", {"bootstrap.servers": target.bootstrap_servers})
            for i, n in enumerate(counts):
                events = work / f"events-{i}"
                events.mkdir()
                alias = f"src{i}"  # a remote topic of its own per run: the same backlog copied again
                settings = (f"spark.driver.host = 127.0.0.1\nspark.driver.bindAddress = 127.0.0.1\n"
                            f"spark.executor.cores = 1\nspark.cores.max = {n}\nspark.executor.memory = 768m\n"
                            f"spark.scheduler.minRegisteredResourcesRatio = 1.0\n"
                            f"sparkmirror.max.offsets.per.trigger = {max(args.records // 10, 1)}\n"
                            f"spark.eventLog.enabled = true\nspark.eventLog.compress = false\n"
                            f"spark.eventLog.dir = {events}\n")
                runner = SparkmirrorRunner(source.bootstrap_servers, target.bootstrap_servers, n, work,
                                           source_alias=alias, master=cluster.master_url, settings=settings)
                run = measure_copy(runner, topic, {f"{alias}.{topic}": args.partitions}, args.records,
                                   target_admin, COPY_TIMEOUT_S)
                copy_s = run.wall_s - (run.first_record_s or 0.0)
                tasks, cpu_s = executor_tasks(events)
                results.append({"executors": n, "records_per_s": round(args.records / copy_s),
                                "records_per_core_s": round(args.records / copy_s / n),
                                "records_per_executor_cpu_s": round(args.records / cpu_s) if cpu_s else None,
                                "copy_s": round(copy_s, 1), "start_s": run.first_record_s,
                                "tasks_per_executor": dict(sorted(tasks.items()))})
                print(json.dumps(results[-1]), flush=True)
    finally:
        source.stop()
        target.stop()
    by_count = {n: [r["records_per_s"] for r in results if r["executors"] == n] for n in sorted(set(counts))}
    if len(by_count) > 1:
        low, high = min(by_count), max(by_count)
        mean = {n: sum(v) / len(v) for n, v in by_count.items()}
        print(f"scale-out ratio ({high} vs {low} executors, mean of {len(by_count[high])} and {len(by_count[low])} "
              f"runs): {mean[high] / mean[low]:.2f}x records/s; "
              f"{args.records:,} records of {args.record_size} B over {args.partitions} partitions; "
              f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
