"""One permission-checked way to reach a conversation, for views, services, admin and API alike."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404

from desk.models import Conversation


def may_work_desk(user) -> bool:
    """Agents and supervisors work conversations."""
    return user.is_authenticated and user.has_perm("desk.use_desk")


def may_read_conversations(user) -> bool:
    """Agents and supervisors, and analysts (read-only)."""
    return user.is_authenticated and (user.has_perm("desk.use_desk") or user.has_perm("desk.review_traces"))


def access_conversation(user, conversation_id: int, *, write: bool = False) -> Conversation:
    """Return the conversation when the user may read it (or act on it, with write=True); else raise PermissionDenied."""
    if write and not may_work_desk(user):
        raise PermissionDenied("Only agents and supervisors act on conversations.")
    if not may_read_conversations(user):
        raise PermissionDenied("Your role does not open conversations.")
    return get_object_or_404(Conversation.objects.select_related("contact", "assignee"), pk=conversation_id)
