"""The web chat: a demo channel that goes through the same inbound path as WhatsApp (desk.inbound).

The desk does not know where its demo customers come from: the demo app registers a source at start
(`chat_customers_source_set`), and without one the visitor chats as an unknown web visitor.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.db import transaction

from core import clock
from desk import inbound
from desk.channel import InboundMessage
from desk.models import Channel, Contact, Conversation, Message
from desk.storable import storable_text

SESSION_KEY = "webchat_conversation_id"


@dataclass(frozen=True)
class ChatCustomer:
    """A billing customer a visitor may chat as, as the chat page lists it."""

    id: str
    name: str
    language: str
    currency: str
    scenario: str
    whatsapp_id: str


_customers_source: Callable[[], Sequence[ChatCustomer]] | None = None


def chat_customers_source_set(source: Callable[[], Sequence[ChatCustomer]] | None) -> None:
    """Name the function that lists the customers a visitor may chat as (None: nobody to pick)."""
    global _customers_source
    _customers_source = source


def demo_customers() -> list[ChatCustomer]:
    """Return the customers a visitor may chat as, by id (empty when no source is registered)."""
    if _customers_source is None:
        return []
    return sorted(_customers_source(), key=lambda customer: customer.id)


def current_conversation(request) -> Conversation | None:
    conversation_id = request.session.get(SESSION_KEY)
    if not conversation_id:
        return None
    return Conversation.objects.filter(pk=conversation_id, channel=Channel.WEBCHAT).select_related("contact").first()


@transaction.atomic
def chat_start(*, request, customer_id: str, language: str = "es") -> Conversation:
    """Open a web-chat conversation as one of the demo customers (an unknown web visitor otherwise)."""
    customer = next((c for c in demo_customers() if c.id == customer_id), None)
    contact = Contact.objects.create(
        channel=Channel.WEBCHAT,
        name=customer.name if customer else "Web visitor",
        customer_id=customer.id if customer else "",
        language=customer.language if customer else language,
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
