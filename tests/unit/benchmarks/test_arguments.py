"""Benchmark arguments: the latency topics' partition count follows --partitions unless given apart."""

from __future__ import annotations

from benchmarks.run import parse_args


def test_latency_partitions_default_to_the_throughput_topics():
    assert parse_args(["--partitions", "24"]).latency_partitions == 24


def test_latency_partitions_can_be_set_apart_from_the_throughput_topics():
    args = parse_args(["--partitions", "12", "--latency-partitions", "1000"])
    assert (args.partitions, args.latency_partitions) == (12, 1000)
