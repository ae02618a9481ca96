"""The web chat: a demo channel that goes through the same inbound path as WhatsApp (desk.inbound)."""

from __future__ import annotations

import functools
import uuid

from django.conf import settings
from django.db import transaction

from billing.simulator.data import build_dataset
from core import clock
from desk import inbound
from desk.channel import InboundMessage
from desk.models import Channel, Contact, Conversation, Message
from desk.storable import storable_text

SESSION_KEY = "webchat_conversation_id"


@functools.cache
def _dataset():
    return build_dataset(as_of=clock.today())


def demo_customers() -> list[dict]:
    """Return the simulator's customers a visitor may chat as (empty when a real billing API is set)."""
    if settings.BILLING_API_BASE_URL:
        return []
    rows = []
    for account in _dataset().accounts.values():
        customer = account.customer
        rows.append({"id": customer.id, "name": customer.name, "language": customer.language,
                     "currency": customer.currency, "scenario": account.scenario,
                     "whatsapp_id": customer.whatsapp_id})
    return sorted(rows, key=lambda r: r["id"])


def current_conversation(request) -> Conversation | None:
    conversation_id = request.session.get(SESSION_KEY)
    if not conversation_id:
        return None
    return Conversation.objects.filter(pk=conversation_id, channel=Channel.WEBCHAT).select_related("contact").first()


@transaction.atomic
def chat_start(*, request, customer_id: str, language: str = "es") -> Conversation:
    """Open a web-chat conversation as one of the simulator's customers."""
    customer = next((c for c in demo_customers() if c["id"] == customer_id), None)
    contact = Contact.objects.create(
        channel=Channel.WEBCHAT,
        name=customer["name"] if customer else "Web visitor",
        customer_id=customer["id"] if customer else "",
        language=(customer or {}).get("language", language),
    )
    conversation = Conversation.objects.create(contact=contact, channel=Channel.WEBCHAT)
    request.session[SESSION_KEY] = conversation.pk
    return conversation


@transaction.atomic
def chat_message_receive(*, conversation: Conversation, text: str) -> Message:
    """Store the visitor's message through the inbound path every channel takes, and queue the bot turn."""
    contact = Contact.objects.select_for_update().get(pk=conversation.contact_id)
    message = InboundMessage(
        wamid=f"web-{uuid.uuid4().hex}", kind="text", wa_id="", user_id="", name=contact.name,
        timestamp=clock.now(), text=storable_text(text).strip(), payload={}, phone_number_id="",
    )
    report = inbound.inbound_messages_store(contact=contact, channel=Channel.WEBCHAT, messages=[message])
    return Message.objects.get(pk=report.stored[0])


def thread(conversation: Conversation | None) -> list[Message]:
    if conversation is None:
        return []
    return list(conversation.messages.order_by("created_at", "pk"))
