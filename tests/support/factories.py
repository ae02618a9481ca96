"""Given-helpers for the desk tests: contacts, conversations, inbound messages, escalations."""

from __future__ import annotations

import threading
import uuid

from django.db import connections

from core import clock
from desk.models import Channel, Contact, Conversation, Escalation, Event, Message
from desk.services import conversation_escalate
from desk.whatsapp import signature_header
from tests.support.fake_graph import change_value, inbound_message, webhook_body

WEBHOOK_URL = "/webhooks/whatsapp/"
SECRET = "app-secret-for-tests"
VERIFY_TOKEN = "verify-token-for-tests"
CUSTOMER = "584121234567"


def conversation_start(*, name="Marisol Rojas", channel=Channel.WEBCHAT, wa_id="", customer_id="C-1001",
                       language="es", inbound_at="now") -> Conversation:
    contact = Contact.objects.create(channel=channel, name=name, wa_id=wa_id, customer_id=customer_id,
                                     language=language)
    return Conversation.objects.create(contact=contact, channel=channel,
                                       last_inbound_at=clock.now() if inbound_at == "now" else inbound_at)


def customer_says(conversation: Conversation, text: str, *, kind="text") -> Message:
    message = Message.objects.create(conversation=conversation, direction=Message.Direction.INBOUND,
                                     author=Message.Author.CUSTOMER, kind=kind, text=text,
                                     provider_message_id=f"wamid.{uuid.uuid4().hex}")
    Conversation.objects.filter(pk=conversation.pk).update(last_inbound_at=clock.now())
    return message


def bot_says(conversation: Conversation, text: str) -> Message:
    return Message.objects.create(conversation=conversation, direction=Message.Direction.OUTBOUND,
                                  author=Message.Author.BOT, text=text, status=Message.Status.SENT)


def escalated(*, reason="USER_REQUEST", text="quiero hablar con una persona", suggested_reply="",
              created_at=None, internal_note="", **start) -> Escalation:
    """A conversation whose customer wrote `text` and whose bot escalated with `reason`."""
    conversation = conversation_start(**start)
    customer_says(conversation, text)
    escalation = conversation_escalate(conversation_id=conversation.pk, reason=reason,
                                       summary=f"Summary for {reason}.", detail=f"Customer wrote: “{text}”",
                                       suggested_reply=suggested_reply, internal_note=internal_note)
    if created_at is not None:
        Escalation.objects.filter(pk=escalation.pk).update(created_at=created_at)
        escalation.refresh_from_db()
    return escalation


def events_of(conversation: Conversation) -> list[str]:
    return list(Event.objects.filter(conversation=conversation).order_by("pk").values_list("kind", flat=True))


def in_thread(target, errors: list) -> threading.Thread:
    """Return a thread that runs target on its own connection and appends what it raises to errors."""
    def run():
        try:
            target()
        except BaseException as exc:  # surfaced by the test, not lost in the thread
            errors.append(exc)
        finally:
            connections.close_all()
    return threading.Thread(target=run)


# WhatsApp deliveries (the `deliver` fixture in conftest.py posts them) ----------------------------

def sign(raw: bytes) -> str:
    return signature_header(raw, SECRET)


def text_body(*, wamid="wamid.IN1", wa_id=CUSTOMER, body="¿Cuánto debo este mes?", timestamp=1739321024):
    return webhook_body(change_value(messages=[inbound_message(wa_id=wa_id, wamid=wamid, timestamp=timestamp,
                                                               text={"body": body})]))
