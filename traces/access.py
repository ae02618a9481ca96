"""Who reads traces and who reviews them."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied


def may_review_traces(user) -> bool:
    """Analysts and supervisors review traces, code failures and run evals."""
    return user.is_authenticated and user.has_perm("traces.review_traces")


def may_read_traces(user) -> bool:
    """Reviewers, and agents (who read the trace behind their conversations)."""
    return may_review_traces(user) or (user.is_authenticated and user.has_perm("desk.use_desk"))


def require_trace_reviewer(user) -> None:
    """Raise PermissionDenied unless the user reviews traces and runs evals (analysts and supervisors)."""
    if not may_review_traces(user):
        raise PermissionDenied


def dashboard_scope(user) -> str:
    """Return what the dashboard shows this user: "all" (analysts, supervisors) or "own" (an agent's own
    escalations); raise PermissionDenied for anyone else."""
    if may_review_traces(user):
        return "all"
    if user.is_authenticated and user.has_perm("desk.use_desk"):
        return "own"
    raise PermissionDenied
