"""A reply whose delivery was lost (the broker unreachable at commit, or its queue lost in a restart) is sent by
the sweep, once; two deliveries of one reply at the same moment send it once."""

from __future__ import annotations

import datetime as dt
import threading

import psycopg
import pytest
from celery import current_app
from django.db import OperationalError, connections
from kombu.exceptions import OperationalError as BrokerError

from core import clock
from desk import services
from desk.delivery import stuck_sends_fail, undelivered_messages, undelivered_requeue
from desk.models import Channel, Message
from desk.tasks import deliver_outbound
from tests.support.factories import CUSTOMER, conversation_start
from tests.support.fake_graph import FakeGraph, Reply


@pytest.fixture
def graph(settings):
    with FakeGraph() as fake:
        settings.WHATSAPP_API_BASE_URL = fake.base_url
        settings.WHATSAPP_ACCESS_TOKEN = fake.access_token
        settings.WHATSAPP_PHONE_NUMBER_ID = fake.phone_number_id
        yield fake


@pytest.fixture
def broker_down(monkeypatch):
    def refuse(*args, **kwargs):
        raise BrokerError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(current_app.tasks["desk.deliver_outbound"], "delay", refuse)


def whatsapp_conversation():
    return conversation_start(channel=Channel.WHATSAPP, wa_id=CUSTOMER)


@pytest.mark.django_db
def test_a_reply_recorded_while_the_broker_is_down_is_sent_once_by_the_sweep(
        graph, broker_down, django_capture_on_commit_callbacks, caplog, monkeypatch):
    conversation = whatsapp_conversation()
    with django_capture_on_commit_callbacks(execute=True):  # the broker error does not reach the caller
        reply = services.bot_reply_record(conversation_id=conversation.pk, text="Su saldo es Bs. 10,00")
    assert "Could not queue the delivery of message" in caplog.text
    reply.refresh_from_db()
    assert reply.status == Message.Status.QUEUED and graph.requests == []

    now = clock.now()
    assert undelivered_messages(now=now, min_age=dt.timedelta(seconds=30)) == []  # too young: maybe on its way
    later = now + dt.timedelta(seconds=31)
    assert undelivered_messages(now=later, min_age=dt.timedelta(seconds=30)) == [reply.pk]

    delivered = []
    queue = lambda message_id: delivered.append(services.outbound_deliver(message_id=message_id))  # noqa: E731
    assert undelivered_requeue(queue=queue, now=later, min_age=dt.timedelta(seconds=30)) == [reply.pk]
    assert undelivered_requeue(queue=queue, now=later, min_age=dt.timedelta(seconds=30)) == []  # sent now
    reply.refresh_from_db()
    assert reply.status == Message.Status.SENT and len(graph.requests) == 1
    assert graph.requests[0]["body"]["text"]["body"] == "Su saldo es Bs. 10,00"


@pytest.mark.django_db
def test_the_sweep_leaves_sent_failed_and_old_replies_alone(graph):
    conversation = whatsapp_conversation()
    for status in (Message.Status.SENT, Message.Status.FAILED, Message.Status.QUEUED):
        Message.objects.create(conversation=conversation, direction=Message.Direction.OUTBOUND,
                               author=Message.Author.BOT, text=status, status=status)
    inbound = Message.objects.create(conversation=conversation, direction=Message.Direction.INBOUND,
                                     author=Message.Author.CUSTOMER, text="hola", status=Message.Status.QUEUED)
    queued = Message.objects.get(text=Message.Status.QUEUED)
    soon = clock.now() + dt.timedelta(minutes=5)
    assert undelivered_messages(now=soon, min_age=dt.timedelta(seconds=30)) == [queued.pk]
    assert inbound.pk not in undelivered_messages(now=soon, min_age=dt.timedelta(seconds=30))
    a_day_later = clock.now() + dt.timedelta(hours=25)  # WhatsApp would refuse free text now
    assert undelivered_messages(now=a_day_later, min_age=dt.timedelta(seconds=30)) == []


@pytest.mark.django_db(transaction=True)
def test_two_deliveries_of_one_reply_at_once_send_it_once(graph):
    conversation = whatsapp_conversation()
    reply = Message.objects.create(conversation=conversation, direction=Message.Direction.OUTBOUND,
                                   author=Message.Author.BOT, text="Su saldo es Bs. 10,00",
                                   status=Message.Status.QUEUED)
    graph.script = [Reply(200, FakeGraph.accepted().body, delay_s=0.5), FakeGraph.accepted()]
    results = []

    def deliver():
        try:
            results.append(services.outbound_deliver(message_id=reply.pk))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=deliver) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    reply.refresh_from_db()
    assert len(graph.requests) == 1 and reply.status == Message.Status.SENT
    assert len(results) == 2  # both ran: one sent it, the other found it taken (or already sent)


