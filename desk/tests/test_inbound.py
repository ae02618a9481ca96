"""The one inbound path of every channel: the reopen rule, edits and deletions, long text, message kinds."""

import json
import logging
import threading
import uuid
from functools import partial

import pytest
from celery import current_app
from django.db import DataError, connection
from django.test import Client
from django.urls import reverse
from kombu.exceptions import OperationalError

import desk.inbound
from bot.turn import run_turn
from bot.writer import TemplateWriter
from core import clock
from desk import services
from desk.chat import chat_message_receive
from desk.models import Channel, Contact, Conversation, Event, Message
from desk.whatsapp import USER_ID_MAX, WA_ID_MAX, WAMID_MAX
from tests.support.factories import CUSTOMER, WEBHOOK_URL, conversation_start, in_thread, sign, text_body
from tests.support.fake_graph import FakeGraph, change_value, delivery_status, inbound_message, webhook_body

pytestmark = pytest.mark.django_db
LONG = "¿Por qué" + " mi factura subió tanto?" * 500  # 12,008 characters


@pytest.fixture
def channel_customer(deliver, django_capture_on_commit_callbacks):
    """Return a function that makes the customer write on the given channel; it returns the stored message."""

    def write(channel: str, text: str, conversation: Conversation | None = None) -> Message:
        if channel == Channel.WHATSAPP:
            wamid = f"wamid.{uuid.uuid4().hex}"
            assert deliver(text_body(wamid=wamid, body=text)).status_code == 200
            return Message.objects.get(provider_message_id=wamid)
        conversation = conversation or conversation_start(channel=Channel.WEBCHAT)
        with django_capture_on_commit_callbacks(execute=True):
            return chat_message_receive(conversation=Conversation.objects.get(pk=conversation.pk), text=text)

    return write


def thread_page(make_staff, conversation) -> str:
    browser = Client()
    browser.force_login(make_staff(f"reader-{uuid.uuid4().hex[:6]}", "agent"))
    return browser.get(reverse("desk:conversation", args=[conversation.pk])).content.decode()


# The reopen rule, the same on every channel -----------------------------------------------------

@pytest.mark.parametrize("channel", [Channel.WHATSAPP, Channel.WEBCHAT])
@pytest.mark.parametrize("to_human", [False, True])
def test_a_customer_writing_after_resolve_reopens_the_same_conversation(
        channel, to_human, channel_customer, queued, make_staff, settings):
    settings.DESK_REOPEN_TO_HUMAN = to_human
    ana = make_staff("ana", "agent")
    first = channel_customer(channel, "quiero hablar con una persona")
    conversation = first.conversation
    services.conversation_take_over(conversation_id=conversation.pk, agent=ana)
    services.conversation_resolve(conversation_id=conversation.pk, agent=ana)

    again = channel_customer(channel, "hola otra vez, ¿cuánto debo?", conversation)

    conversation.refresh_from_db()
    assert again.conversation_id == conversation.pk
    assert Conversation.objects.filter(contact=conversation.contact).count() == 1
    expected = ("open", "human", ana) if to_human else ("open", "bot", None)
    assert (conversation.status, conversation.handler, conversation.assignee) == expected
    event = Event.objects.get(conversation=conversation, kind="reopened")
    assert event.detail == {"to": "human" if to_human else "bot", "channel": channel, "message_id": again.pk}
    assert queued[-1] == again.pk
    label = "for a person to answer" if to_human else "back to the bot"
    assert f"reopened by the customer&#x27;s message, {label}" in thread_page(make_staff, conversation)


def test_both_channels_store_through_the_one_inbound_function(channel_customer, queued, monkeypatch):
    calls = []
    original = desk.inbound.inbound_messages_store

    def spy(**kwargs):
        calls.append(kwargs["channel"])
        return original(**kwargs)

    monkeypatch.setattr(desk.inbound, "inbound_messages_store", spy)
    channel_customer(Channel.WHATSAPP, "hola")
    channel_customer(Channel.WEBCHAT, "hola")
    assert calls == [Channel.WHATSAPP, Channel.WEBCHAT]


def test_a_reaction_after_resolve_is_filed_without_reopening(deliver, queued, make_staff):
    deliver(text_body(wamid="wamid.Q"))
    conversation = Conversation.objects.get()
    services.conversation_resolve(conversation_id=conversation.pk, agent=make_staff("ana", "agent"))
    reaction = inbound_message("reaction", wamid="wamid.THUMBS", reaction={"message_id": "wamid.A",
                                                                            "emoji": "\U0001F44D"})
    assert deliver(webhook_body(change_value(messages=[reaction]))).json()["reopened"] == 0
    conversation.refresh_from_db()
    assert conversation.status == "resolved" and Conversation.objects.count() == 1
    assert Message.objects.get(provider_message_id="wamid.THUMBS").conversation == conversation
    assert not Event.objects.filter(kind="reopened").exists() and len(queued) == 1


