"""One permission-checked way to reach a conversation, for views, services, admin and API alike."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404

from desk import rules
from desk.models import Conversation


def may_work_desk(user) -> bool:
    """Agents and supervisors work conversations."""
    return user.is_authenticated and user.has_perm("desk.use_desk")


def may_supervise_desk(user) -> bool:
    """Supervisors take over from anyone and act on conversations other agents hold."""
    return user.is_authenticated and user.has_perm("desk.supervise_conversations")


def may_read_conversations(user) -> bool:
    """Agents and supervisors, and analysts (read-only)."""
    return user.is_authenticated and (user.has_perm("desk.use_desk") or user.has_perm("traces.review_traces"))


def require_desk_worker(user, message: str = "Only agents and supervisors act on conversations.") -> None:
    """Raise PermissionDenied(message) unless the user works the desk."""
    if not may_work_desk(user):
        raise PermissionDenied(message)


def require_conversation_reader(user) -> None:
    """Raise PermissionDenied unless the user may read conversations (agents, supervisors, analysts)."""
    if not may_read_conversations(user):
        raise PermissionDenied("Your role does not open conversations.")


def access_conversation(user, conversation_id: int, *, write: bool = False) -> Conversation:
    """Return the conversation when the user may read it (or act on it, with write=True); else raise PermissionDenied."""
    if write:
        require_desk_worker(user)
    require_conversation_reader(user)
    return get_object_or_404(Conversation.objects.select_related("contact", "assignee"), pk=conversation_id)


def rules_actor(user) -> rules.Actor:
    """Return the user as the desk's rules see them."""
    return rules.Actor(id=user.pk, name=user.get_username(), supervises=may_supervise_desk(user))


def rules_state(conversation: Conversation) -> rules.State:
    """Return the conversation as the desk's rules see it: who holds it, resolved or not."""
    held = conversation.held_by_human and conversation.assignee_id is not None
    return rules.State(
        holder_id=conversation.assignee_id if held else None,
        holder_name=conversation.assignee.get_username() if held else "",
        resolved=conversation.status == Conversation.Status.RESOLVED,
        bot_answers=not conversation.held_by_human,
    )


def conversation_verdict(user, conversation: Conversation, action: rules.Action, **facts) -> rules.Verdict:
    """Return whether the user may do `action` on the conversation now (desk.rules.decide), and why not."""
    return rules.decide(action, rules_actor(user), rules_state(conversation), **facts)
