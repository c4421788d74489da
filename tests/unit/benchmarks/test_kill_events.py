"""The kill trial's schedule: where the broker restart and the executor kill fall among the process kills, and
that a seed gives the kills the delays it gave them before the other events existed."""

from __future__ import annotations

import random

import pytest
from benchmarks.kill_events import BROKER_RESTART, EXECUTOR_KILL, KILL, Event, schedule


def kinds(events: tuple[Event, ...]) -> list[str]:
    return [e.kind for e in events]


@pytest.mark.parametrize(("kills", "broker_after", "executor_after"), [
    (0, 0, 0), (1, 0, 1), (2, 1, 1), (3, 1, 2), (20, 7, 13)])
def test_the_broker_restart_comes_after_a_third_of_the_kills_and_the_executor_kill_after_two_thirds(
        kills, broker_after, executor_after):
    events = kinds(schedule(kills, 0.0, 2.0, seed=42))
    assert events.count(KILL) == kills and events.count(BROKER_RESTART) == events.count(EXECUTOR_KILL) == 1
    assert events[:events.index(BROKER_RESTART)].count(KILL) == broker_after
    assert events[:events.index(EXECUTOR_KILL)].count(KILL) == executor_after
    assert events.index(BROKER_RESTART) < events.index(EXECUTOR_KILL)


def test_the_small_check_interleaves_every_kind():
    assert kinds(schedule(3, 0.0, 2.0, seed=42)) == [KILL, BROKER_RESTART, KILL, EXECUTOR_KILL, KILL]


def test_a_seed_gives_the_kills_the_delays_drawn_first_and_the_other_events_the_next_two():
    rng = random.Random(7)  # noqa: S311 - the same draws as the schedule, no secret
    drawn = [round(rng.uniform(0.5, 1.5), 3) for _ in range(6)]
    events = schedule(4, 0.5, 1.5, seed=7)
    assert [e.delay_s for e in events if e.kind == KILL] == drawn[:4]
    assert [e.delay_s for e in events if e.kind != KILL] == drawn[4:]
    assert events == schedule(4, 0.5, 1.5, seed=7)


def test_delays_stay_in_their_range():
    assert all(1.0 <= e.delay_s <= 1.25 for e in schedule(30, 1.0, 1.25, seed=3))


@pytest.mark.parametrize(("kills", "low", "high"), [(-1, 0.0, 1.0), (2, 1.0, 0.5), (2, -0.1, 1.0)])
def test_a_schedule_needs_kills_and_an_ordered_nonnegative_delay_range(kills, low, high):
    with pytest.raises(ValueError, match="need kills"):
        schedule(kills, low, high, seed=1)


def test_an_event_is_one_of_the_known_kinds_with_a_delay():
    with pytest.raises(ValueError, match="kind"):
        Event("pause", 1.0)
    with pytest.raises(ValueError, match="negative"):
        Event(KILL, -1.0)