def test_a_redelivery_after_resolve_does_not_reopen(deliver, queued, make_staff):
    deliver(text_body(wamid="wamid.ONCE"))
    conversation = Conversation.objects.get()
    services.conversation_resolve(conversation_id=conversation.pk, agent=make_staff("ana", "agent"))
    response = deliver(text_body(wamid="wamid.ONCE"))
    assert response.json()["duplicates"] == 1 and response.json()["reopened"] == 0
    conversation.refresh_from_db()
    assert conversation.status == "resolved" and len(queued) == 1


def test_the_web_chat_survives_an_unreachable_broker_like_the_webhook(client, monkeypatch, caplog,
                                                                      django_capture_on_commit_callbacks):
    def broker_down(message_id):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(current_app.tasks["bot.handle_inbound"], "delay", broker_down)
    client.post(reverse("desk:chat"), {"customer_id": ""})
    with (caplog.at_level(logging.ERROR, logger="desk.inbound"),
          django_capture_on_commit_callbacks(execute=True)):
        response = client.post(reverse("desk:chat"), {"text": "¿cuánto cuesta la reconexión?"})
    assert response.status_code == 302
    message = Message.objects.get(conversation__channel=Channel.WEBCHAT)
    assert message.text == "¿cuánto cuesta la reconexión?"
    assert f"Could not queue the bot turn for message {message.pk}" in caplog.text


# Long text --------------------------------------------------------------------------------------

@pytest.mark.parametrize("channel", [Channel.WHATSAPP, Channel.WEBCHAT])
def test_text_over_4096_characters_is_stored_cut_flagged_and_still_gets_its_turn(
        channel, channel_customer, queued, make_staff):
    message = channel_customer(channel, LONG)
    assert len(message.text) == 4096 and message.text.startswith(LONG[:3000])
    assert message.text.endswith("[… cut: the message had 12,008 characters]")
    assert (message.payload["truncated"], message.payload["text_length"]) == (True, 12008)
    assert len(str(message.payload)) < 20_000  # Meta's copy of the message is cut too
    assert queued == [message.pk]  # the bot escalates a message it could only read in part
    page = thread_page(make_staff, message.conversation)
    assert "cut at 4,096 characters: the customer sent 12,008" in page


def test_the_web_chat_strips_nul_the_database_cannot_store(channel_customer, queued):
    message = channel_customer(Channel.WEBCHAT, "hola\x00 ¿saldo?")
    assert message.text == "hola ¿saldo?" and queued == [message.pk]


# Edits and deletions ----------------------------------------------------------------------------

def edit_body(*, wamid, original, text, wa_id=CUSTOMER):
    edit = inbound_message("edit", wa_id=wa_id, wamid=wamid, edit={
        "original_message_id": original, "message": {"type": "text", "text": {"body": text}}})
    return webhook_body(change_value(messages=[edit]))


def test_an_edit_before_the_turn_read_the_message_replaces_its_text_and_queues_no_second_turn(
        deliver, queued, make_staff):
    deliver(text_body(wamid="wamid.ORIG", body="mi contrato es 1234"))
    response = deliver(edit_body(wamid="wamid.EDIT", original="wamid.ORIG", text="mi contrato es 1243"))
    assert response.status_code == 200 and response.json()["queued"] == 0
    original = Message.objects.get(provider_message_id="wamid.ORIG")
    assert original.text == "mi contrato es 1243"
    assert original.payload["text_before_edit"] == "mi contrato es 1234"
    assert queued == [original.pk]  # the turn already queued answers the edited text
    assert "edited by the customer before the bot read it" in thread_page(make_staff, original.conversation)


def test_an_edit_after_the_turn_answered_is_shown_in_the_thread(deliver, queued, make_staff, healthy_billing):
    deliver(text_body(wamid="wamid.ORIG", body="quiero hablar con una persona"))
    original = Message.objects.get(provider_message_id="wamid.ORIG")
    assert run_turn(message_id=original.pk, writer=TemplateWriter()) is not None
    deliver(edit_body(wamid="wamid.EDIT", original="wamid.ORIG", text="ya no, gracias"))
    original.refresh_from_db()
    assert original.text == "quiero hablar con una persona" and queued == [original.pk]
    page = thread_page(make_staff, original.conversation)
    assert "ya no, gracias" in page and "edited an earlier message" in page
    assert "edited by the customer after the bot read it" in page


