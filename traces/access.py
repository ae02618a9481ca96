"""Who reads traces and who reviews them."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404

from traces.models import Trace


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


def may_read_trace_as_editor(user) -> bool:
    """KB editors read the knowledge-base side of the traces that retrieved chunks (never account data)."""
    return user.is_authenticated and user.has_perm("kb.edit_kb")


def access_trace_for_editor(user, trace_id: int) -> Trace:
    """Return a trace a KB editor may read: one that retrieved at least one chunk; else PermissionDenied (404 for
    no such trace). Only the fields the editor's view shows are loaded."""
    if not may_read_trace_as_editor(user):
        raise PermissionDenied
    trace = get_object_or_404(Trace.objects.only("pk", "created_at", "query", "route", "language", "outcome",
                                                 "retrieval", "evidence", "citations", "final_text",
                                                 "index_version", "escalation_reason", "fallback"), pk=trace_id)
    if not any(isinstance(row, dict) and row.get("chunk_id") is not None for row in trace.retrieval or []):
        raise PermissionDenied
    return trace
