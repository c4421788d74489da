"""Records removed at the source before the flow copied them (issue 34, item 2): named, counted, or a stop.

MM2 skips them silently (apache/kafka#23091: `auto.offset.reset` absorbs the gap). Here the flow copies 100
records of a partition, stops; 100 more arrive and DeleteRecords (as retention would) removes offsets up to 150
before the flow runs again: 50 records the target can never have.
"""

from __future__ import annotations

import json
import re
import urllib.request

import pytest

from sparkmirror.errors import PipelineError
from sparkmirror.mirror_status import read_status
from sparkmirror.web.server import MetricsServer

from .conftest import count_records, delete_records, produce, records, wait_until
from .test_metrics import scrape

COPY_TIMEOUT_S = 120.0


def test_records_removed_before_the_copy_are_counted_everywhere_or_stop_the_flow(
        clusters, create_topic, mm2_properties, run_caught_up, running, tmp_path, unique):
    topic = f"removed-{unique}"
    create_topic("A", topic, 1)
    produce(clusters.source, topic, records("first", 100))
    path = mm2_properties(topic)
    run_caught_up(path, tmp_path / "state")
    assert count_records(clusters.target, f"A.{topic}") == 100
    produce(clusters.source, topic, records("second", 100))
    delete_records(clusters.source, topic, 0, 150)

    # `sparkmirror status`, from the clusters alone: the last exact sync is below the log start
    [flow] = read_status(path).flows
    assert flow.removed_before_copy == 50 and flow.partitions[0].removed_before_copy == 50

    # stop instead: the flow fails naming the partition and offsets, and copies nothing (its process's only
    # flow, so the run ends with that error, as a sole flow that cannot start does)
    stop = tmp_path / "stop.properties"
    stop.write_text(path.read_text() + "sparkmirror.on.records.removed = stop\n")
    named = f"50 records were removed at the source before they were copied: {topic}-0 (offsets 100 to 149)"
    with pytest.raises(PipelineError, match=re.escape(named)), running(stop):
        pass
    assert count_records(clusters.target, f"A.{topic}") == 100
    assert read_status(path).flows[0].removed_before_copy == 50, "the stop moved no position"

    # continue (the default): copied from the log start, the 50 counted in the process's status, metrics and page
    with running(path) as supervisor, MetricsServer(supervisor.status, 0, host="127.0.0.1") as server:
        wait_until(lambda: count_records(clusters.target, f"A.{topic}") == 150, COPY_TIMEOUT_S,
                   "the records after the gap")
        assert supervisor.status().flow("A->B").progress.removed == {(topic, 0): 50}
        metrics = scrape(server.port)
        key = tuple(sorted({"source": "A", "target": "B", "topic": f"A.{topic}", "partition": "0"}.items()))
        assert metrics[("sparkmirror_records_removed_before_copy_total", key)] == 50
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/api/status", timeout=10) as answer:
            doc = json.loads(answer.read())  # what the web view reads
        [flow_doc] = [f for f in doc["flows"] if f["name"] == "A->B"]
        assert flow_doc["removed_before_copy"] == 50 and flow_doc["partitions"][0]["removed_before_copy"] == 50
    assert read_status(path).flows[0].removed_before_copy == 0, "past the gap now"