@pytest.mark.django_db
def test_with_a_backlog_in_the_broker_the_delivery_sweep_waits(graph):
    conversation = whatsapp_conversation()
    reply = Message.objects.create(conversation=conversation, direction=Message.Direction.OUTBOUND,
                                   author=Message.Author.BOT, text="hola", status=Message.Status.QUEUED)
    later = clock.now() + dt.timedelta(minutes=2)
    queued = []
    assert undelivered_requeue(queue=queued.append, now=later, min_age=dt.timedelta(seconds=30), backlog=500) == []
    assert undelivered_requeue(queue=queued.append, now=later, min_age=dt.timedelta(seconds=30), backlog=0) == [
        reply.pk]


@pytest.mark.django_db(transaction=True)
def test_a_database_restart_after_the_send_records_it_and_never_sends_it_again(graph, monkeypatch):
    """The send happens outside the claim's transaction; a lost connection when its result is written is retried,
    and a second delivery of the same reply (the task redelivered, the sweep) sends nothing."""
    conversation = whatsapp_conversation()
    reply = Message.objects.create(conversation=conversation, direction=Message.Direction.OUTBOUND,
                                   author=Message.Author.BOT, text="Su saldo es Bs. 10,00",
                                   status=Message.Status.QUEUED)
    real_save, cut = Message.save, []

    def save_after_a_restart(self, *args, **kwargs):
        if self.status == Message.Status.SENT and not cut:
            cut.append(self.pk)
            raise OperationalError("terminating connection due to administrator command")
        return real_save(self, *args, **kwargs)

    monkeypatch.setattr(Message, "save", save_after_a_restart)
    pauses = []
    services.outbound_deliver(message_id=reply.pk, sleep=pauses.append)
    reply.refresh_from_db()
    assert cut == [reply.pk] and pauses == [services.SEND_RECORD_PAUSE_S]
    assert reply.status == Message.Status.SENT and len(graph.requests) == 1
    services.outbound_deliver(message_id=reply.pk)
    assert len(graph.requests) == 1


@pytest.mark.django_db(transaction=True)
def test_a_database_restart_right_after_the_claim_still_sends_the_reply_once(graph):
    """Nothing between the committed claim and the send asks the database: with it away at that moment the reply
    still goes out, once, and is recorded as sent when the database is back."""
    conversation = whatsapp_conversation()
    reply = Message.objects.create(conversation=conversation, direction=Message.Direction.OUTBOUND,
                                   author=Message.Author.BOT, text="Su saldo es Bs. 10,00",
                                   status=Message.Status.QUEUED)
    claimed, refused = [], []

    def away_between_claim_and_send(execute, sql, params, many, context):
        if claimed and not graph.requests:  # the claim is committed, the send has not happened
            refused.append(sql)
            raise OperationalError("the database system is shutting down")
        result = execute(sql, params, many, context)
        if sql.startswith("UPDATE") and Message.Status.SENDING in (params or ()):
            claimed.append(reply.pk)
        return result

    with connections["default"].execute_wrapper(away_between_claim_and_send):
        services.outbound_deliver(message_id=reply.pk, sleep=lambda seconds: None)
    reply.refresh_from_db()
    assert claimed == [reply.pk] and refused == []
    assert reply.status == Message.Status.SENT and len(graph.requests) == 1


@pytest.mark.django_db(transaction=True)
def test_a_delivery_the_database_refused_is_tried_again_and_sent_once(graph):
    conversation = whatsapp_conversation()
    reply = Message.objects.create(conversation=conversation, direction=Message.Direction.OUTBOUND,
                                   author=Message.Author.BOT, text="hola", status=Message.Status.QUEUED)
    refused = []

    def away_once(execute, sql, params, many, context):
        if "FOR UPDATE" in sql and not refused:
            refused.append(sql)
            raise OperationalError("the database is away") from psycopg.OperationalError(
                "consuming input failed: server closed the connection unexpectedly")
        return execute(sql, params, many, context)

    with connections["default"].execute_wrapper(away_once):
        deliver_outbound.apply(args=[reply.pk], throw=False)  # eager: the retry runs at once
    reply.refresh_from_db()
    assert len(refused) == 1 and reply.status == Message.Status.SENT and len(graph.requests) == 1


@pytest.mark.django_db
def test_a_reply_left_mid_send_is_marked_failed_for_an_agent_not_sent_again(graph):
    conversation = whatsapp_conversation()
    reply = Message.objects.create(conversation=conversation, direction=Message.Direction.OUTBOUND,
                                   author=Message.Author.BOT, text="hola", status=Message.Status.SENDING,
                                   status_at=clock.now())
    soon, later = clock.now() + dt.timedelta(minutes=1), clock.now() + dt.timedelta(minutes=11)
    assert stuck_sends_fail(now=soon, after=dt.timedelta(minutes=10)) == []
    assert undelivered_requeue(queue=lambda pk: services.outbound_deliver(message_id=pk), now=later,
                               min_age=dt.timedelta(seconds=30)) == []
    assert stuck_sends_fail(now=later, after=dt.timedelta(minutes=10)) == [reply.pk]
    reply.refresh_from_db()
    assert reply.status == Message.Status.FAILED and "may or may not have reached" in reply.error
    assert graph.requests == []
    assert conversation.events.filter(kind="send_failed").count() == 1
