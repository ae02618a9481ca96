"""Circuit breaker decisions, shared across processes through a small atomic store.

Pure Python, no Django. The transitions are functions of (state, event, now):

    closed ──N consecutive infrastructure failures──▶ open
    open ──cool-down elapsed, next call──▶ half_open (that call is the single probe)
    half_open ──probe succeeds──▶ closed      half_open ──probe fails──▶ open (at once)

While the probe is in flight every other call is rejected. A probe that never reports back
(its process died) frees the slot after `probe_timeout_s`, so a crash cannot wedge the breaker.
Outcomes of calls admitted before the breaker opened are ignored once it is open or half-open:
only the probe decides.

The state lives behind `BreakerStore.update(name, decide)`, which must apply `decide` atomically
(read → decide → write) across every process that shares the store; see billing/api/breaker_store.py
for Redis and PostgreSQL, and `MemoryStore` below for one process and tests. The clock is
injected (`now`), and must be wall-clock time (`time.time`) when processes share a store:
monotonic clocks are not comparable between processes.

Why not pybreaker: its Redis storage keeps state and counter in separate keys updated without a
transaction, its half-open state lets every concurrent caller through rather than a single
probe, and it reads `datetime.now()` itself, so time cannot be injected. Keeping our own is
~150 lines of pure, fully tested decisions.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Protocol, TypeVar

CLOSED, OPEN, HALF_OPEN = "closed", "open", "half_open"
T = TypeVar("T")


@dataclass(frozen=True)
class CircuitState:
    state: str = CLOSED
    failures: int = 0  # consecutive infrastructure failures (kept when it opens, for display)
    opened_at: float | None = None
    probe_id: str | None = None
    probe_started_at: float | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, raw: str | bytes | None) -> CircuitState:
        if not raw:
            return cls()
        return cls(**json.loads(raw))


@dataclass(frozen=True)
class Policy:
    failure_threshold: int = 5
    cooldown_s: float = 30.0
    probe_timeout_s: float | None = None  # None: one cool-down

    def __post_init__(self):
        if self.failure_threshold < 1 or self.cooldown_s < 0:
            raise ValueError("failure_threshold must be ≥ 1 and cooldown_s ≥ 0")

    @property
    def probe_lease_s(self) -> float:
        return self.cooldown_s if self.probe_timeout_s is None else self.probe_timeout_s


@dataclass(frozen=True)
class Ticket:
    """Permission for one call; `probe_id` is set when the call is the half-open probe."""

    probe_id: str | None = None

    @property
    def is_probe(self) -> bool:
        return self.probe_id is not None


class CircuitOpen(Exception):
    """The breaker rejected the call without touching the remote service."""

    def __init__(self, name: str, state: CircuitState, retry_in_s: float):
        super().__init__(f"circuit {name!r} is {state.state}; retry in {retry_in_s:.1f}s")
        self.name, self.state, self.retry_in_s = name, state, retry_in_s


# --- pure transitions --------------------------------------------------------------------


def on_admit(
    state: CircuitState, *, now: float, policy: Policy, probe_id: str
) -> tuple[CircuitState, Ticket | None]:
    """Return the next state and a ticket, or None when the call must be rejected."""
    if state.state == CLOSED:
        return state, Ticket()
    if state.state == OPEN:
        if now - (state.opened_at or 0.0) < policy.cooldown_s:
            return state, None
        return replace(state, state=HALF_OPEN, probe_id=probe_id, probe_started_at=now), Ticket(probe_id)
    # half-open: exactly one probe in flight, unless the previous one was lost
    if state.probe_id is not None and now - (state.probe_started_at or 0.0) < policy.probe_lease_s:
        return state, None
    return replace(state, probe_id=probe_id, probe_started_at=now), Ticket(probe_id)


def on_success(state: CircuitState, ticket: Ticket) -> CircuitState:
    if state.state == CLOSED:
        return state if state.failures == 0 else CircuitState()
    if state.state == HALF_OPEN and ticket.is_probe and ticket.probe_id == state.probe_id:
        return CircuitState()
    return state


def on_failure(state: CircuitState, ticket: Ticket, *, now: float, policy: Policy) -> CircuitState:
    if state.state == CLOSED:
        failures = state.failures + 1
        if failures >= policy.failure_threshold:
            return CircuitState(state=OPEN, failures=failures, opened_at=now)
        return replace(state, failures=failures)
    if state.state == HALF_OPEN and ticket.is_probe and ticket.probe_id == state.probe_id:
        return CircuitState(state=OPEN, failures=state.failures, opened_at=now)
    return state


def retry_in(state: CircuitState, *, now: float, policy: Policy) -> float:
    """Return seconds until a call could be admitted again (0 when it could be now)."""
    if state.state == OPEN:
        return max(0.0, policy.cooldown_s - (now - (state.opened_at or 0.0)))
    if state.state == HALF_OPEN and state.probe_id is not None:
        return max(0.0, policy.probe_lease_s - (now - (state.probe_started_at or 0.0)))
    return 0.0


# --- storage ---------------------------------------------------------------------------


class BreakerStoreError(RuntimeError):
    """The shared store could not be read or written."""


class BreakerStore(Protocol):
    def load(self, name: str) -> CircuitState:
        """Return the current state (closed when never written)."""

    def update(self, name: str, decide: Callable[[CircuitState], tuple[CircuitState, T]]) -> T:
        """Atomically read the state, apply `decide`, write its new state if it changed; return its result.

        `decide` is pure and may run more than once (optimistic stores retry on contention).
        """


class MemoryStore:
    """Process-local store: a dict under a lock. For tests and single-process tools."""

    def __init__(self):
        self._states: dict[str, CircuitState] = {}
        self._lock = threading.Lock()

    def load(self, name: str) -> CircuitState:
        with self._lock:
            return self._states.get(name, CircuitState())

    def forget(self, name: str) -> None:
        with self._lock:
            self._states.pop(name, None)

    def update(self, name, decide):
        with self._lock:
            new, result = decide(self._states.get(name, CircuitState()))
            self._states[name] = new
            return result


# --- the breaker -----------------------------------------------------------------------


class CircuitBreaker:
    """Admit or reject calls to one remote service; record their outcomes."""

    def __init__(
        self,
        name: str,
        store: BreakerStore,
        policy: Policy | None = None,
        *,
        now: Callable[[], float] = time.time,
        new_probe_id: Callable[[], str] = lambda: uuid.uuid4().hex,
    ):
        self.name = name
        self.store = store
        self.policy = policy or Policy()
        self._now = now
        self._new_probe_id = new_probe_id

    def admit(self) -> Ticket:
        """Return a ticket for one call, or raise CircuitOpen."""
        probe_id = self._new_probe_id()

        def decide(state: CircuitState):
            now = self._now()
            new, ticket = on_admit(state, now=now, policy=self.policy, probe_id=probe_id)
            return new, (ticket, new, now)

        ticket, state, now = self.store.update(self.name, decide)
        if ticket is None:
            raise CircuitOpen(self.name, state, retry_in(state, now=now, policy=self.policy))
        return ticket

    def record_success(self, ticket: Ticket) -> CircuitState:
        def decide(state: CircuitState):
            new = on_success(state, ticket)
            return new, new

        return self.store.update(self.name, decide)

    def record_failure(self, ticket: Ticket) -> CircuitState:
        def decide(state: CircuitState):
            new = on_failure(state, ticket, now=self._now(), policy=self.policy)
            return new, new

        return self.store.update(self.name, decide)

    def state(self) -> CircuitState:
        return self.store.load(self.name)

    def reset(self) -> CircuitState:
        """Close the breaker by hand (operators, demos)."""
        return self.store.update(self.name, lambda state: (CircuitState(), CircuitState()))