def test_an_edit_naming_another_customers_message_changes_nothing(deliver, queued):
    deliver(text_body(wamid="wamid.THEIRS", wa_id="584149876543", body="mi saldo"))
    deliver(edit_body(wamid="wamid.EDIT", original="wamid.THEIRS", text="otra cosa"))
    assert Message.objects.get(provider_message_id="wamid.THEIRS").text == "mi saldo"


def test_a_deleted_message_is_shown_deleted_and_the_deletion_gets_no_turn(deliver, queued, make_staff):
    deliver(text_body(wamid="wamid.ORIG", body="mi cédula es V-12345678"))
    revoke = inbound_message("revoke", wamid="wamid.DEL", revoke={"original_message_id": "wamid.ORIG"})
    assert deliver(webhook_body(change_value(messages=[revoke]))).json()["queued"] == 0
    original = Message.objects.get(provider_message_id="wamid.ORIG")
    assert original.payload["deleted"] is True and queued == [original.pk]
    page = thread_page(make_staff, original.conversation)
    assert "<del>mi cédula es V-12345678</del>" in page and "deleted by the customer" in page


# Message kinds ----------------------------------------------------------------------------------

def test_an_order_is_stored_as_an_order_and_gets_a_turn(deliver, queued):
    order = inbound_message("order", wamid="wamid.ORDER", order={
        "catalog_id": "CAT1", "text": "quiero este plan",
        "product_items": [{"product_retailer_id": "FIBRA-300", "quantity": 1, "item_price": 25.5,
                           "currency": "USD"}]})
    deliver(webhook_body(change_value(messages=[order])))
    stored = Message.objects.get(provider_message_id="wamid.ORDER")
    assert (stored.kind, stored.text, stored.payload["order_items"]) == ("order", "quiero este plan", 1)
    assert queued == [stored.pk]


def test_an_undeliverable_interactive_reply_escalates_with_metas_error_for_the_agent(
        deliver, queued, healthy_billing):
    broken = inbound_message("interactive", wamid="wamid.BROKEN", errors=[{
        "code": 131000, "title": "Something went wrong",
        "error_data": {"details": "Interactive message could not be processed"}}])
    deliver(webhook_body(change_value(messages=[broken])))
    stored = Message.objects.get(provider_message_id="wamid.BROKEN")
    assert stored.kind == "unsupported" and stored.payload["meta_type"] == "interactive"
    assert "Something went wrong (code 131000)" in stored.text and queued == [stored.pk]
    trace = run_turn(message_id=stored.pk, writer=TemplateWriter())
    assert trace.outcome == "escalated" and trace.escalation.reason == "CAPABILITY_MISSING"
    assert "Something went wrong (code 131000)" in trace.escalation.detail


def test_a_call_permission_reply_is_stored_and_gets_no_turn(deliver, queued):
    reply = inbound_message("interactive", wamid="wamid.CALL", interactive={
        "type": "call_permission_reply",
        "call_permission_reply": {"response": "accept", "is_permanent": False,
                                  "expiration_timestamp": 1739925824, "response_source": "user_action"}})
    deliver(webhook_body(change_value(messages=[reply])))
    stored = Message.objects.get(provider_message_id="wamid.CALL")
    assert stored.kind == "call_permission" and stored.payload["response"] == "accept"
    assert queued == []


def test_a_played_status_counts_as_read(deliver, queued):
    deliver(text_body(wamid="wamid.IN"))
    conversation = Conversation.objects.get()
    sent = Message.objects.create(conversation=conversation, direction=Message.Direction.OUTBOUND,
                                  author=Message.Author.AGENT, kind="text", text="nota de voz",
                                  provider_message_id="wamid.VOICE", status=Message.Status.DELIVERED)
    response = deliver(webhook_body(change_value(statuses=[delivery_status("wamid.VOICE", "played")])))
    assert response.json()["statuses"]["applied"] == 1
    sent.refresh_from_db()
    assert sent.status == "read"


# Replies to username-only users ------------------------------------------------------------------

