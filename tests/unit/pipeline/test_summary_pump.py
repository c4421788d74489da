"""SummaryPump when the JVM ends under it (a SIGTERM to the process group reaches the Spark JVM too)."""

from __future__ import annotations

import json

from sparkmirror.pipeline.flow import SummaryPump


class _ChannelOfADeadJvm:
    """What py4j gives once the JVM is gone: every call after `close` is refused."""

    def __init__(self, reports_before_death: int) -> None:
        self.reports = reports_before_death
        self.released = False

    def close(self, _wait_ms: int) -> int:
        return 0

    def drain(self, _wait_ms: int) -> str:
        if self.reports:
            self.reports -= 1
            return json.dumps([{"topic": "t", "partition": 0, "records": 1, "skipped": 0,
                                "bytes": 3, "next_upstream": 1, "sync_upstream": [0], "sync_downstream": [0],
                                "sync_runs": [True], "value_bytes": 10, "record_age_ms": [],
                                "replication_latency_ms": [], "dropped": 0, "failed": 0}])
        raise ConnectionRefusedError(111, "Connection refused")

    def release(self) -> None:
        raise ConnectionRefusedError(111, "Connection refused")


def test_close_hands_over_what_it_got_and_returns_when_the_jvm_is_gone():
    handed: list[int] = []
    pump = SummaryPump(_ChannelOfADeadJvm(reports_before_death=1), lambda n, summaries, _t: handed.append(n))
    pump.start()
    pump.close(wait_s=0.1)  # must not raise: the CLI's SIGTERM path ends with exit 0
    assert handed == [1]
