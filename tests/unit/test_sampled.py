from sparkmirror.sampled import SLOT_S, WINDOW_S, SampledStat


def test_values_in_the_window_give_min_max_avg_and_the_last_value():
    stat = SampledStat()
    stat.record(100.0, 10)
    stat.record(101.0, 30)
    stat.add(102.0, 2, 40, 15, 25)
    d = stat.distribution(103.0)
    assert (d.min, d.max, d.avg, d.last) == (10, 30, 20, 30)
    assert stat.totals(103.0) == (4, 80)


def test_slots_older_than_the_window_are_dropped_but_the_last_value_stays():
    stat = SampledStat()
    stat.record(0.0, 100)
    stat.record(WINDOW_S + SLOT_S, 1)
    d = stat.distribution(WINDOW_S + SLOT_S)
    assert (d.min, d.max, d.avg, d.last) == (1, 1, 1, 1)
    d = stat.distribution(10 * WINDOW_S)
    assert (d.min, d.max, d.avg, d.last) == (None, None, None, 1)
