"""Task-retry trial: what a Real-Time Mode task that Spark retries reads again, for a given epoch length.

Records are produced at a fixed rate (each with its id, as in the kill trial) while sparkmirror copies them in
Real-Time Mode. `--fail-after` seconds in, the remote topic's `max.message.bytes` is lowered and a record larger
than that is written to source partition 0: the task reading it fails. Spark retries the task (local mode: 4
attempts), and each attempt reads its partitions again from the start of its epoch; the writer skips what an
earlier attempt reported (the `skipped` count of the flow's report lines). After the last attempt the flow fails
and is retried from its own positions; the limit is raised again once the attempts are seen, and the copy goes
on. Prints the records read again, the duplicates, the records lost (0 expected), and how long the attempts and
the catch-up after the failure took. Run as `python -m benchmarks.task_retry [--epoch-ms 300000 --fail-after 60]`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.kill_analysis import TargetIds, analyse, reported
from benchmarks.replicators import SparkmirrorRunner
from sparkmirror.control.configs import ConfigAlteration
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord, NewTopicSpec
from sparkmirror.testing import watchdog
from sparkmirror.testing.kafka_cluster import start_clusters
from sparkmirror.testing.records import produce

TOPIC = "retry"
LOWERED_LIMIT = "2000"
RESTORED_LIMIT = "1048588"  # Kafka's default max.message.bytes
TASK_FAILED = "flow task failed"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epoch-ms", type=int, default=300_000, help="sparkmirror.real.time.epoch.ms")
    p.add_argument("--fail-after", type=float, default=60.0, help="seconds of copying before the failing record")
    p.add_argument("--seconds", type=float, default=120.0, help="seconds of producing")
    p.add_argument("--rate-mb", type=float, default=5.0)
    p.add_argument("--partitions", type=int, default=12)
    p.add_argument("--record-size", type=int, default=1024)
    return p.parse_args(argv)


def _wait(what: str, done, timeout_s: float, reader: TargetIds) -> float:
    """Poll the target while waiting for `done()`; returns when it was."""
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError(f"task-retry trial: {what} not seen within {timeout_s:.0f} s")
        reader.poll(0.2)
    return time.monotonic()


def trial(args: argparse.Namespace, source: str, target: str, work: Path) -> dict[str, object]:
    src_admin = ClusterAdmin("source", {"bootstrap.servers": source})
    tgt_admin = ClusterAdmin("target", {"bootstrap.servers": target})
    if (error := src_admin.create_topics([NewTopicSpec(TOPIC, args.partitions, 1)]).get(TOPIC)) is not None:
        raise error
    runner = SparkmirrorRunner(source, target, 2, work, "real-time",
                               settings=f"sparkmirror.real.time.epoch.ms = {args.epoch_ms}\n")
    remote = f"{runner.source_alias}.{TOPIC}"

    def limit(value: str) -> None:
        tgt_admin.alter_topic_configs({remote: [ConfigAlteration("max.message.bytes", "SET", value)]})

    upper = int(args.rate_mb * 1e6 / args.record_size * args.seconds * 1.1) + 1
    proc = runner.start(TOPIC)
    producer = dog = None
    try:
        deadline = time.monotonic() + 120
        while remote not in tgt_admin.topic_partitions():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"sparkmirror did not create {remote}:\n{runner.log_tail()}")
            time.sleep(0.5)
        reader = TargetIds(target, remote, args.partitions, upper)
        producer, dog = watchdog.spawn(
            [sys.executable, "-m", "benchmarks.rate_producer", "--bootstrap", source, "--topic", TOPIC, "--ids",
             "--partitions", str(args.partitions), "--rate-mb", str(args.rate_mb), "--seconds", str(args.seconds),
             "--record-size", str(args.record_size)], stdout=subprocess.PIPE, stderr=None)
        started = time.monotonic()
        _wait("the failure time", lambda: time.monotonic() - started >= args.fail_after, args.fail_after + 5, reader)
        limit(LOWERED_LIMIT)
        produce(source, TOPIC, [KafkaRecord(0, -1, b"too-large", b"x" * 10_000, (), 1, int(time.time() * 1000))])
        failed_at = time.monotonic()
        log = runner.log_path
        assert log is not None

        def attempts() -> int:
            return log.read_text(errors="replace").count(TASK_FAILED)

        seen_at = _wait("4 failed task attempts", lambda: attempts() >= 4, 300, reader)
        limit(RESTORED_LIMIT)
        expected_ids = int(producer.communicate(timeout=args.seconds + 120)[0].strip())
        copied_at = _wait("every record on the target", lambda: reader.distinct >= expected_ids, 300, reader)
        time.sleep(2)  # anything still on its way lands, so duplicates are counted
        reader.poll(0.5)
    finally:
        if producer is not None and producer.poll() is None:
            producer.kill()
            producer.wait()
        if dog is not None:
            dog.release()
        runner.stop()
    verdict = analyse(reader.ids, reader.offsets, expected_ids, [])
    read_again = reported(log).skipped
    reader.close()
    per_second = args.rate_mb * 1e6 / args.record_size
    return {
        "epoch_ms": args.epoch_ms, "fail_after_s": args.fail_after, "records": expected_ids,
        "lost": expected_ids - verdict.total("present"), "duplicates": verdict.total("duplicates"),
        "foreign": verdict.total("foreign"),
        "partitions_in_order": sum(p.in_order for p in verdict.partitions.values()),
        "task_attempts_failed": attempts(), "read_again": read_again,
        "read_again_seconds_of_input": round(read_again / per_second, 1),
        "attempts_seen_s": round(seen_at - failed_at, 1), "caught_up_s_after_failure": round(copied_at - failed_at, 1),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    clusters = start_clusters(["retry-source", "retry-target"], heap="1g")
    try:
        with tempfile.TemporaryDirectory(prefix="sparkmirror-retry-") as work:
            print(json.dumps(trial(args, *(c.bootstrap_servers for c in clusters), Path(work))))
    finally:
        for c in clusters:
            c.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
