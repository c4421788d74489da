"""Replication lag of a partition and a flow's recovery point (offsets/lag.py)."""

from __future__ import annotations

from sparkmirror.offsets.lag import PartitionLag, partition_lag, recovery_point

NOW = 1_700_000_000_000


def lag(end: int, position: int, oldest: int | None = None, has_record: bool = True) -> PartitionLag:
    return partition_lag("orders", 0, end, position, oldest, has_record, NOW)


def test_lag_is_end_minus_position_and_its_age_the_oldest_unreplicated_record():
    result = lag(end=110, position=100, oldest=NOW - 2_500)
    assert result.records == 10
    assert result.seconds(NOW) == 2.5
    assert result.seconds(NOW + 1_000) == 3.5, "the age keeps growing while nothing is replicated"


def test_caught_up_partition_has_no_lag_and_no_age():
    result = lag(end=100, position=100, oldest=NOW - 5_000)
    assert (result.records, result.oldest_timestamp_ms, result.seconds(NOW)) == (0, None, 0.0)


def test_position_past_the_end_is_not_negative_lag():
    assert lag(end=50, position=60).records == 0


def test_offsets_holding_only_transaction_markers_are_caught_up():
    result = lag(end=103, position=100, oldest=None, has_record=False)
    assert result.records == 0
    assert result.seconds(NOW) == 0.0


def test_unknown_oldest_record_gives_unknown_seconds_but_known_records():
    result = lag(end=103, position=100, oldest=None)
    assert result.records == 3
    assert result.seconds(NOW) is None


def test_a_timestamp_in_the_future_is_age_zero():
    assert lag(end=2, position=1, oldest=NOW + 10_000).seconds(NOW) == 0.0


def test_recovery_point_sums_records_and_takes_the_oldest_age():
    point = recovery_point([lag(10, 5, NOW - 1_000), lag(20, 20), lag(30, 27, NOW - 4_000)], NOW)
    assert (point.records, point.seconds) == (8, 4.0)


def test_recovery_point_seconds_unknown_when_a_lagging_partition_age_is_unknown():
    point = recovery_point([lag(10, 5, NOW - 1_000), lag(30, 27, None)], NOW)
    assert (point.records, point.seconds) == (8, None)


def test_recovery_point_of_nothing_is_zero():
    point = recovery_point([], NOW)
    assert (point.records, point.seconds) == (0, 0.0)
