"""The failover drill (issue 34, item 3): 0/0 on a healthy copy, the right numbers when the target lost records,
and nothing committed anywhere."""

from __future__ import annotations

from sparkmirror import client

from .conftest import commit, committed, delete_records, produce, records


def test_a_drill_reports_0_and_0_then_what_a_target_that_lost_records_would_miss(
        clusters, create_topic, mm2_properties, run_caught_up, tmp_path, unique):
    topic, group = f"drill-{unique}", f"drill-app-{unique}"
    remote = f"A.{topic}"
    create_topic("A", topic, 2)
    produce(clusters.source, topic, records("d", 200, 2))
    commit(clusters.source, group, {(topic, 0): 50, (topic, 1): 100})  # partition 1: read to its end
    path = mm2_properties(topic)
    run_caught_up(path, tmp_path / "state")

    healthy = client.drill(path, group, "A", "B")
    assert [(p.partition, p.reread, p.miss) for p in healthy.partitions] == [(0, 0, 0), (1, 0, 0)], healthy
    assert healthy.ok

    # the target loses its records 50 to 54 of partition 0 (DeleteRecords, as a broken disk or retention would)
    delete_records(clusters.target, remote, 0, 55)
    damaged = client.drill(path, group, "A", "B")
    by_partition = {p.partition: p for p in damaged.partitions}
    assert (by_partition[0].reread, by_partition[0].miss) == (0, 5)
    assert (by_partition[1].reread, by_partition[1].miss) == (0, 0)
    assert not damaged.ok
    # a drill changes nothing: the group has no offsets on the target, and its own on the source are as they were
    assert committed(clusters.target, group, [(remote, 0), (remote, 1)]) == {(remote, 0): -1001, (remote, 1): -1001}
    assert committed(clusters.source, group, [(topic, 0), (topic, 1)]) == {(topic, 0): 50, (topic, 1): 100}
