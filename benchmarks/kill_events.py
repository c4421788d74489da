"""The kill trial's events: what happens to a replicator mid-copy, in which order, after which delay.

Three kinds: a kill -9 of the replicator's process (then restarted), a restart of the target broker and a
SIGKILL of one Spark executor JVM (neither restarts the replicator). The process kills come in --kills, the
other two once each, among them: the broker restart after about a third of the kills, the executor kill after
about two thirds, so each lands on a replicator that has already been killed and restarted. The delays are
drawn from one seeded generator, the kills' first, so a seed gives the same kill delays as before the other
events existed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

KILL = "kill"  # kill -9 of the replicator's process group, then a restart: the kind duplicates per kill count
BROKER_RESTART = "broker-restart"  # the target broker stopped (SIGTERM) and started again on its data
EXECUTOR_KILL = "executor-kill"  # SIGKILL of one executor JVM of the replicator's Spark application
KINDS = (KILL, BROKER_RESTART, EXECUTOR_KILL)


@dataclass(frozen=True, slots=True)
class Event:
    """One event of the schedule: made once new records appear on the target and `delay_s` has passed."""

    kind: str
    delay_s: float

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"event kind must be one of {', '.join(KINDS)}, not {self.kind!r}")
        if self.delay_s < 0:
            raise ValueError(f"an event's delay cannot be negative: {self.delay_s}")


def schedule(kills: int, min_delay_s: float, max_delay_s: float, seed: int) -> tuple[Event, ...]:
    """`kills` process kills with the broker restart after round(kills / 3) of them and the executor kill after
    round(2 * kills / 3); every delay uniform in [min_delay_s, max_delay_s], the same for every replicator."""
    if kills < 0 or not 0 <= min_delay_s <= max_delay_s:
        raise ValueError(f"need kills >= 0 and 0 <= min delay <= max delay, not {kills}, {min_delay_s}, {max_delay_s}")
    rng = random.Random(seed)  # noqa: S311 - the event moments, reproducible, not secrets

    def draw() -> float:
        return round(rng.uniform(min_delay_s, max_delay_s), 3)

    events = [Event(KILL, draw()) for _ in range(kills)]
    broker, executor = Event(BROKER_RESTART, draw()), Event(EXECUTOR_KILL, draw())
    events.insert((2 * kills + 1) // 3, executor)  # round(2k/3): 2k/3 is never halfway between integers
    events.insert((kills + 1) // 3, broker)  # at or before the executor kill's place: it stays after 2k/3 kills
    return tuple(events)
