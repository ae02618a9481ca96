"""One turn's trace: its page, the desk's "bot's last turn" panel, and the link from a bot reply to its trace."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.html import escape
from django.utils.safestring import mark_safe

from desk.disagreement import RULE_LABELS
from desk.models import ComplaintSignal, Conversation, Message
from kb.access import may_edit_kb
from kb.models import Chunk
from traces import display, selectors
from traces.access import access_trace_for_editor, may_read_traces, may_review_traces
from traces.fingerprint import PARTS
from traces.models import Trace


@login_required
def trace_detail(request, trace_id):
    """Show one turn: route, retrieval table, billing calls, evidence, writer attempts, final text, latency.

    A KB editor who reads no other trace sees the editor's view of a trace that retrieved knowledge-base
    chunks instead (access_trace_for_editor).
    """
    if not may_read_traces(request.user):
        return _editor_view(request, access_trace_for_editor(request.user, trace_id))
    trace = get_object_or_404(Trace.objects.select_related("conversation__contact", "message", "reply",
                                                           "configuration").defer("search_vector"), pk=trace_id)
    notes, scores = [], []
    if may_review_traces(request.user):
        notes = list(trace.review_notes.select_related("author", "failure_class", "session", "queue"))
        scores = list(trace.scores.select_related("definition", "author").order_by("definition__name", "pk"))
    return render(request, "traces/trace_detail.html", {"trace": trace, "notes": notes, "scores": scores,
                                                        **turn_facts(trace),
                                                        "context": _conversation_context(trace),
                                                        "complaints": _complaints(trace),
                                                        "configuration": _configuration_rows(trace)})


def _editor_view(request, trace: Trace):
    """The KB editor's read-only trace: the message, the retrieval, the cited chunks, the reply and the failure
    notes — no customer account data (customer id, billing calls and facts, the internal note, the conversation)
    and no review action."""
    cited_ids = set(trace.citations or [])
    cited = [e for e in (trace.evidence or []) if isinstance(e, dict) and e.get("kind") == "chunk"
             and e.get("id") in cited_ids]
    notes = list(trace.review_notes.filter(verdict="fail").select_related("failure_class", "chunk__document")
                 .order_by("created_at", "pk"))
    return render(request, "traces/trace_editor.html", {"trace": trace, "cited": cited, "notes": notes})


def turn_facts(trace: Trace) -> dict:
    """Return what the trace and review pages show of a turn, in words: latency waterfall, billing calls,
    writer attempts with the verifier's problems highlighted, the humanizer's decision and token counts."""
    attempts = []
    for attempt in trace.attempts or []:
        if not isinstance(attempt, dict):
            continue
        verdict = attempt.get("verdict") if isinstance(attempt.get("verdict"), dict) else {}
        note_verdict = attempt.get("note_verdict") if isinstance(attempt.get("note_verdict"), dict) else {}
        attempts.append({**attempt, "verdict": verdict,
                         "note_problems": note_verdict.get("problems") or [],
                         "highlighted": _highlight(attempt.get("raw") or attempt.get("reply") or "",
                                                   verdict.get("problems", []))})
    latency = trace.latency_ms if isinstance(trace.latency_ms, dict) else {}
    return {
        "stages": display.latency_waterfall(latency, trace.total_ms),
        "billing_calls": display.billing_calls(trace.tool_calls),
        "attempts": attempts,
        "humanizer": display.humanizer_sentence(trace.humanizer),
        "tokens": display.token_usage(trace.token_usage),
    }


def _configuration_rows(trace: Trace) -> list[dict]:
    """Return the trace's configuration part by part, with the label people read and the setting behind it."""
    if trace.configuration is None:
        return []
    return [{"label": part.label, "setting": part.setting, "name": part.name,
             "value": getattr(trace.configuration, part.name)} for part in PARTS]


