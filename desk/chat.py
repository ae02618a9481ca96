"""The web chat: a demo channel that goes through the same inbound path as WhatsApp (desk.inbound).

The desk does not know where its demo customers come from: the demo app registers a source at start
(`chat_customers_source_set`), and without one the visitor chats as an unknown web visitor.

Where it is open (`webchat_access`): with WEBCHAT_ENABLED (default: on with DJANGO_DEBUG, the demo and the
tests) — to anyone when the process started with DJANGO_DEBUG=1, and only to signed-in staff in production.
Anyone else gets a 404 (it is off), the login page (anonymous in production) or a 403 (signed in without a role).
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404

from core import clock
from core.roles import ROLE_PERMISSIONS
from desk import inbound
from desk.channel import InboundMessage
from desk.models import Channel, Contact, Conversation, Message
from desk.storable import storable_text

SESSION_KEY = "webchat_conversation_id"
STAFF_PERMISSIONS = sorted({perm for perms in ROLE_PERMISSIONS.values() for perm in perms})


def webchat_access(view):
    """Let a request reach the web chat only where it belongs (see the module's docstring)."""

    @functools.wraps(view)
    def gated(request, *args, **kwargs):
        if not settings.WEBCHAT_ENABLED:
            raise Http404("The web chat is off here (WEBCHAT_ENABLED).")
        if not settings.WEBCHAT_ANONYMOUS:
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not any(request.user.has_perm(perm) for perm in STAFF_PERMISSIONS):
                raise PermissionDenied("The web chat is for staff trying the bot; your account has no role.")
        return view(request, *args, **kwargs)

    return gated


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
