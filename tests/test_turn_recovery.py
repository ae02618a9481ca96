"""A turn that dies is answered once: its lease expires and the sweep queues it again; a turn whose trace
cannot be written records nothing (reply, trace and escalation are one transaction) and is answered once."""

from __future__ import annotations

import datetime as dt
import signal
import uuid

import psutil
import pytest
from django.db import connection

from bot.requeue import unanswered_messages, unanswered_requeue
from bot.turn import run_turn
from core import clock
from desk.models import Escalation, Message
from desk.turns import TurnLease
from tests.support.factories import conversation_start, customer_says
from tests.support.fake_openai import HANG, FakeOpenAI
from tests.support.worker import celery_worker, poll
from tests.test_celery_broker import redis_reachable
from traces.models import Trace

HUMAN_NOTICE_ROUTE = "quiero hablar con una persona"
needs_redis = pytest.mark.skipif(not redis_reachable(), reason="Redis is not reachable at 127.0.0.1:6379")


def bot_messages(conversation) -> list[Message]:
    return list(conversation.messages.filter(direction=Message.Direction.OUTBOUND, author=Message.Author.BOT))


@pytest.fixture
def trace_insert_fails_once():
    """Make PostgreSQL refuse the next trace insert once (a sequence, so the failure is not rolled back)."""
    name = f"trace_fail_{uuid.uuid4().hex[:8]}"
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE SEQUENCE {name}")
        cursor.execute(f"""
            CREATE FUNCTION {name}() RETURNS trigger AS $$
            BEGIN
                IF nextval('{name}') = 1 THEN RAISE EXCEPTION 'injected: the trace insert fails once'; END IF;
                RETURN NEW;
            END $$ LANGUAGE plpgsql""")
        cursor.execute(f"CREATE TRIGGER {name} BEFORE INSERT ON traces_trace FOR EACH ROW EXECUTE FUNCTION {name}()")
    yield
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TRIGGER IF EXISTS {name} ON traces_trace")
        cursor.execute(f"DROP FUNCTION IF EXISTS {name}()")
        cursor.execute(f"DROP SEQUENCE IF EXISTS {name}")


@pytest.mark.django_db(transaction=True)
def test_a_failed_trace_insert_records_no_reply_and_the_retry_sends_one(trace_insert_fails_once):
    conversation = conversation_start()
    message = customer_says(conversation, HUMAN_NOTICE_ROUTE)
    with pytest.raises(Exception, match="injected"):
        run_turn(message_id=message.pk)
    # Nothing of the failed turn is left: no notice for the customer, no escalation, no trace.
    assert bot_messages(conversation) == [] and not Escalation.objects.filter(conversation=conversation).exists()
    assert not Trace.objects.filter(message=message).exists()
    # The turn gave its lease up, so the sweep finds the message at once.
    assert unanswered_messages(now=clock.now() + dt.timedelta(milliseconds=1),
                               min_age=dt.timedelta(minutes=1), max_age=dt.timedelta(hours=1)) == [message.pk]
    trace = run_turn(message_id=message.pk)
    assert (trace.outcome, trace.escalation_reason) == ("escalated", "USER_REQUEST")
    assert len(bot_messages(conversation)) == 1 and trace.escalation.conversation_id == conversation.pk
    assert run_turn(message_id=message.pk) is None  # answered: a late redelivery does nothing


@pytest.mark.django_db
def test_a_live_lease_keeps_a_second_run_out_until_it_expires():
    message = customer_says(conversation_start(), HUMAN_NOTICE_ROUTE)
    first = TurnLease(message.pk, seconds=30)
    assert first.take()
    assert not TurnLease(message.pk).take()  # a redelivery while the turn runs
    Message.objects.filter(pk=message.pk).update(turn_lease_until=clock.now() - dt.timedelta(seconds=1))
    second = TurnLease(message.pk)
    assert second.take()  # the first run died: its lease expired without a trace
    with clock.pinned(clock.now() + dt.timedelta(seconds=11), frozen=True):
        first.renew()  # the old holder cannot extend what it lost
    stored = Message.objects.get(pk=message.pk)
    assert stored.turn_claimed_at == second.token and stored.turn_lease_until == second.token + second.length


