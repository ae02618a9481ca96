"""Notifications in the desk's header: a line for one person, or for everyone who works the desk.

A supervisor's decision on a credit note notifies whoever proposed it; the bot proposes too, and then the
person who holds the conversation is told, or everyone who works the desk when nobody holds it. One
person dismissing a notification meant for everyone dismisses it for all: someone has seen to it.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q, QuerySet
from django.shortcuts import get_object_or_404
from django.utils.functional import SimpleLazyObject

from core import clock
from desk.models import Conversation, Notification

SHOWN = 5  # the header lists the newest few; the rest wait behind them


def notifications_open(*, user) -> QuerySet[Notification]:
    """Return the notifications not dismissed yet that are for `user` or for everyone, newest first."""
    return (Notification.objects.filter(dismissed_at__isnull=True)
            .filter(Q(recipient=user) | Q(recipient__isnull=True)).order_by("-created_at", "-pk"))


def notification_create(*, recipient, text: str, url: str = "", conversation: Conversation | None = None
                        ) -> Notification:
    """Notify `recipient` (None: everyone who works the desk)."""
    return Notification.objects.create(recipient=recipient, text=text[:300], url=url[:300],
                                       conversation=conversation)


@transaction.atomic
def notification_dismiss(*, user, notification_id: int) -> Notification:
    """Dismiss a notification meant for the user or for everyone; a second click changes nothing."""
    notification = get_object_or_404(
        Notification.objects.select_for_update().filter(Q(recipient=user) | Q(recipient__isnull=True)),
        pk=notification_id)
    if notification.dismissed_at is None:
        notification.dismissed_at = clock.now()
        notification.dismissed_by = user
        notification.save(update_fields=["dismissed_at", "dismissed_by"])
    return notification


def notifications_context(user) -> dict:
    """Template context: the open notifications of someone who works the desk (None: nobody's), read lazily on
    first use, so a partial that htmx polls (no header) costs no query. desk/header.py's context processor
    calls it once it knows the person works the desk."""
    if user is None:
        return {"desk_notifications": [], "desk_notifications_more": 0}
    found = SimpleLazyObject(lambda: list(notifications_open(user=user)[:SHOWN + 1]))
    return {"desk_notifications": SimpleLazyObject(lambda: found[:SHOWN]),
            "desk_notifications_more": SimpleLazyObject(lambda: max(0, len(found) - SHOWN))}
