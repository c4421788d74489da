from sparkmirror.runtime.scheduler import Scheduler


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_jobs_run_on_their_interval_and_a_failing_job_never_stops_the_others(caplog):
    clock, runs = Clock(), []
    scheduler = Scheduler(clock)

    def broken():
        raise RuntimeError("target unreachable")

    scheduler.every("A->B: sync topic configs", 2, broken)
    scheduler.every("A->B: refresh topics", 1, lambda: runs.append(clock.now))
    for t in (0.5, 1.0, 2.0, 2.5, 3.0):
        clock.now = t
        scheduler.run_due()
    assert runs == [1.0, 2.0, 3.0]
    assert "A->B: sync topic configs failed (1 in a row): target unreachable" in caplog.text


def test_cancel_drops_a_flows_jobs_only():
    clock, runs = Clock(), []
    scheduler = Scheduler(clock)
    for name in ("A->B: refresh topics", "A->B: emit heartbeats", "B->A: refresh topics"):
        scheduler.every(name, 1, lambda name=name: runs.append(name))
    scheduler.cancel("A->B: ")
    assert not scheduler.scheduled("A->B: emit heartbeats") and scheduler.scheduled("B->A: refresh topics")
    clock.now = 1.0
    scheduler.run_due()
    assert runs == ["B->A: refresh topics"]


def test_a_stop_request_ends_the_round_before_the_next_job():
    clock, runs = Clock(), []
    scheduler = Scheduler(clock)
    stop = []
    scheduler.every("a", 1, lambda: (runs.append("a"), stop.append(True)))
    scheduler.every("b", 1, lambda: runs.append("b"))
    clock.now = 1
    scheduler.run_due(lambda: bool(stop))
    assert runs == ["a"]


def test_a_job_scheduled_once_runs_once():
    clock, runs = Clock(), []
    scheduler = Scheduler(clock)
    scheduler.once("A->B: refresh topics", lambda: runs.append(clock.now), in_s=1)
    for t in (0.5, 1.0, 2.0):
        clock.now = t
        scheduler.run_due()
    assert runs == [1.0] and scheduler.stats["A->B: refresh topics"].runs == 1


def test_two_callers_never_run_one_job_at_once():
    import threading

    clock, runs = Clock(), []
    scheduler = Scheduler(clock)
    inside, answer = threading.Event(), threading.Event()

    def slow() -> None:
        runs.append(clock.now)
        inside.set()
        answer.wait(10)

    scheduler.every("A->B: emit heartbeats", 1, slow)
    clock.now = 1.0
    loop = threading.Thread(target=scheduler.run_due)
    loop.start()
    assert inside.wait(10)
    other = threading.Thread(target=scheduler.run_due)  # a test's run_due while the loop's thread is in the job
    other.start()
    answer.set()
    loop.join(10)
    other.join(10)
    assert runs == [1.0]  # the second caller found it done, not due
