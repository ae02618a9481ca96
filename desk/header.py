"""The desk's part of every page header: the agent's own status (available or away).

Read only when a template draws it (the page's header), never for a partial such as the inbox's 5-second
poll of its rows: one query per page, none per poll. The header's notifications come from desk/notifications.py
through the same context processor, so whether the person works the desk is decided once.
"""

from __future__ import annotations

from functools import cached_property

from django.db import DatabaseError

from desk.access import may_work_desk
from desk.models import AgentProfile
from desk.notifications import notifications_context


class DeskHeader:
    """What the header shows of the desk for one person who works it, read on first use."""

    def __init__(self, user):
        self.user = user

    @cached_property
    def status(self) -> str:
        try:
            found = AgentProfile.objects.filter(user=self.user).values_list("status", flat=True).first()
        except DatabaseError:  # an error page while the database is down still renders
            found = None
        return found or AgentProfile.Status.AWAY

    @property
    def status_label(self) -> str:
        return AgentProfile.Status(self.status).label


def desk_header(request):
    """Template context for people who work the desk: `desk_header` (their status) and the header's open
    notifications (desk/notifications.py), both read lazily; nothing but empty notifications for anyone else."""
    user = getattr(request, "user", None)
    try:
        works_desk = user is not None and user.is_authenticated and may_work_desk(user)
    except DatabaseError:
        works_desk = False
    if not works_desk:
        return notifications_context(None)
    return {"desk_header": DeskHeader(user), **notifications_context(user)}
