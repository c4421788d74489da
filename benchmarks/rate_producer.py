"""A paced producer for latency runs and the takeover trial, in its own process so it never competes for the
harness's GIL.

Each record's CreateTime is set by the client when produced; the consumer on the target subtracts it. With
`--ids`, record i (0-based) also carries i in its `bench-seq` header, as `dataset.load` writes them (partition
i % P), and is sent by an idempotent producer that fails on any record not delivered, so a reader can count lost
and duplicated records. It produces for `--seconds` or until SIGTERM, then waits for every acknowledgement and
prints the number of records sent.
"""

from __future__ import annotations

import argparse
import signal
import time

from confluent_kafka import Producer

from benchmarks.dataset import Payloads

TICK_S = 0.01
ID_HEADER = "bench-seq"  # as dataset.load and kill_analysis


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--partitions", type=int, required=True)
    parser.add_argument("--rate-mb", type=float, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--record-size", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ids", action="store_true", help="each record's id in its bench-seq header, idempotent")
    args = parser.parse_args()

    stopped: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, _frame: stopped.append(signum))
    failures: list[str] = []

    def on_delivery(err: object, _msg: object) -> None:
        if err is not None:
            failures.append(str(err))

    payloads = Payloads(args.record_size, args.seed)
    settings = {"bootstrap.servers": args.bootstrap, "acks": "all", "linger.ms": "1"}
    producer = Producer({**settings, "enable.idempotence": "true"} if args.ids else settings)
    per_second = args.rate_mb * 1e6 / args.record_size
    started = time.monotonic()
    sent = 0
    while (elapsed := time.monotonic() - started) < args.seconds and not stopped:
        due = int(elapsed * per_second)
        while sent < due:
            extra = {"headers": [(ID_HEADER, sent.to_bytes(8, "big"))], "on_delivery": on_delivery} if args.ids else {}
            try:
                producer.produce(args.topic, value=payloads.value(sent), key=payloads.key(sent),
                                 partition=sent % args.partitions, timestamp=int(time.time() * 1000), **extra)
            except BufferError:  # librdkafka's queue is full (1,000 small partitions): wait for acknowledgements
                producer.poll(0.01)
                continue  # the same record again, stamped when it is taken
            sent += 1
        producer.poll(0)
        time.sleep(TICK_S)
    if producer.flush(60):
        raise SystemExit("rate producer: records not acknowledged")
    if failures:
        raise SystemExit(f"rate producer: {len(failures)} records failed, e.g. {failures[0]}")
    print(sent, flush=True)


if __name__ == "__main__":
    main()