@pytest.mark.django_db
def test_a_lease_is_pushed_once_a_third_of_it_has_passed_not_at_every_stage():
    message = customer_says(conversation_start(), HUMAN_NOTICE_ROUTE)
    start = clock.now().replace(microsecond=0)
    with clock.pinned(start, frozen=True):
        lease = TurnLease(message.pk, seconds=30)
        assert lease.take()
    until = lambda: Message.objects.get(pk=message.pk).turn_lease_until  # noqa: E731
    with clock.pinned(start + dt.timedelta(seconds=9), frozen=True):
        lease.renew()  # 21 s of the lease left: nothing written
    assert until() == start + dt.timedelta(seconds=30)
    with clock.pinned(start + dt.timedelta(seconds=10), frozen=True):
        lease.renew()
    assert until() == start + dt.timedelta(seconds=40)
    with clock.pinned(start + dt.timedelta(seconds=19), frozen=True):
        lease.renew()
    assert until() == start + dt.timedelta(seconds=40)


@pytest.mark.broker
@pytest.mark.django_db(transaction=True)
@needs_redis
def test_a_failed_trace_insert_under_a_real_worker_ends_with_one_reply(trace_insert_fails_once):
    conversation = conversation_start()
    message = customer_says(conversation, HUMAN_NOTICE_ROUTE)
    with celery_worker() as (client, queue, _worker):
        def send(message_id):
            client.send_task("bot.handle_inbound", args=[message_id], queue=queue)

        send(message.pk)
        poll(lambda: Trace.objects.filter(message=message).exists(), deadline_s=60,
             between=lambda: unanswered_requeue(queue=send, min_age=dt.timedelta(minutes=5)))
    assert Trace.objects.filter(message=message).count() == 1
    assert len(bot_messages(conversation)) == 1
    assert Escalation.objects.filter(conversation=conversation).count() == 1


@pytest.mark.broker
@pytest.mark.django_db(transaction=True)
@needs_redis
def test_a_worker_killed_mid_turn_is_answered_once_after_its_lease_expires(healthy_billing):
    """SIGKILL the pool child while the turn waits on the model: the process an out-of-memory killer picks.

    The worker's main process survives, sees the child lost and gives the task back to Redis
    (acks_late + reject_on_worker_lost); the redelivery finds the dead run's lease still live and does
    nothing, and once the lease (2 s here) expires the sweep queues the message and the next run answers.
    """
    conversation = conversation_start(customer_id="C-1001")
    message = customer_says(conversation, "¿cuánto debo este mes?")
    with FakeOpenAI() as fake:
        fake.chat_script = [HANG] + [{"customer_message": "Aquí tienes el detalle de tu cuenta [E1].",
                                      "internal_note": "Account summary [E1].", "evidence_ids": ["E1"],
                                      "needs_human": False}] * 3
        env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": fake.base_url, "OPENAI_TIMEOUT_S": "60",
               "BOT_TURN_LEASE_S": "2"}
        with celery_worker(pool="prefork", env=env) as (client, queue, worker):
            def send(message_id):
                client.send_task("bot.handle_inbound", args=[message_id], queue=queue)

            send(message.pk)
            poll(lambda: len(fake.requests) >= 1, deadline_s=60)  # the turn is waiting on the model
            [child] = psutil.Process(worker.pid).children()
            child.send_signal(signal.SIGKILL)
            trace = poll(lambda: Trace.objects.filter(message=message).first(), deadline_s=60,
                         between=lambda: unanswered_requeue(queue=send, min_age=dt.timedelta(minutes=5)))
            assert worker.poll() is None  # the worker itself lived on and served the retry
    assert trace.outcome == "answered" and Trace.objects.filter(message=message).count() == 1
    # The scripted draft never states the account's key figures, so the verified template answer goes out: once.
    assert trace.fallback == "template" and [m.text for m in bot_messages(conversation)] == [trace.final_text]
