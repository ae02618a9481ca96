"""The desk's part of every page header: the agent's own status (available or away).

Read only when a template draws it (the page's header), never for a partial such as the inbox's 5-second
poll of its rows: one query per page, none per poll. The header's notifications are desk/notifications.py's.
"""

from __future__ import annotations

from functools import cached_property

from django.db import DatabaseError

from desk.access import may_work_desk
from desk.models import AgentProfile


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
    """Template context: `desk_header` for people who work the desk (their status)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    try:
        works_desk = may_work_desk(user)
    except DatabaseError:
        return {}
    return {"desk_header": DeskHeader(user)} if works_desk else {}
