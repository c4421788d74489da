"""An admin call whose future never completes (librdkafka's own time-out lost, or the cluster silent) ends in
an error naming the operation and the fix, not in a bare TimeoutError."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from sparkmirror.errors import AdminOperationError
from sparkmirror.kafka import acls as acls_module
from sparkmirror.kafka import admin as admin_module
from sparkmirror.kafka import connection
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import NewTopicSpec, TopicAcl

SHORT_S = 0.1


class _SilentClient:
    """An admin client whose answers never arrive; notes the request time-out each call passed."""

    def __init__(self) -> None:
        self.request_timeouts: list[float] = []

    def poll(self, timeout: float) -> int:
        return 0

    def _never(self, request_timeout: float) -> Future:
        self.request_timeouts.append(request_timeout)
        return Future()

    def list_offsets(self, request: dict, request_timeout: float) -> dict:
        return {tp: self._never(request_timeout) for tp in request}

    def describe_topics(self, topics: object, request_timeout: float) -> dict:
        return {name: self._never(request_timeout) for name in topics.topic_names}

    def describe_configs(self, resources: list, request_timeout: float) -> dict:
        return {resource: self._never(request_timeout) for resource in resources}

    def create_topics(self, topics: list, operation_timeout: float, request_timeout: float) -> dict:
        return {topic.topic: self._never(request_timeout) for topic in topics}

    def describe_acls(self, acl_filter: object, request_timeout: float) -> Future:
        return self._never(request_timeout)

    def create_acls(self, bindings: list, request_timeout: float) -> dict:
        return {binding: self._never(request_timeout) for binding in bindings}


@pytest.fixture
def silent(monkeypatch) -> tuple[ClusterAdmin, _SilentClient]:
    """A ClusterAdmin on the silent client, its calls' time-out (CALL_TIMEOUT_S) and backstop shortened."""
    client = _SilentClient()
    monkeypatch.setattr(ClusterAdmin, "_admin", property(lambda self: client))
    monkeypatch.setattr(admin_module, "CALL_TIMEOUT_S", SHORT_S)
    monkeypatch.setattr(acls_module, "CALL_TIMEOUT_S", SHORT_S)
    monkeypatch.setattr(connection, "ANSWER_BACKSTOP_S", SHORT_S)
    return ClusterAdmin("A", {"bootstrap.servers": "127.0.0.1:9"}), client


def test_watermarks_without_an_answer_name_the_topic_and_the_fix(monkeypatch):
    admin = ClusterAdmin("A", {"bootstrap.servers": "127.0.0.1:9"})
    monkeypatch.setattr(ClusterAdmin, "_admin", property(lambda self: _SilentClient()))
    with pytest.raises(AdminOperationError, match="list offsets of 'orders'.*no answer within") as raised:
        admin.watermarks_of({"orders": 1}, timeout_s=0.1)
    assert "127.0.0.1:9" in str(raised.value)


def test_describe_topics_without_an_answer_names_the_topic_and_the_fix(silent):
    cluster, client = silent
    with pytest.raises(AdminOperationError, match="describe topic 'orders' on cluster 'A'.*no answer within") as raised:
        cluster.topic_ids(["orders"])
    assert "127.0.0.1:9" in str(raised.value)
    assert client.request_timeouts == [SHORT_S]


def test_describe_configs_without_an_answer_names_the_topic_and_the_fix(silent):
    cluster, client = silent
    with pytest.raises(AdminOperationError, match="describe configs of 'orders' on cluster 'A'.*no answer within"):
        cluster.topic_configs(["orders"])
    assert client.request_timeouts == [SHORT_S]


def test_create_topics_without_an_answer_names_the_topic(silent):
    cluster, _ = silent
    with pytest.raises(AdminOperationError, match="create topic 'orders' on cluster 'A'.*no answer within"):
        cluster.create_topics([NewTopicSpec("orders", 1, 1)])


def test_listing_acls_without_an_answer_names_the_operation_and_the_fix(silent):
    cluster, client = silent
    with pytest.raises(AdminOperationError, match="list topic ACLs on cluster 'A'.*no answer within") as raised:
        cluster.topic_acls()
    assert "127.0.0.1:9" in str(raised.value)
    assert client.request_timeouts == [SHORT_S]


def test_creating_an_acl_without_an_answer_names_the_acl(silent):
    cluster, _ = silent
    acl = TopicAcl("LITERAL", "orders", "User:alice", "*", "READ", "ALLOW")
    with pytest.raises(AdminOperationError, match=r"create ACL \(.*orders.*\) on cluster 'A'.*no answer within"):
        cluster.create_acls([acl])
