"""The driver's channel server (pipeline/jvm/.../ChannelServer.java), spoken to as an executor's RemoteChannel
would, in the test session's driver JVM: the token and the query generation gate every connection, reports
reach the flow's channel in order, a stop is answered before `close` returns, and a query's lease reaches the
executor (what is left at opening, then each renewal).
"""

from __future__ import annotations

import json
import socket
import threading

TIMEOUT_S = 10.0


def channel_class(spark):
    return spark.sparkContext._jvm.io.sparkmirror.recordpath.FlowChannel


class Executor:
    """One executor JVM's connection, as RemoteChannel makes it: JSON lines both ways."""

    def __init__(self, endpoint: dict, channel: str, token: str) -> None:
        self.sock = socket.create_connection((endpoint["host"], endpoint["port"]), timeout=TIMEOUT_S)
        self.lines = self.sock.makefile("r", encoding="utf-8")
        self.send({"channel": channel, "token": token})
        self.answer = json.loads(self.lines.readline())
        self.open = self.answer["open"]

    def send(self, message: dict) -> None:
        self.sock.sendall((json.dumps(message) + "\n").encode())

    def receive(self) -> dict:
        return json.loads(self.lines.readline())

    def close(self) -> None:
        self.lines.close()
        self.sock.close()


def summary(offset: int) -> dict:
    return {"topic": "orders", "partition": 0, "records": 1, "next_upstream": offset + 1}


def test_only_the_token_and_a_live_query_generation_are_let_in(spark, unique):
    endpoint = json.loads(channel_class(spark).endpoint("127.0.0.1", "127.0.0.1"))
    channel = channel_class(spark).create(f"gate-{unique}", 0)
    try:
        wrong = Executor(endpoint, f"gate-{unique}", "not-the-token")
        unknown = Executor(endpoint, f"gone-{unique}", endpoint["token"])
        right = Executor(endpoint, f"gate-{unique}", endpoint["token"])
        assert (wrong.open, unknown.open, right.open) == (False, False, True)
        for executor in (wrong, unknown, right):
            executor.close()
    finally:
        channel.release()


def test_reports_arrive_in_order_and_a_stop_waits_for_the_executors_answer(spark, unique):
    endpoint = json.loads(channel_class(spark).endpoint("127.0.0.1", "127.0.0.1"))
    channel = channel_class(spark).create(f"stop-{unique}", 0)
    executor = Executor(endpoint, f"stop-{unique}", endpoint["token"])
    try:
        assert executor.open
        for offset in range(3):
            executor.send({"type": "report", "summaries": [summary(offset)]})
        drained: list[dict] = []
        while len(drained) < 3:
            drained += json.loads(channel.drain(int(TIMEOUT_S * 1000)))
        assert [s["next_upstream"] for s in drained] == [1, 2, 3]

        def executor_stops() -> None:  # what RemoteChannel does when told to stop: a last report, then the answer
            assert executor.receive()["type"] == "stop"
            executor.send({"type": "report", "summaries": [summary(3)]})
            executor.send({"type": "stopped", "busy": 0})
        answering = threading.Thread(target=executor_stops)
        answering.start()
        assert channel.close(int(TIMEOUT_S * 1000)) == 0
        answering.join(TIMEOUT_S)
        assert [s["next_upstream"] for s in json.loads(channel.drain(0))] == [4], "the last report before `close`"
        late = Executor(endpoint, f"stop-{unique}", endpoint["token"])
        assert not late.open, "a closed query generation lets no executor in"
        late.close()
    finally:
        executor.close()
        channel.release()


def test_a_lease_is_told_at_opening_and_each_renewal_is_forwarded_as_a_duration(spark, unique):
    endpoint = json.loads(channel_class(spark).endpoint("127.0.0.1", "127.0.0.1"))
    leased = channel_class(spark).create(f"lease-{unique}", 0, 60_000)
    unleased = channel_class(spark).create(f"no-lease-{unique}", 0)
    executor = Executor(endpoint, f"lease-{unique}", endpoint["token"])
    other = Executor(endpoint, f"no-lease-{unique}", endpoint["token"])
    try:
        assert executor.open and 0 < executor.answer["lease_ms"] <= 60_000, executor.answer
        assert other.answer == {"open": True}, "no lease, nothing about one"
        leased.renew(1234)
        assert executor.receive() == {"type": "lease", "valid_ms": 1234}
        leased.renew(0)
        assert executor.receive() == {"type": "lease", "valid_ms": 0}
        assert leased.leaseExpired()
    finally:
        executor.close()
        other.close()
        leased.release()
        unleased.release()
