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
