"""Writes on conversations: bot replies behind the state gate, escalations, agent actions, delivery.

Inbound messages of every channel are stored by desk.inbound.
"""

from __future__ import annotations

from datetime import timedelta
from functools import partial

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Concat
from django.utils import timezone

from core.tasks import task_queue
from desk.access import require_desk_worker
from desk.models import Conversation, Escalation, Event, Message
from desk.senders import RecordingSender, get_sender


def _deliver_on_commit(message: Message) -> None:
    transaction.on_commit(partial(task_queue, "desk.deliver_outbound", message.pk))


@transaction.atomic
def bot_reply_record(*, conversation_id: int, text: str) -> Message | None:
    """Record the bot's reply for sending, unless a human holds the conversation (then return None).

    The state gate is re-checked here under SELECT … FOR UPDATE on the conversation: a take-over
    commits either before this (nothing is recorded) or after it (the reply was already decided).
    """
    conversation = Conversation.objects.select_for_update().get(pk=conversation_id)
    if conversation.held_by_human:
        return None
    message = Message.objects.create(
        conversation=conversation,
        direction=Message.Direction.OUTBOUND,
        author=Message.Author.BOT,
        text=text,
        status=Message.Status.QUEUED,
    )
    _deliver_on_commit(message)
    return message


@transaction.atomic
def conversation_escalate(
    *,
    conversation_id: int,
    reason: str,
    summary: str,
    detail: str = "",
    suggested_reply: str = "",
    notice: str = "",
    internal_note: str = "",
) -> Escalation:
    """Hand the conversation to the humans with a reason, and tell the customer once that a person will answer.

    `internal_note` is what the bot knew (root cause, evidence, formulas, doubts); the agent reads it on the card.
    """
    conversation = Conversation.objects.select_for_update().get(pk=conversation_id)
    already_waiting = conversation.escalations.filter(
        status__in=[Escalation.Status.OPEN, Escalation.Status.TAKEN]
    ).exists()
    conversation.handler = Conversation.Handler.HUMAN
    conversation.status = Conversation.Status.OPEN
    conversation.save(update_fields=["handler", "status", "updated_at"])
    escalation = Escalation.objects.create(
        conversation=conversation, reason=reason, summary=summary, detail=detail,
        suggested_reply=suggested_reply, internal_note=internal_note,
    )
    Event.objects.create(conversation=conversation, kind="escalated", detail={"reason": reason,
                                                                             "escalation": escalation.pk})
    if notice and not already_waiting:
        message = Message.objects.create(
            conversation=conversation, direction=Message.Direction.OUTBOUND, author=Message.Author.BOT,
            kind="text", text=notice, status=Message.Status.QUEUED, payload={"escalation_notice": True},
        )
        _deliver_on_commit(message)
    return escalation


def outbound_deliver(*, message_id: int) -> Message:
    """Send a queued outbound message through its channel's sender and record the result."""
    message = Message.objects.select_related("conversation__contact").get(pk=message_id)
    if message.status != Message.Status.QUEUED:
        return message  # already sent (a redelivered task must not send twice)
    conversation = message.conversation
    sender = get_sender() if conversation.channel == "whatsapp" else RecordingSender()
    result = sender.send_text(to=conversation.contact.wa_id, user_id=conversation.contact.user_id,
                              text=message.text)
    message.provider_message_id = result.provider_message_id or None
    message.status = Message.Status.SENT if result.ok else Message.Status.FAILED
    message.error = "" if result.ok else (result.error or "send failed")
    message.status_at = timezone.now()
    message.save(update_fields=["provider_message_id", "status", "error", "status_at"])
    if not result.ok:
        Event.objects.create(conversation=conversation, kind="send_failed",
                             detail={"message_id": message.pk, "error": message.error})
    return message


# ---------------------------------------------------------------------------------------------
# Agent actions. Each checks permission, changes state under a row lock, and writes an Event.
# ---------------------------------------------------------------------------------------------

class DeskActionError(Exception):
    """An action that cannot be done in the conversation's current state; the message says why."""


class AlreadyTaken(DeskActionError):
    def __init__(self, holder):
        super().__init__(f"{holder.get_username()} already has this conversation.")
        self.holder = holder


WHATSAPP_WINDOW_HOURS = 24


def _locked(conversation_id: int) -> Conversation:
    return Conversation.objects.select_for_update().get(pk=conversation_id)


def _event(conversation, actor, kind, **detail) -> Event:
    return Event.objects.create(conversation=conversation, actor=actor, kind=kind, detail=detail)


