"""Complaint signals on bot answers: an agent's mark, a customer's negative reaction, a disagreeing follow-up.

Analysts draw the confirmed ones into review sessions (traces/services.py); the suspected ones stay apart.
The decisions (which emoji, which words, how soon) are pure and live in desk/disagreement.py; this module
stores what they decide, once per bot message and source.
"""

from __future__ import annotations

from django.db import transaction

from core import clock
from desk.access import require_desk_worker
from desk.channel import InboundMessage
from desk.disagreement import may_disagree, negative_reaction, suspected_complaint
from desk.models import ComplaintSignal, Contact, Event, Message
from desk.services import DeskActionError

Source, Certainty = ComplaintSignal.Source, ComplaintSignal.Certainty


@transaction.atomic
def complaint_mark(*, message_id: int, agent) -> ComplaintSignal:
    """Record that the customer complained about this bot answer; a second click returns the same signal.

    Locks the message row (SELECT … FOR UPDATE), so two clicks at once record one signal and one event.
    """
    require_desk_worker(agent)
    message = Message.objects.select_for_update().get(pk=message_id)
    if not message.is_bot_answer:
        raise DeskActionError("Only answers the bot wrote can be marked as complained about.")
    signal = ComplaintSignal.objects.filter(message=message, source=Source.AGENT).first()
    if signal is not None:
        return signal
    signal = ComplaintSignal.objects.create(message=message, source=Source.AGENT, certainty=Certainty.CONFIRMED,
                                            marked_by=agent, at=clock.now())
    Event.objects.create(conversation_id=message.conversation_id, actor=agent, kind="complaint_marked",
                         detail={"message": message.pk})
    return signal


@transaction.atomic
def complaint_unmark(*, message_id: int, agent) -> bool:
    """Take back an agent's complaint mark on this bot answer; return whether there was one.

    The customer's own signals (a reaction, a follow-up) stay: an agent's undo takes back an agent's mark.
    """
    require_desk_worker(agent)
    message = Message.objects.select_for_update().get(pk=message_id)
    deleted, _ = ComplaintSignal.objects.filter(message=message, source=Source.AGENT).delete()
    if deleted:
        Event.objects.create(conversation_id=message.conversation_id, actor=agent, kind="complaint_unmarked",
                             detail={"message": message.pk})
    return bool(deleted)


def reaction_complaint_apply(*, contact: Contact, inbound: InboundMessage, message_id: int) -> None:
    """Turn a customer's reaction on a bot answer into a complaint signal, or take one back.

    WhatsApp keeps one reaction per person and message: a new one replaces the old, an empty emoji
    removes it. So 👎 / 😡 / 😠 records a confirmed signal, and any other reaction (or none) taken
    later withdraws it. Call inside the inbound transaction, holding the contact's row lock.
    """
    answer = (Message.objects.filter(provider_message_id=inbound.reacted_message_id,
                                     direction=Message.Direction.OUTBOUND, conversation__contact=contact)
              .only("pk", "author", "payload").first())
    if answer is None or not answer.is_bot_answer:
        return
    if negative_reaction(inbound.emoji):
        ComplaintSignal.objects.bulk_create(
            [ComplaintSignal(message=answer, source=Source.REACTION, certainty=Certainty.CONFIRMED,
                             customer_message_id=message_id, detail=inbound.emoji[:64], at=inbound.timestamp)],
            ignore_conflicts=True)  # already signalled by an earlier 👎 on the same answer
    else:
        # Only a reaction made after the signal's replaces it (deliveries may come out of order).
        ComplaintSignal.objects.filter(message=answer, source=Source.REACTION, at__lte=inbound.timestamp).delete()


def followup_complaint_check(*, conversation_id: int, inbound: InboundMessage, message_id: int) -> None:
    """Record a suspected complaint when this text disputes the bot answer just before it (≤ 10 minutes).

    The answer is the conversation's latest outbound message, and it must be the bot's: after an agent
    wrote, the customer is talking to the agent. Call inside the inbound transaction. Most messages
    disagree with nothing: those cost the webhook no query.
    """
    if not may_disagree(inbound.text):
        return
    latest = (Message.objects.filter(conversation_id=conversation_id, direction=Message.Direction.OUTBOUND)
              .order_by("-created_at", "-pk").only("pk", "author", "payload", "text", "created_at").first())
    if latest is None or not latest.is_bot_answer:
        return
    found = suspected_complaint(text=inbound.text, answer=latest.text, answered_at=latest.created_at,
                                written_at=inbound.timestamp)
    if not found:
        return
    ComplaintSignal.objects.bulk_create(
        [ComplaintSignal(message=latest, source=Source.FOLLOWUP, certainty=Certainty.SUSPECTED,
                         customer_message_id=message_id, detail=found.rule, at=inbound.timestamp)],
        ignore_conflicts=True)  # the first disagreeing follow-up of this answer is the one kept
