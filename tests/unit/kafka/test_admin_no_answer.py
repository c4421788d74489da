"""A list-offsets call whose future never completes (librdkafka's own time-out lost, or the cluster silent)
ends in an error naming the topics and the fix, not in a bare TimeoutError."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from sparkmirror.errors import AdminOperationError
from sparkmirror.kafka.admin import ClusterAdmin


class _SilentClient:
    """An admin client whose list-offsets answers never arrive."""

    def poll(self, timeout: float) -> int:
        return 0

    def list_offsets(self, request: dict, request_timeout: float) -> dict:
        return {tp: Future() for tp in request}


def test_watermarks_without_an_answer_name_the_topic_and_the_fix(monkeypatch):
    admin = ClusterAdmin("A", {"bootstrap.servers": "127.0.0.1:9"})
    monkeypatch.setattr(ClusterAdmin, "_admin", property(lambda self: _SilentClient()))
    with pytest.raises(AdminOperationError, match="list offsets of 'orders'.*no answer within") as raised:
        admin.watermarks_of({"orders": 1}, timeout_s=0.1)
    assert "127.0.0.1:9" in str(raised.value)
