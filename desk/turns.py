"""The desk's side of a bot turn: the writes a turn may make on the desk's rows, and nothing else.

The bot decides; the desk writes. A turn claims its inbound message (a lease on the message row), and when
it ends it saves what it learnt about the contact (language, the customer it identified) and what it asked
and is waiting for (the question kept while it asks who the customer is, or which option applies). The
reply and the escalation are recorded by `desk.services.bot_reply_record` and `conversation_escalate`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q

from core import clock
from desk.models import Contact, Conversation, Message

_UNCHANGED = object()


class TurnLease:
    """A turn's claim on an inbound message: taken atomically, renewed while the turn runs, given up on a crash.

    Only one run holds a message at a time: a second delivery of the same task finds a live lease and does
    nothing. A run that dies (a killed worker) stops renewing; once its lease expires the requeue sweep
    queues the message again and the next run takes it over. The claim time is the holder's token.
    """

    def __init__(self, message_id: int, *, seconds: float | None = None):
        self.message_id = message_id
        self.length = timedelta(seconds=settings.BOT_TURN_LEASE_S if seconds is None else seconds)
        self.token: datetime | None = None
        self.renewed_at: datetime | None = None

    def take(self) -> bool:
        """Claim the message unless a live lease holds it or a turn already answered it."""
        now = clock.now()
        taken = (Message.objects.filter(pk=self.message_id, direction=Message.Direction.INBOUND)
                 .filter(Q(turn_claimed_at__isnull=True) | Q(turn_lease_until__lt=now))
                 .exclude(traces__isnull=False)
                 .update(turn_claimed_at=now, turn_lease_until=now + self.length))
        self.token = self.renewed_at = now if taken else None
        return bool(taken)

    def renew(self) -> None:
        """Push the lease forward (called as each stage starts, and before each model call) once a third of it
        has passed since it was last pushed: at least two thirds of it are always left, and a turn of a tenth
        of a second does not write its message row at every stage."""
        now = clock.now()
        if self.renewed_at is not None and now - self.renewed_at < self.length / 3:
            return
        Message.objects.filter(pk=self.message_id, turn_claimed_at=self.token).update(
            turn_lease_until=now + self.length)
        self.renewed_at = now

    def held(self) -> bool:
        """Lock the message row until commit and say whether this run still holds it (call in a transaction)."""
        row = Message.objects.select_for_update().filter(pk=self.message_id).values("turn_claimed_at").first()
        return bool(row) and row["turn_claimed_at"] == self.token and not Message.objects.filter(
            pk=self.message_id, traces__isnull=False).exists()

    def give_up(self) -> None:
        """Expire the lease now, so the next sweep queues the message again at once."""
        Message.objects.filter(pk=self.message_id, turn_claimed_at=self.token).update(
            turn_lease_until=clock.now())


def turn_state_save(*, contact_id: int, conversation_id: int, language=_UNCHANGED, customer_id=_UNCHANGED,
                    pending_query=_UNCHANGED, pending_clarification=_UNCHANGED) -> None:
    """Save what a turn learnt and what it waits for; a value left out is not touched.

    `language` and `customer_id` are the contact's (the language the customer writes in, the billing
    customer the turn identified); `pending_query` and `pending_clarification` are the conversation's
    ("" and {} clear them). Call inside the turn's final transaction, so they commit with its reply.
    """
    contact_fields = {name: value for name, value in (("language", language), ("customer_id", customer_id))
                      if value is not _UNCHANGED}
    conversation_fields = {name: value for name, value in (("pending_query", pending_query),
                                                           ("pending_clarification", pending_clarification))
                           if value is not _UNCHANGED}
    if contact_fields:
        Contact.objects.filter(pk=contact_id).update(**contact_fields)
    if conversation_fields:
        Conversation.objects.filter(pk=conversation_id).update(**conversation_fields)
