"""A paced producer for latency runs, in its own process so it never competes for the harness's GIL.

Each record's CreateTime is set by the client when produced; the consumer on the target subtracts it.
"""

from __future__ import annotations

import argparse
import time

from confluent_kafka import Producer

from benchmarks.dataset import Payloads

TICK_S = 0.01


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--partitions", type=int, required=True)
    parser.add_argument("--rate-mb", type=float, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--record-size", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    payloads = Payloads(args.record_size, args.seed)
    producer = Producer({"bootstrap.servers": args.bootstrap, "acks": "all", "linger.ms": "1"})
    per_second = args.rate_mb * 1e6 / args.record_size
    started = time.monotonic()
    sent = 0
    while (elapsed := time.monotonic() - started) < args.seconds:
        due = int(elapsed * per_second)
        while sent < due:
            producer.produce(args.topic, value=payloads.value(sent), key=payloads.key(sent),
                             partition=sent % args.partitions, timestamp=int(time.time() * 1000))
            sent += 1
        producer.poll(0)
        time.sleep(TICK_S)
    if producer.flush(60):
        raise SystemExit("rate producer: records not acknowledged")
    print(sent, flush=True)


if __name__ == "__main__":
    main()
