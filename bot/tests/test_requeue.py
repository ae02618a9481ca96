"""A message whose turn was never queued (the broker was down) or crashed is answered by the sweep, once."""

import datetime as dt
import io
import uuid

import pytest
from django.core.management import call_command

from bot.requeue import unanswered_messages, unanswered_requeue
from bot.tasks import handle_inbound
from core import clock
from desk.models import Message
from tests.support.factories import conversation_start
from traces.models import Trace

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _kb(sample_kb, healthy_billing):
    return sample_kb


def stored(conversation, text, *, age, kind="text", claimed_age=None, lease_left=None):
    """Store an inbound message as the webhook does, `age` ago, without running its turn; optionally
    claimed `claimed_age` ago by a turn whose lease ends `lease_left` from now (negative: expired)."""
    message = Message.objects.create(conversation=conversation, direction="in", author="customer", kind=kind,
                                     text=text, provider_message_id=f"wamid.{uuid.uuid4().hex}")
    now = clock.now()
    Message.objects.filter(pk=message.pk).update(
        created_at=now - age, turn_claimed_at=None if claimed_age is None else now - claimed_age,
        turn_lease_until=None if lease_left is None else now + lease_left)
    return message


@pytest.fixture
def conversation():
    return conversation_start(name="Test", inbound_at=None)


def test_a_message_left_unqueued_is_answered_and_a_second_sweep_does_nothing(conversation):
    lost = stored(conversation, "¿Cuánto cuesta la reconexión del servicio de fibra?", age=dt.timedelta(minutes=3))

    assert unanswered_requeue(queue=handle_inbound.delay) == [lost.pk]  # Celery is eager here: the turn runs now

    trace = Trace.objects.get(message=lost)
    assert trace.outcome in ("answered", "escalated")
    assert conversation.messages.filter(direction="out").exists()
    assert unanswered_requeue(queue=handle_inbound.delay) == []


def test_the_sweep_leaves_recent_answered_silent_and_expired_messages_alone(conversation):
    recent = stored(conversation, "hola, una pregunta", age=dt.timedelta(seconds=10))
    reaction = stored(conversation, "👍", age=dt.timedelta(minutes=3), kind="reaction")
    expired = stored(conversation, "¿y mi factura?", age=dt.timedelta(hours=30))
    in_flight = stored(conversation, "¿horarios?", age=dt.timedelta(minutes=3), claimed_age=dt.timedelta(minutes=1),
                       lease_left=dt.timedelta(seconds=20))  # a slow turn still renewing its lease
    crashed = stored(conversation, "¿horarios de soporte?", age=dt.timedelta(minutes=20),
                     claimed_age=dt.timedelta(minutes=15), lease_left=-dt.timedelta(minutes=14))
    answered = stored(conversation, "¿horarios del domingo?", age=dt.timedelta(minutes=3))
    Trace.objects.create(conversation=conversation, message=answered, channel="webchat", outcome="answered")

    found = unanswered_messages(now=clock.now(), min_age=dt.timedelta(minutes=1), max_age=dt.timedelta(hours=24))

    assert found == [crashed.pk]  # a lease that expired without a trace is a turn that died
    assert not {recent.pk, reaction.pk, expired.pk, in_flight.pk, answered.pk} & set(found)


def test_the_command_lists_on_a_dry_run_and_queues_otherwise(conversation):
    lost = stored(conversation, "¿Cuál es el horario de atención los domingos?", age=dt.timedelta(minutes=5))
    out = io.StringIO()
    call_command("inbound_requeue", "--dry-run", stdout=out)
    assert f"1 unanswered inbound messages: [{lost.pk}]" in out.getvalue()
    assert not Trace.objects.filter(message=lost).exists()

    call_command("inbound_requeue", stdout=out)
    assert Trace.objects.filter(message=lost).count() == 1


def test_the_sweep_skips_readable_kinds_with_no_words_as_ingest_does(conversation):
    blank = stored(conversation, "", age=dt.timedelta(minutes=3), kind="button")
    order = stored(conversation, "", age=dt.timedelta(minutes=3), kind="order")
    found = unanswered_messages(now=clock.now(), min_age=dt.timedelta(minutes=1), max_age=dt.timedelta(hours=24))
    assert order.pk in found and blank.pk not in found


def test_a_turn_the_database_restart_cut_before_its_claim_is_tried_again_at_once(conversation, monkeypatch):
    import psycopg.errors
    from django.db import OperationalError

    import bot.tasks

    waiting = stored(conversation, "¿Cuánto cuesta la reconexión del servicio de fibra?", age=dt.timedelta(0))
    real, calls = bot.tasks.run_turn, []

    def database_restarting(**kwargs):
        calls.append(kwargs["message_id"])
        if len(calls) < 3:  # as the server is shutting down, then starting up
            try:
                raise psycopg.errors.CannotConnectNow("the database system is shutting down")
            except psycopg.Error as exc:
                raise OperationalError(str(exc)) from exc
        return real(**kwargs)

    monkeypatch.setattr(bot.tasks, "run_turn", database_restarting)
    # Eager here: each retry runs at once instead of after its countdown (a worker waits 1 s, then 2 s).
    conf = handle_inbound.app.conf
    propagates, conf.task_eager_propagates = conf.task_eager_propagates, False
    try:
        handle_inbound.delay(waiting.pk)
    finally:
        conf.task_eager_propagates = propagates
    assert calls == [waiting.pk] * 3
    assert Trace.objects.filter(message=waiting).count() == 1


def test_a_problem_of_the_data_is_not_tried_again(conversation, monkeypatch):
    from django.db import DataError

    import bot.tasks

    calls = []

    def refuses(**kwargs):
        calls.append(kwargs["message_id"])
        raise DataError("value too long for type character varying(100)")

    monkeypatch.setattr(bot.tasks, "run_turn", refuses)
    with pytest.raises(DataError):
        handle_inbound.delay(stored(conversation, "hola", age=dt.timedelta(0)).pk)
    assert len(calls) == 1


def test_with_a_backlog_in_the_broker_the_sweep_leaves_unclaimed_messages_to_it(conversation):
    waiting = stored(conversation, "¿horarios de soporte?", age=dt.timedelta(minutes=3))
    crashed = stored(conversation, "¿y la reconexión?", age=dt.timedelta(minutes=3),
                     claimed_age=dt.timedelta(minutes=2), lease_left=-dt.timedelta(minutes=1))
    queued = []
    assert unanswered_requeue(queue=queued.append, backlog=500) == [crashed.pk]  # waiting is in that queue
    assert unanswered_requeue(queue=queued.append, backlog=3) == [waiting.pk, crashed.pk]
    assert unanswered_requeue(queue=queued.append, backlog=None) == [waiting.pk, crashed.pk]  # cannot tell
