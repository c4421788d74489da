"""The coordination plan: which group the processes of a file share, and which flow each partition is."""

from __future__ import annotations

import pytest
from tests.unit.fakes import load
from tests.unit.properties_text import THREE_CLUSTERS

from sparkmirror.control.coordination import GROUP_PREFIX, plan_coordination
from sparkmirror.errors import ConfigError
from sparkmirror.model import Member

TEXT = THREE_CLUSTERS + "C->B.enabled = true\nA->B.enabled = true\nreplication.factor = 1\n"


def test_each_enabled_flow_is_a_partition_in_name_order_and_the_pairs_ride_along():
    plan = plan_coordination(load(TEXT), None)
    assert plan.partitions == ("A->B", "C->B")
    assert plan.cluster == "B"  # the target of the first flow by name
    assert plan.group.startswith(GROUP_PREFIX) and plan.topic == plan.group
    riders = [r for p in plan.partitions for r in plan.riders.get(p, ())]
    assert sorted(riders) == ["A->C (heartbeats)", "B->A (heartbeats)", "B->C (heartbeats)", "C->A (heartbeats)"]
    assert all(len(plan.riders[p]) == 2 for p in plan.partitions)  # spread over the flows
    assert plan.units_of({0}) == {"A->B", *plan.riders["A->B"]}
    assert plan.session_timeout_ms == 10_000


def test_every_process_of_a_file_derives_the_same_group_and_another_set_of_flows_another():
    assert plan_coordination(load(TEXT), None) == plan_coordination(load(TEXT), None)
    wider = plan_coordination(load(TEXT + "A->C.enabled = true\n"), None)
    assert wider.group != plan_coordination(load(TEXT), None).group
    # another --clusters runs other units (here fewer heartbeat pairs): a group of its own
    assert plan_coordination(load(TEXT), ("B",)).group != plan_coordination(load(TEXT), None).group
    assert plan_coordination(load(TEXT), ("C",)).partitions == ("A->C (heartbeats)", "B->C (heartbeats)")


def test_owners_map_each_unit_to_the_member_holding_its_partition():
    plan = plan_coordination(load(TEXT), None)
    owners = plan.owners([Member("m1", "p1", "h", (1,)), Member("m2", "p2", "h", ())])
    assert owners["C->B"].client_id == "p1" and "A->B" not in owners
    assert {u for u, m in owners.items() if m.client_id == "p1"} == plan.units_of({1})


def test_the_coordination_keys_are_read_and_checked():
    plan = plan_coordination(load(TEXT + "sparkmirror.coordination.cluster = C\n"
                                  "sparkmirror.coordination.session.timeout.ms = 6000\n"), None)
    assert (plan.cluster, plan.session_timeout_ms) == ("C", 6000)
    with pytest.raises(ConfigError, match="sparkmirror.coordination.cluster: 'D' is not a cluster alias"):
        load(TEXT + "sparkmirror.coordination.cluster = D\n")
    with pytest.raises(ConfigError, match="between 6000 and 300000"):
        load(TEXT + "sparkmirror.coordination.session.timeout.ms = 1000\n")


def test_a_file_with_nothing_to_run_has_no_group():
    assert plan_coordination(load(THREE_CLUSTERS + "emit.heartbeats.enabled = false\n"), None) is None
