"""ClientRenewal: when a cluster's admin client is replaced (issue 13: clients stuck after a restart)."""

from __future__ import annotations

from sparkmirror.kafka.connection import ClientRenewal


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_nothing_lost_nothing_renewed():
    renewal = ClientRenewal("A", Clock())
    renewal.answered()
    assert not renewal.due()


def test_a_lost_cluster_renews_the_client_once():
    renewal = ClientRenewal("A", Clock())
    renewal.lost("1/1 brokers are down")
    assert renewal.due()
    assert not renewal.due()
    assert renewal.renewals == 1


def test_trouble_that_lasts_backs_off_doubling_up_to_the_cap():
    clock = Clock()
    renewal = ClientRenewal("A", clock)
    renewed_at = []
    for _ in range(400):  # a call times out every 0.5 s for 200 s
        renewal.lost("timed out")
        if renewal.due():
            renewed_at.append(clock.now)
        clock.now += 0.5
    gaps = [b - a for a, b in zip(renewed_at, renewed_at[1:], strict=False)]
    assert gaps[:5] == [1.0, 2.0, 4.0, 8.0, 16.0]
    assert set(gaps[5:]) == {30.0}


def test_an_answer_resets_the_back_off():
    clock = Clock()
    renewal = ClientRenewal("A", clock)
    for _ in range(5):
        renewal.lost("timed out")
        renewal.due()
        clock.now += 60
    renewal.answered()
    renewal.lost("timed out again")
    assert renewal.due()
    clock.now += 1.0
    renewal.lost("and again")
    assert renewal.due(), "back to a 1 s back-off after the cluster answered"
