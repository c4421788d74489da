"""The failover benchmark's source data: plain or transactional records (with aborted transactions, so
the source has offset gaps), the same on every run for a seed.
"""

from __future__ import annotations

import argparse
import logging
import random
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from confluent_kafka import TIMESTAMP_CREATE_TIME, Producer

from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord, NewTopicSpec
from sparkmirror.testing.records import produce

PREFIX = "sparkmirror-bench-failover"  # in every process's command line: `pkill -f sparkmirror-bench-`
TOPIC = "bench"
QUIET = logging.getLogger("sparkmirror.librdkafka")  # silenced in main(), as benchmarks.run does
T = TypeVar("T")


def _value(p: int, i: int, size: int, tag: str = "") -> bytes:
    head = f"{tag}p{p}-{i}-".encode()
    return head + b"x" * max(0, size - len(head))


def load_plain(bootstrap: str, partitions: int, records: int, size: int) -> None:
    now = int(time.time() * 1000)
    produce(bootstrap, TOPIC, (KafkaRecord(p, -1, f"k{i}".encode(), _value(p, i, size), (), TIMESTAMP_CREATE_TIME,
                                           now) for i in range(records) for p in range(partitions)))


def _transactions(bootstrap: str, partition: int, records: int, size: int, seed: int,
                  abort_every: int) -> tuple[int, int]:
    rng = random.Random(seed * 1000 + partition)  # noqa: S311 - benchmark data
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"{PREFIX}-{partition}",
                         "linger.ms": 0, "logger": QUIET})
    producer.init_transactions(30)
    written = aborted = transactions = 0
    while written < records:
        producer.begin_transaction()
        size_of = rng.randint(1, 5)
        if rng.randrange(abort_every) == 0:
            for _ in range(size_of):
                producer.produce(TOPIC, key=b"k", value=_value(partition, aborted, size, "aborted-"),
                                 partition=partition)
                aborted += 1
            producer.flush(30)  # on the log before the abort, and no abort racing the produce requests
            producer.abort_transaction(30)
        else:
            for _ in range(min(size_of, records - written)):
                producer.produce(TOPIC, key=b"k", value=_value(partition, written, size), partition=partition)
                written += 1
            producer.commit_transaction(30)
        transactions += 1
    producer.flush(30)
    return transactions, aborted


def load_transactional(bootstrap: str, partitions: int, records: int, size: int, seed: int,
                       abort_every: int = 5) -> dict[str, int]:
    """One transactional producer per partition (in parallel), transactions of 1..5 records, about one in
    `abort_every` aborted, until every partition holds `records` committed records. Seeded per partition:
    every cluster gets the same records, markers and gaps."""
    done = run_all([lambda p=p: _transactions(bootstrap, p, records, size, seed, abort_every)
                    for p in range(partitions)])
    return {"transactions": sum(t for t, _ in done), "aborted_records": sum(a for _, a in done)}


def load(bootstrap: str, args: argparse.Namespace) -> dict[str, int]:
    ClusterAdmin("A", {"bootstrap.servers": bootstrap}).create_topics([NewTopicSpec(TOPIC, args.partitions, 1)])
    if args.transactional:
        return load_transactional(bootstrap, args.partitions, args.records, args.record_size, args.seed)
    load_plain(bootstrap, args.partitions, args.records, args.record_size)
    return {}


def run_all(jobs: list[Callable[[], T]]) -> list[T]:
    """Run the jobs in threads; return their results in order, or raise the first error."""
    results: list = [None] * len(jobs)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            results[i] = jobs[i]()
        except BaseException as exc:  # noqa: BLE001 - raised in the calling thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results
