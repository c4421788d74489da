"""ClusterAdmin calls against a real cluster."""

from __future__ import annotations

import pytest

from sparkmirror.errors import AdminOperationError
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.testing.records import produce

from .conftest import records


def test_watermarks_of_many_topics_in_one_call(clusters, create_topic, unique):
    first, second = f"wm-a-{unique}", f"wm-b-{unique}"
    create_topic("A", first, 3)
    create_topic("A", second, 2)
    produce(clusters.source, first, records("a", 7, partitions=3))
    produce(clusters.source, second, records("b", 4, partitions=2))
    admin = ClusterAdmin("A", {"bootstrap.servers": clusters.source})

    marks = admin.watermarks_of({first: 3, second: 2})

    assert marks == {first: {0: (0, 3), 1: (0, 2), 2: (0, 2)}, second: {0: (0, 2), 1: (0, 2)}}
    assert admin.watermarks(second, 2) == marks[second]
    assert admin.watermarks_of({}) == {}


def test_watermarks_of_a_missing_topic_names_it(clusters, unique):
    admin = ClusterAdmin("A", {"bootstrap.servers": clusters.source})
    with pytest.raises(AdminOperationError, match=f"missing-{unique}"):
        admin.watermarks_of({f"missing-{unique}": 1}, timeout_s=2)
