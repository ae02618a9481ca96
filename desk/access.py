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
    return user.is_authenticated and (user.has_perm("desk.use_desk") or user.has_perm("traces.review_traces"))


def require_desk_worker(user, message: str = "Only agents and supervisors act on conversations.") -> None:
    """Raise PermissionDenied(message) unless the user works the desk."""
    if not may_work_desk(user):
        raise PermissionDenied(message)


def access_conversation(user, conversation_id: int, *, write: bool = False) -> Conversation:
    """Return the conversation when the user may read it (or act on it, with write=True); else raise PermissionDenied."""
    if write:
        require_desk_worker(user)
    if not may_read_conversations(user):
        raise PermissionDenied("Your role does not open conversations.")
    return get_object_or_404(Conversation.objects.select_related("contact", "assignee"), pk=conversation_id)
