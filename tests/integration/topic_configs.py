"""Reading, waiting for and altering one topic config on a real cluster, for the config-sync tests."""

from __future__ import annotations

import time

from sparkmirror.control.configs import ConfigAlteration
from sparkmirror.errors import AdminOperationError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import TopicConfigEntry

from .conftest import wait_until

CONFIG_SYNC_TIMEOUT_S = 30.0


def config(admin: ClusterAdmin, topic: str, key: str) -> TopicConfigEntry | None:
    """One config of a topic; a topic created a moment ago may not be describable yet, so that is retried."""
    deadline = time.monotonic() + 10
    while True:
        try:
            return next((e for e in admin.topic_configs([topic]).get(topic, ()) if e.name == key), None)
        except AdminOperationError as exc:
            if "UNKNOWN_TOPIC_OR_PART" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def wait_for_config(admin: ClusterAdmin, topic: str, key: str, value: str, is_default: bool,
                    timeout_s: float = CONFIG_SYNC_TIMEOUT_S) -> float:
    """Wait until the topic reports key=value with the given default flag; returns the seconds it took."""
    began = time.monotonic()
    wanted = TopicConfigEntry(key, value, is_default)
    last: list[TopicConfigEntry | None] = [None]

    def seen() -> bool:
        last[0] = config(admin, topic, key)
        return last[0] == wanted

    try:
        wait_until(seen, timeout_s, f"{key}={value} (default={is_default}) on {topic} of {admin.alias}")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last observed: {last[0]!r}") from None
    return time.monotonic() - began


def alter(admin: ClusterAdmin, topic: str, *alterations: ConfigAlteration) -> None:
    assert admin.alter_topic_configs({topic: alterations}) == {topic: None}