@transaction.atomic
def conversation_take_over(*, conversation_id: int, agent) -> Conversation:
    """Assign the conversation to the agent and silence the bot; a second agent is told who has it."""
    require_desk_worker(agent)
    conversation = _locked(conversation_id)
    if conversation.held_by_human and conversation.assignee_id and conversation.assignee_id != agent.pk:
        raise AlreadyTaken(conversation.assignee)
    if conversation.held_by_human and conversation.assignee_id == agent.pk:
        return conversation  # a double click changes nothing
    conversation.handler = Conversation.Handler.HUMAN
    conversation.assignee = agent
    conversation.status = Conversation.Status.OPEN
    conversation.save(update_fields=["handler", "assignee", "status", "updated_at"])
    conversation.escalations.filter(status=Escalation.Status.OPEN).update(status=Escalation.Status.TAKEN)
    _event(conversation, agent, "taken_over", agent=agent.get_username())
    return conversation


def reply_window_open(conversation, *, now=None) -> bool:
    """WhatsApp accepts free text only within 24 hours of the customer's last message."""
    if conversation.channel != "whatsapp":
        return True
    if conversation.last_inbound_at is None:
        return False
    now = now or timezone.now()
    return now - conversation.last_inbound_at <= timedelta(hours=WHATSAPP_WINDOW_HOURS)


@transaction.atomic
def agent_reply_send(*, conversation_id: int, agent, text: str, now=None) -> Message:
    """Send the agent's reply through the conversation's channel (the agent must hold the conversation)."""
    require_desk_worker(agent)
    text = (text or "").strip()
    if not text:
        raise DeskActionError("The reply is empty.")
    conversation = _locked(conversation_id)
    if not conversation.held_by_human or conversation.assignee_id != agent.pk:
        raise DeskActionError("Take over the conversation before replying.")
    if not reply_window_open(conversation, now=now):
        raise DeskActionError("The customer's last message is more than 24 hours old: WhatsApp only delivers "
                              "an approved template now, not free text.")
    message = Message.objects.create(
        conversation=conversation, direction=Message.Direction.OUTBOUND, author=Message.Author.AGENT,
        agent=agent, text=text[:4096], status=Message.Status.QUEUED,
    )
    _deliver_on_commit(message)
    return message


@transaction.atomic
def note_add(*, conversation_id: int, agent, text: str) -> Event:
    """Add a private note to the thread; it is never sent to the customer."""
    require_desk_worker(agent)
    text = (text or "").strip()
    if not text:
        raise DeskActionError("The note is empty.")
    conversation = _locked(conversation_id)
    return _event(conversation, agent, "note", text=text[:4000])


@transaction.atomic
def conversation_assign(*, conversation_id: int, actor, assignee) -> Conversation:
    """Assign or reassign a human-held conversation to an agent."""
    require_desk_worker(actor)
    require_desk_worker(assignee)
    conversation = _locked(conversation_id)
    conversation.assignee = assignee
    conversation.handler = Conversation.Handler.HUMAN
    conversation.save(update_fields=["assignee", "handler", "updated_at"])
    conversation.escalations.filter(status=Escalation.Status.OPEN).update(status=Escalation.Status.TAKEN)
    _event(conversation, actor, "assigned", assignee=assignee.get_username())
    return conversation


def _close_escalations(conversation, how: str) -> None:
    conversation.escalations.filter(status__in=[Escalation.Status.OPEN, Escalation.Status.TAKEN]).update(
        status=Escalation.Status.RESOLVED, resolved_at=timezone.now(),
        detail=Concat(F("detail"), Value(f"\n[{how}]")),
    )


@transaction.atomic
def conversation_hand_back(*, conversation_id: int, agent) -> Conversation:
    """Give the conversation back to the bot: it answers the next inbound message again."""
    require_desk_worker(agent)
    conversation = _locked(conversation_id)
    conversation.handler = Conversation.Handler.BOT
    conversation.assignee = None
    conversation.save(update_fields=["handler", "assignee", "updated_at"])
    _close_escalations(conversation, "handed back")
    _event(conversation, agent, "handed_back")
    return conversation


@transaction.atomic
def conversation_resolve(*, conversation_id: int, agent) -> Conversation:
    """Close the conversation and its escalations."""
    require_desk_worker(agent)
    conversation = _locked(conversation_id)
    conversation.status = Conversation.Status.RESOLVED
    conversation.save(update_fields=["status", "updated_at"])
    _close_escalations(conversation, "resolved")
    _event(conversation, agent, "resolved")
    return conversation


@transaction.atomic
def message_mark_wrong(*, message_id: int, agent, reason: str) -> Message:
    """Record an agent's verdict that a bot answer is wrong; analysts find it through its trace."""
    require_desk_worker(agent)
    reason = (reason or "").strip()
    if not reason:
        raise DeskActionError("Say in a few words what is wrong.")
    message = Message.objects.select_for_update().get(pk=message_id)
    if message.author != Message.Author.BOT:
        raise DeskActionError("Only bot answers can be marked as verified wrong.")
    message.verified_wrong_reason = reason[:300]
    message.verified_wrong_by = agent
    message.verified_wrong_at = timezone.now()
    message.save(update_fields=["verified_wrong_reason", "verified_wrong_by", "verified_wrong_at"])
    _event(message.conversation, agent, "verified_wrong", message=message.pk, reason=message.verified_wrong_reason)
    return message