def _complaints(trace: Trace) -> list[dict]:
    """Return the complaint signals on the turn's reply, each as the sentence the page shows."""
    if trace.reply_id is None:
        return []
    lines = []
    for signal in ComplaintSignal.objects.filter(message_id=trace.reply_id).select_related("marked_by"):
        if signal.source == ComplaintSignal.Source.AGENT:
            how = signal.marked_by.get_username() if signal.marked_by else "an agent"
        elif signal.source == ComplaintSignal.Source.FOLLOWUP:
            how = f"the customer's next message {RULE_LABELS.get(signal.detail, signal.detail)}"
        else:
            how = signal.detail
        lines.append({"signal": signal, "how": how,
                      "suspected": signal.certainty == ComplaintSignal.Certainty.SUSPECTED})
    return lines


CONTEXT_MESSAGES = 6


def _conversation_context(trace: Trace) -> list[Message]:
    """Return the last few messages of the conversation before the traced inbound message, oldest first."""
    earlier = Message.objects.filter(conversation_id=trace.conversation_id).exclude(text="")
    if trace.message is not None:
        when, pk = trace.message.created_at, trace.message.pk
        earlier = earlier.filter(Q(created_at__lt=when) | Q(created_at=when, pk__lt=pk))
    else:
        earlier = earlier.filter(created_at__lt=trace.created_at)
    return list(earlier.order_by("-created_at", "-pk")[:CONTEXT_MESSAGES])[::-1]


def _highlight(text: str, problems: list[dict]) -> str:
    """Return the attempt's text, escaped, with every number the verifier refused wrapped in <mark>."""
    html = str(escape(text))
    for token in sorted({str(p.get("token")) for p in problems if p.get("token")}, key=len, reverse=True):
        safe = str(escape(token))
        html = html.replace(safe, f'<mark class="bad">{safe}</mark>')
    return mark_safe(html)  # noqa: S308 - built from escaped text only


def _trace_panel(trace, user) -> dict | None:
    """Shape the last turn's trace for the side panel: chunks with evidence ids, facts, verifier problems."""
    if trace is None:
        return None
    evidence = trace.evidence or []
    by_chunk = {e.get("chunk_id"): e for e in evidence if e.get("kind") == "chunk" and e.get("chunk_id")}
    missing = [r.get("chunk_id") for r in trace.retrieval or [] if r.get("chunk_id") not in by_chunk]
    current_text = {}
    if missing:
        current_text = dict(Chunk.objects.filter(pk__in=[m for m in missing if m]).values_list("pk", "text"))
    chunks = []
    for row in trace.retrieval or []:
        used = by_chunk.get(row.get("chunk_id"))
        chunks.append({**row, "evidence_id": used["id"] if used else "",
                       "text": used["text"] if used else current_text.get(row.get("chunk_id"), ""),
                       "text_is_current": used is None})
    attempts = []
    for attempt in trace.attempts or []:
        verdict = attempt.get("verdict") or {}
        attempts.append({"attempt": attempt.get("attempt"), "error": attempt.get("error", ""),
                         "needs_human": attempt.get("needs_human", False), "has_verdict": bool(verdict),
                         "grounded": verdict.get("grounded"), "problems": verdict.get("problems") or [],
                         "evidence_ids": attempt.get("evidence_ids") or []})
    return {
        "trace": trace,
        "chunks": chunks,
        "facts": [e for e in evidence if e.get("kind") == "fact"],
        "tool_calls": [{"capability": c.get("capability"), "ok": c.get("ok"), "error": c.get("error")}
                       for c in trace.tool_calls or []],
        "attempts": attempts,
        "chunk_links": may_edit_kb(user),
    }


@login_required
def last_turn_panel(request, conversation_id):
    """The conversation page's "bot's last turn": chunks with evidence ids, billing calls, facts, verifier."""
    if not may_read_traces(request.user):
        raise PermissionDenied
    conversation = get_object_or_404(Conversation, pk=conversation_id)
    turn = _trace_panel(selectors.conversation_last_turn(conversation=conversation), request.user)
    return render(request, "traces/_last_turn.html", {"turn": turn})


@login_required
def trace_of_reply(request, message_id):
    """Open the trace of the turn that sent this bot message (the desk links here, knowing only the message)."""
    if not may_read_traces(request.user):
        raise PermissionDenied
    trace = Trace.objects.filter(reply_id=message_id).only("pk").first()
    if trace is None:
        raise Http404("No bot turn sent this message.")
    return redirect("traces:detail", trace_id=trace.pk)
