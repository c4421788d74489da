"""The `measure lag` job against in-memory clusters: end offsets against positions, dated by the probe."""

from __future__ import annotations

from tests.unit.fakes import FakeClients, FakeCluster, load
from tests.unit.properties_text import A_TO_B_ORDERS as BASE

from sparkmirror.control.lag_meter import LagMeter
from sparkmirror.control.plane import FlowControl

NOW_MS = 1_700_000_000_000


def meter(positions, ends):
    flow = load(BASE).flow("A", "B")
    a = FakeCluster("A")
    a.add_topic("orders", 3)
    a.ends.update({("orders", p): end for p, end in enumerate(ends)})
    clients = FakeClients(a, FakeCluster("B"))
    return LagMeter(flow, a, clients, lambda: ({"orders": 3}, positions), clock_ms=lambda: NOW_MS), clients


def test_lag_is_end_minus_position_dated_by_the_oldest_unreplicated_record():
    lag_meter, clients = meter({("orders", 0): 10, ("orders", 1): 4, ("orders", 2): 7}, [10, 9, 7])
    clients.oldest[("orders", 1)] = NOW_MS - 2500
    lags = {(lag.topic, lag.partition): lag for lag in lag_meter.measure()}
    assert clients.probed == [{("orders", 1): (4, 9)}]  # only partitions behind are read
    assert [lags[("orders", p)].records for p in range(3)] == [0, 5, 0]
    assert lags[("orders", 1)].seconds(NOW_MS) == 2.5
    assert lags[("orders", 1)].seconds(NOW_MS + 1000) == 3.5  # the age keeps growing while nothing moves
    assert lags[("orders", 0)].seconds(NOW_MS) == 0.0
    assert lag_meter.latest == tuple(lags[("orders", p)] for p in range(3))


def test_only_transaction_markers_left_is_caught_up_and_an_unread_record_is_behind_with_unknown_age():
    lag_meter, clients = meter({("orders", 0): 8, ("orders", 1): 3, ("orders", 2): 0}, [10, 9, 0])
    clients.oldest[("orders", 0)] = None  # offsets 8 and 9 are commit markers
    lags = lag_meter.measure()
    assert (lags[0].records, lags[0].seconds(NOW_MS)) == (0, 0.0)
    assert (lags[1].records, lags[1].seconds(NOW_MS)) == (6, None)


def test_a_flow_reading_nothing_has_no_lag_and_reads_no_cluster():
    flow = load(BASE).flow("A", "B")
    a = FakeCluster("A", down=True)
    lag_meter = LagMeter(flow, a, FakeClients(a), lambda: ({}, {}))
    assert lag_meter.measure() == ()


def test_measure_lag_is_one_of_the_flows_jobs_on_its_own_schedule():
    flow = load(BASE + "sparkmirror.measure.lag.interval.seconds = 2\n").flow("A", "B")
    a, b = FakeCluster("A"), FakeCluster("B")
    plane = FlowControl(flow, a, b, FakeClients(a, b), lambda: {})
    job = next(j for j in plane.jobs() if j.name == "measure lag")
    assert (job.schedule.enabled, job.schedule.interval_s) == (True, 2)
