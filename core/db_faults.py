"""Tell a database fault that passes (ours: ask the sender to try again) from one that a retry cannot fix.

A webhook that answers 200 tells Meta the delivery is done, and Meta never sends it again. So while the
database is away — the server restarting (`the database system is shutting down`, `… is starting up`), a
connection refused or lost, too many connections — the webhook answers 503 and Meta redelivers the whole
body later; what was stored before the fault is deduplicated by its provider id. A serialization failure or a
deadlock is retried here a few times first (`retrying`), then treated the same way. Anything else the database
refuses (a value too long, bad data, a constraint) is a problem of that one message: it is rejected and
logged, and the rest of the body is kept.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import TypeVar

import psycopg
from django.db import DatabaseError
from django.db import InterfaceError as DjangoInterfaceError

logger = logging.getLogger(__name__)

T = TypeVar("T")

# SQLSTATEs of faults that pass: the server going down or coming up, connections refused or exhausted.
PASSING_STATES = frozenset({
    "57P01",  # admin_shutdown: terminating connection due to administrator command (pg_ctl stop/restart)
    "57P02",  # crash_shutdown
    "57P03",  # cannot_connect_now: the database system is starting up / shutting down
    "57P05",  # idle_session_timeout
    "53300",  # too_many_connections
    "53400",  # configuration_limit_exceeded
    "55P03",  # lock_not_available (lock_timeout)
})
# Conflicts between transactions: the same work succeeds when run again.
RETRYABLE_STATES = frozenset({"40001", "40P01"})  # serialization_failure, deadlock_detected
CONNECTION_CLASS = "08"  # connection_exception and all its subclasses
# Attempts of one transaction that hit a serialization failure or a deadlock before the fault counts as passing.
CONFLICT_ATTEMPTS = 3


class DatabaseUnavailable(Exception):
    """The database is away for now; the request should be sent again later (HTTP 503)."""


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def sqlstate(exc: BaseException) -> str | None:
    """Return the SQLSTATE of the driver's error behind `exc` (Django wraps psycopg's), None without one."""
    for link in _chain(exc):
        state = getattr(link, "sqlstate", None)
        if state:
            return state
    return None


def is_conflict(exc: BaseException) -> bool:
    """Whether `exc` is a serialization failure or a deadlock: the transaction may simply be run again."""
    return sqlstate(exc) in RETRYABLE_STATES


def is_passing(exc: BaseException) -> bool:
    """Whether `exc` is a fault of the database's availability, not of the data: a later retry succeeds.

    A conflict (serialization failure, deadlock) counts too: by the time this is asked, its retries are spent.
    """
    state = sqlstate(exc)
    if state is not None:
        return state in PASSING_STATES or state in RETRYABLE_STATES or state.startswith(CONNECTION_CLASS)
    for link in _chain(exc):
        # No SQLSTATE: libpq could not reach the server, or lost it mid-statement ("server closed the
        # connection unexpectedly", "No such file or directory" on the socket), or the connection is closed.
        if isinstance(link, (psycopg.OperationalError, psycopg.InterfaceError, DjangoInterfaceError)):
            return True
    return False


def retrying(work: Callable[[], T], *, attempts: int = CONFLICT_ATTEMPTS, what: str = "the transaction") -> T:
    """Run `work` (one whole transaction), again after a serialization failure or a deadlock, up to `attempts`.

    Raise DatabaseUnavailable when the database is away or the conflicts outlast the attempts; any other
    DatabaseError (a problem of the data) propagates as it is.
    """
    for attempt in range(1, attempts + 1):
        try:
            return work()
        except DatabaseError as exc:
            if is_conflict(exc) and attempt < attempts:
                logger.info("%s hit %s (attempt %d of %d); running it again", what, sqlstate(exc), attempt, attempts)
                continue
            if is_passing(exc):
                raise DatabaseUnavailable(f"{what}: {_one_line(exc)}") from exc
            raise
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}"[:300]