def test_a_username_only_user_is_answered_through_recipient_with_the_business_scoped_id(
        deliver, queued, make_staff, settings, django_capture_on_commit_callbacks):
    bsuid = "VE.1410018717833190"
    message = inbound_message(wa_id="", wamid="wamid.USERNAME", text={"body": "hola"},
                              timestamp=int(clock.now().timestamp()))
    message.update({"from": "", "from_user_id": bsuid})
    contacts = [{"profile": {"name": "Ana", "username": "@ana"}, "user_id": bsuid}]
    deliver(webhook_body(change_value(messages=[message], contacts=contacts)))
    conversation = Conversation.objects.get()
    assert (conversation.contact.wa_id, conversation.contact.user_id) == ("", bsuid)
    agent = make_staff("ana", "agent")
    services.conversation_take_over(conversation_id=conversation.pk, agent=agent)
    with FakeGraph() as graph:
        settings.WHATSAPP_API_BASE_URL = graph.base_url
        settings.WHATSAPP_ACCESS_TOKEN = graph.access_token
        settings.WHATSAPP_PHONE_NUMBER_ID = graph.phone_number_id
        with django_capture_on_commit_callbacks(execute=True):
            reply = services.agent_reply_send(conversation_id=conversation.pk, agent=agent, text="Hola Ana")
    (request,) = graph.requests
    assert request["body"] == {"messaging_product": "whatsapp", "recipient_type": "individual",
                               "recipient": bsuid, "type": "text",
                               "text": {"preview_url": False, "body": "Hola Ana"}}
    reply.refresh_from_db()
    assert reply.status == "sent" and reply.provider_message_id.startswith("wamid.FAKE")


# When the database refuses one message -------------------------------------------------------------

def test_a_message_the_database_refuses_does_not_lose_the_others(deliver, queued, monkeypatch, caplog):
    original = desk.inbound._message_insert

    def refuse_one(**kwargs):
        if kwargs["inbound"].wamid == "wamid.REFUSED":
            raise DataError("value too long for type character varying(20)")
        return original(**kwargs)

    monkeypatch.setattr(desk.inbound, "_message_insert", refuse_one)
    body = webhook_body(change_value(messages=[inbound_message(wamid="wamid.REFUSED"),
                                               inbound_message(wamid="wamid.KEPT")]))
    with caplog.at_level(logging.WARNING, logger="desk.inbound"):
        response = deliver(body)
    assert response.status_code == 200
    assert (response.json()["stored"], response.json()["rejected"]) == (1, 1)
    assert list(Message.objects.values_list("provider_message_id", flat=True)) == ["wamid.KEPT"]
    assert queued == [Message.objects.get().pk]
    assert "wamid.REFUSED not stored: the database refused it" in caplog.text


def test_the_parsers_identifier_limits_are_the_columns_lengths():
    assert WAMID_MAX == Message._meta.get_field("provider_message_id").max_length
    assert WA_ID_MAX == Contact._meta.get_field("wa_id").max_length
    assert USER_ID_MAX == Contact._meta.get_field("user_id").max_length


@pytest.mark.django_db(transaction=True)
def test_a_message_arriving_while_an_agent_resolves_reopens_and_the_thread_says_so(
        queued, whatsapp_settings, make_staff, monkeypatch):
    client = Client()
    post = partial(client.post, WEBHOOK_URL, content_type="application/json")
    first = json.dumps(text_body(wamid="wamid.FIRST")).encode()
    assert post(data=first, HTTP_X_HUB_SIGNATURE_256=sign(first)).status_code == 200
    conversation = Conversation.objects.get()
    ana = make_staff("ana", "agent")
    resolving, release, errors = threading.Event(), threading.Event(), []
    close_escalations = services._close_escalations

    def resolve_held_open(conversation):  # the resolve holds the row lock, not yet committed
        resolving.set()
        release.wait(timeout=30)
        return close_escalations(conversation)

    monkeypatch.setattr(services, "_close_escalations", resolve_held_open)
    resolve = in_thread(lambda: services.conversation_resolve(conversation_id=conversation.pk, agent=ana),
                        errors)
    resolve.start()
    assert resolving.wait(timeout=30)
    second = json.dumps(text_body(wamid="wamid.SECOND")).encode()
    responses = []
    delivery = in_thread(lambda: responses.append(post(data=second, HTTP_X_HUB_SIGNATURE_256=sign(second))),
                         errors)
    delivery.start()
    with connection.cursor() as cursor:  # wait until the delivery waits for the resolve's row lock
        for _ in range(100_000):
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                           "AND datname = current_database()")
            if cursor.fetchone()[0]:
                break
    release.set()
    resolve.join(timeout=60)
    delivery.join(timeout=60)
    assert errors == [] and [r.status_code for r in responses] == [200]
    conversation.refresh_from_db()
    assert (conversation.status, conversation.handler) == ("open", "bot")
    assert [e.kind for e in conversation.events.order_by("pk")] == ["resolved", "reopened"]
