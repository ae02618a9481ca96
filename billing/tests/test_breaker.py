"""Circuit breaker decisions with an injected clock: no database, no network, no sleep."""

import threading

import pytest

from billing.api.breaker import (
    CLOSED,
    HALF_OPEN,
    OPEN,
    CircuitBreaker,
    CircuitOpen,
    CircuitState,
    MemoryStore,
    Policy,
    Ticket,
    on_admit,
    on_failure,
    on_success,
    retry_in,
)


class Clock:
    def __init__(self, start: float = 1_000_000.0):
        self.t = start

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


def make_breaker(threshold=3, cooldown=30.0, probe_timeout=None, clock=None):
    clock = clock or Clock()
    ids = iter(f"probe-{n}" for n in range(1, 1000))
    breaker = CircuitBreaker(
        "billing-api",
        MemoryStore(),
        Policy(threshold, cooldown, probe_timeout),
        now=clock,
        new_probe_id=lambda: next(ids),
    )
    return breaker, clock


def fail(breaker, times=1):
    for _ in range(times):
        breaker.record_failure(breaker.admit())


def test_closed_until_threshold_consecutive_failures_then_open():
    breaker, _ = make_breaker(threshold=3)
    fail(breaker, 2)
    assert breaker.state().state == CLOSED and breaker.state().failures == 2
    fail(breaker)
    assert breaker.state().state == OPEN
    with pytest.raises(CircuitOpen) as excinfo:
        breaker.admit()
    assert excinfo.value.retry_in_s == pytest.approx(30.0)


def test_a_success_breaks_the_streak_of_failures():
    breaker, _ = make_breaker(threshold=3)
    fail(breaker, 2)
    breaker.record_success(breaker.admit())
    fail(breaker, 2)
    assert breaker.state() == CircuitState(state=CLOSED, failures=2)


@pytest.mark.parametrize(
    ("elapsed", "admitted"),
    [(0.0, False), (29.999, False), (30.0, True), (45.0, True)],
)
def test_open_rejects_until_the_cooldown_has_elapsed(elapsed, admitted):
    breaker, clock = make_breaker(threshold=1, cooldown=30.0)
    fail(breaker)
    clock.advance(elapsed)
    if admitted:
        ticket = breaker.admit()
        assert ticket.is_probe and breaker.state().state == HALF_OPEN
    else:
        with pytest.raises(CircuitOpen) as excinfo:
            breaker.admit()
        assert excinfo.value.retry_in_s == pytest.approx(30.0 - elapsed)


def test_half_open_lets_exactly_one_probe_through_while_it_is_in_flight():
    breaker, clock = make_breaker(threshold=1, cooldown=30.0)
    fail(breaker)
    clock.advance(30)
    probe = breaker.admit()
    assert probe == Ticket("probe-2")  # probe-1 was the id offered to the first (closed) admission
    for _ in range(5):
        clock.advance(1)
        with pytest.raises(CircuitOpen):
            breaker.admit()
    assert breaker.state().probe_id == "probe-2"


def test_successful_probe_closes_the_breaker():
    breaker, clock = make_breaker(threshold=2, cooldown=30.0)
    fail(breaker, 2)
    clock.advance(30)
    breaker.record_success(breaker.admit())
    assert breaker.state() == CircuitState()
    assert not breaker.admit().is_probe


def test_failed_probe_reopens_at_once_with_a_fresh_cooldown():
    breaker, clock = make_breaker(threshold=2, cooldown=30.0)
    fail(breaker, 2)
    clock.advance(40)
    probe = breaker.admit()
    clock.advance(2)  # the probe took 2 s to fail
    breaker.record_failure(probe)
    state = breaker.state()
    assert state.state == OPEN and state.opened_at == clock()
    clock.advance(29)
    with pytest.raises(CircuitOpen):
        breaker.admit()
    clock.advance(1)
    assert breaker.admit().is_probe


def test_outcomes_of_calls_admitted_before_the_breaker_opened_are_ignored():
    breaker, clock = make_breaker(threshold=2, cooldown=30.0)
    slow_call = breaker.admit()  # admitted while closed, answers late
    fail(breaker, 2)
    assert breaker.state().state == OPEN
    breaker.record_success(slow_call)
    assert breaker.state().state == OPEN, "a stale success must not close an open breaker"
    clock.advance(30)
    probe = breaker.admit()
    breaker.record_success(slow_call)
    breaker.record_failure(slow_call)
    assert breaker.state().state == HALF_OPEN and breaker.state().probe_id == probe.probe_id
    breaker.record_success(probe)
    assert breaker.state().state == CLOSED


