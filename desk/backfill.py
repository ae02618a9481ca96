"""Past traffic written in bulk, stamped at the times it happened: the demo's weeks of dashboard history.

The caller builds the rows (unsaved model instances); the desk writes them, one statement per table, and sets
their `created_at` afterwards (auto_now_add ignores the value bulk_create is given). No events, no delivery:
this is history, not something happening now.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from django.db import transaction

from core.backfill import rows_backfill
from desk.models import ComplaintSignal, Contact, Conversation, Escalation, Message


@transaction.atomic
def conversations_backfill(*, contacts: Sequence[Contact], status: str) -> list[Conversation]:
    """Write the contacts and one conversation each, on the contact's channel, in `status`."""
    saved = Contact.objects.bulk_create(contacts)
    return Conversation.objects.bulk_create(
        Conversation(contact=contact, channel=contact.channel, status=status) for contact in saved)


@transaction.atomic
def messages_backfill(*, messages: Sequence[Message], created_at: Sequence[dt.datetime]) -> list[Message]:
    """Write past messages (bot replies, agents' replies), each created at its moment."""
    return rows_backfill(model=Message, rows=messages, created_at=created_at)


@transaction.atomic
def escalations_backfill(*, escalations: Sequence[Escalation],
                         created_at: Sequence[dt.datetime]) -> list[Escalation]:
    """Write past escalations, each created at its moment."""
    return rows_backfill(model=Escalation, rows=escalations, created_at=created_at)


@transaction.atomic
def complaint_signals_backfill(*, signals: Sequence[ComplaintSignal]) -> list[ComplaintSignal]:
    """Write past complaint signals (each carries its own `at`)."""
    return ComplaintSignal.objects.bulk_create(signals)
