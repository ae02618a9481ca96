"""The desk's part of every page header: the agent's own status and their unread notifications."""

from __future__ import annotations

from django.db import DatabaseError

from desk.access import may_work_desk
from desk.models import AgentProfile, Notification

NOTIFICATIONS_SHOWN = 5


def desk_header(request):
    """Template context: for people who work the desk, their status and their unread notifications."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not may_work_desk(user):
        return {}
    try:
        status = (AgentProfile.objects.filter(user=user).values_list("status", flat=True).first()
                  or AgentProfile.Status.AWAY)
        unread = list(Notification.objects.filter(recipient=user, read_at__isnull=True)
                      .order_by("-created_at", "-pk")[:NOTIFICATIONS_SHOWN + 1])
    except DatabaseError:  # an error page while the database is down still renders, without the header's part
        return {}
    return {"desk_status": status, "desk_status_label": AgentProfile.Status(status).label,
            "desk_notifications": unread[:NOTIFICATIONS_SHOWN],
            "desk_notifications_more": len(unread) > NOTIFICATIONS_SHOWN}