def test_a_lost_probe_frees_the_slot_after_its_lease_and_its_late_answer_is_ignored():
    breaker, clock = make_breaker(threshold=1, cooldown=30.0, probe_timeout=10.0)
    fail(breaker)
    clock.advance(30)
    lost = breaker.admit()
    clock.advance(9.9)
    with pytest.raises(CircuitOpen) as excinfo:
        breaker.admit()
    assert excinfo.value.retry_in_s == pytest.approx(0.1)
    clock.advance(0.1)
    replacement = breaker.admit()
    assert replacement.is_probe and replacement != lost
    breaker.record_success(lost)
    assert breaker.state().state == HALF_OPEN
    breaker.record_failure(replacement)
    assert breaker.state().state == OPEN


def test_reset_closes_by_hand():
    breaker, _ = make_breaker(threshold=1)
    fail(breaker)
    breaker.reset()
    assert breaker.state() == CircuitState()


@pytest.mark.parametrize(
    ("state", "ticket", "expected"),
    [
        (CircuitState(), Ticket(), CircuitState(failures=1)),
        (CircuitState(failures=2), Ticket(), CircuitState(state=OPEN, failures=3, opened_at=50.0)),
        (
            CircuitState(state=OPEN, failures=3, opened_at=10.0),
            Ticket(),
            CircuitState(state=OPEN, failures=3, opened_at=10.0),
        ),
        (
            CircuitState(state=HALF_OPEN, failures=3, opened_at=10.0, probe_id="p", probe_started_at=40.0),
            Ticket("p"),
            CircuitState(state=OPEN, failures=3, opened_at=50.0),
        ),
        (
            CircuitState(state=HALF_OPEN, failures=3, opened_at=10.0, probe_id="p", probe_started_at=40.0),
            Ticket("other"),
            CircuitState(state=HALF_OPEN, failures=3, opened_at=10.0, probe_id="p", probe_started_at=40.0),
        ),
    ],
)
def test_on_failure_table(state, ticket, expected):
    assert on_failure(state, ticket, now=50.0, policy=Policy(3, 30.0)) == expected


@pytest.mark.parametrize(
    ("state", "ticket", "expected"),
    [
        (CircuitState(failures=2), Ticket(), CircuitState()),
        (
            CircuitState(state=OPEN, failures=3, opened_at=10.0),
            Ticket(),
            CircuitState(state=OPEN, failures=3, opened_at=10.0),
        ),
        (
            CircuitState(state=HALF_OPEN, failures=3, opened_at=10.0, probe_id="p", probe_started_at=40.0),
            Ticket("p"),
            CircuitState(),
        ),
    ],
)
def test_on_success_table(state, ticket, expected):
    assert on_success(state, ticket) == expected


def test_pure_admit_and_retry_in_agree():
    policy = Policy(1, 30.0)
    state = CircuitState(state=OPEN, failures=1, opened_at=100.0)
    assert on_admit(state, now=120.0, policy=policy, probe_id="x") == (state, None)
    assert retry_in(state, now=120.0, policy=policy) == pytest.approx(10.0)
    half, ticket = on_admit(state, now=130.0, policy=policy, probe_id="x")
    assert ticket == Ticket("x") and half.state == HALF_OPEN and half.probe_started_at == 130.0
    assert retry_in(half, now=135.0, policy=policy) == pytest.approx(25.0)


def test_state_round_trips_through_json_and_policy_rejects_nonsense():
    state = CircuitState(state=HALF_OPEN, failures=4, opened_at=1.5, probe_id="abc", probe_started_at=2.5)
    assert CircuitState.from_json(state.to_json()) == state
    assert CircuitState.from_json(None) == CircuitState()
    with pytest.raises(ValueError):
        Policy(failure_threshold=0)


def test_concurrent_threads_in_half_open_get_a_single_probe():
    breaker, clock = make_breaker(threshold=1, cooldown=30.0)
    fail(breaker)
    clock.advance(31)
    barrier = threading.Barrier(16)
    outcomes = []

    def worker():
        barrier.wait()
        try:
            outcomes.append(breaker.admit().is_probe)
        except CircuitOpen:
            outcomes.append(None)

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count(True) == 1 and outcomes.count(None) == 15
