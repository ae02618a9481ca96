"""Which database faults pass (ask for a redelivery) and which belong to one message (reject it): no database."""

import psycopg
import pytest
from django.db import DataError, IntegrityError, InterfaceError, OperationalError
from psycopg import errors

from core import db_faults
from core.db_faults import DatabaseUnavailable, is_passing, retrying


def wrapped(driver_error: Exception, django_class=OperationalError) -> Exception:
    """Return the error as Django raises it: its own class, caused by psycopg's."""
    try:
        try:
            raise driver_error
        except Exception as exc:
            raise django_class(str(exc)) from exc
    except Exception as outer:
        return outer


@pytest.mark.parametrize("fault", [
    errors.AdminShutdown("terminating connection due to administrator command"),
    errors.CannotConnectNow("the database system is starting up"),
    errors.CannotConnectNow("the database system is shutting down"),
    errors.TooManyConnections("sorry, too many clients already"),
    errors.ConnectionFailure("connection failure"),
    psycopg.OperationalError('connection failed: connection to server on socket "/x/.s.PGSQL.5432" failed: '
                             "No such file or directory"),
    psycopg.OperationalError("consuming input failed: server closed the connection unexpectedly"),
    errors.DeadlockDetected("deadlock detected"),
    errors.SerializationFailure("could not serialize access due to concurrent update"),
])
def test_a_fault_of_the_database_s_availability_passes(fault):
    assert is_passing(wrapped(fault))


def test_a_closed_connection_passes():
    assert is_passing(InterfaceError("connection already closed"))
    assert is_passing(wrapped(psycopg.InterfaceError("the connection is closed"), InterfaceError))


@pytest.mark.parametrize("fault, django_class", [
    (errors.StringDataRightTruncation("value too long for type character varying(20)"), DataError),
    (errors.UniqueViolation("duplicate key value violates unique constraint"), IntegrityError),
    (errors.ProgramLimitExceeded("index row size 9000 exceeds btree version 4 maximum 2704"), OperationalError),
    (psycopg.DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes"), DataError),
])
def test_a_problem_of_one_message_does_not_pass(fault, django_class):
    assert not is_passing(wrapped(fault, django_class))


def test_a_conflict_is_run_again_and_then_succeeds():
    calls = []

    def work():
        calls.append(1)
        if len(calls) < db_faults.CONFLICT_ATTEMPTS:
            raise wrapped(errors.DeadlockDetected("deadlock detected"))
        return "stored"

    assert retrying(work) == "stored" and len(calls) == db_faults.CONFLICT_ATTEMPTS


def test_a_conflict_that_outlasts_its_attempts_asks_for_a_redelivery():
    calls = []

    def work():
        calls.append(1)
        raise wrapped(errors.SerializationFailure("could not serialize access"))

    with pytest.raises(DatabaseUnavailable, match="SerializationFailure|could not serialize"):
        retrying(work)
    assert len(calls) == db_faults.CONFLICT_ATTEMPTS


def test_the_server_away_is_not_run_again_here_and_a_data_problem_propagates_as_it_is():
    calls = []

    def away():
        calls.append(1)
        raise wrapped(errors.CannotConnectNow("the database system is shutting down"))

    with pytest.raises(DatabaseUnavailable):
        retrying(away)
    assert len(calls) == 1  # a restart takes seconds: the sender's redelivery is the retry

    def too_long():
        raise wrapped(errors.StringDataRightTruncation("value too long"), DataError)

    with pytest.raises(DataError):
        retrying(too_long)
