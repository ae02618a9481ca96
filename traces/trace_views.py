"""Trace browser, export, review sessions (open coding) and the taxonomy page (axial coding)."""

import datetime as dt
import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest, PermissionDenied
from django.db.models import Q
from django.http import Http404, QueryDict, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from core import clock, csv_safe, params
from desk.disagreement import RULE_LABELS
from desk.models import ComplaintSignal, Conversation, Message
from kb.access import may_edit_kb
from kb.models import Chunk
from traces import labels, selectors, services
from traces.access import may_read_traces, may_review_traces, require_trace_reviewer
from traces.fingerprint import PARTS
from traces.models import (
    STAGES,
    FailureClass,
    FailureClassEvent,
    ReviewNote,
    ReviewSession,
    SavedFilter,
    SessionTrace,
    Trace,
)
from traces.taxonomy import bars, chart_height, saturation


def access_session(user, session_id: int) -> ReviewSession:
    """Return the session if this user may review it."""
    require_trace_reviewer(user)
    return get_object_or_404(ReviewSession, pk=session_id)


@login_required
def trace_list(request):
    """List traces newest first with the browser's filters, keyset-paginated on (created_at, id)."""
    if not may_read_traces(request.user):
        raise PermissionDenied
    filters = selectors.parse_trace_filters(request.GET)
    after = params.cursor(request.GET.get("after"))
    page, next_cursor, count, more = selectors.trace_page_and_count(
        filters=filters, after=request.GET.get("after", "") if after.ok else "", limit=selectors.COUNT_LIMIT)
    query = QueryDict(mutable=True)
    query.update(filters.to_query())
    next_query = query.copy()
    if next_cursor:
        next_query["after"] = next_cursor
    choices = selectors.filter_choices()
    return render(request, "traces/trace_list.html", {
        "traces": page, "filters": filters, "params": request.GET, "choices": choices,
        "select_filters": _select_filters(filters, choices),
        "count": count, "count_more": more,
        "count_text": _count_text(count, more, selectors.trace_count_estimate(filters=filters) if more else None),
        "stages": STAGES, "filter_query": query.urlencode(),
        "next_query": next_query.urlencode() if next_cursor else "",
        "may_review": may_review_traces(request.user),
        "problems": [*filters.problems, *([after.error] if after.error else [])],
        "saved_filters": SavedFilter.objects.filter(user=request.user).order_by("name"),
        "next_path": request.get_full_path(),
    })


@login_required
@require_POST
def saved_filter_save(request):
    """Save the browser's current filters under a name (the user's own list); a bad name or filter says why."""
    if not may_read_traces(request.user):
        raise PermissionDenied
    raw_query = request.POST.get("query", "")
    try:
        saved, what = services.saved_filter_save(user=request.user, name=request.POST.get("name"),
                                                 raw_query=raw_query)
    except services.SavedFilterError as error:
        messages.error(request, str(error))
        back = QueryDict(raw_query[:services.SAVED_FILTER_QUERY_MAX]).urlencode()
        return redirect(f"{reverse('traces:list')}?{back}" if back else reverse("traces:list"))
    messages.success(request, {"saved": f"Filter “{saved.name}” saved.",
                               "replaced": f"Filter “{saved.name}” now holds these filters.",
                               "unchanged": f"Filter “{saved.name}” already holds these filters."}[what])
    return redirect(f"{reverse('traces:list')}?{saved.query}")


@login_required
@require_POST
def saved_filter_delete(request, saved_filter_id):
    """Delete one of the user's saved filters; another user's (or one already deleted) is not found."""
    if not may_read_traces(request.user):
        raise PermissionDenied
    name = services.saved_filter_delete(user=request.user, saved_filter_id=saved_filter_id)
    if name is None:
        messages.info(request, "That saved filter is not in your list (already deleted?).")
    else:
        messages.success(request, f"Filter “{name}” deleted.")
    return redirect("traces:list")


def _count_text(count: int, more: bool, estimate: int | None = None) -> str:
    if more:
        about = f" (about {estimate:,} by PostgreSQL's estimate)" if estimate and estimate > count else ""
        return f"{count:,}+ traces match{about}."
    return f"{count:,} trace{'s' if count != 1 else ''} match{'es' if count == 1 else ''}."


SELECT_FILTERS = [("escalation_reason", "Escalation reason"), ("route", "Route"), ("language", "Language"),
                  ("channel", "Channel"), ("prompt_version", "Prompt"), ("index_version", "Index"),
                  ("model", "Model")]


def _select_filters(filters, choices) -> list[dict]:
    """Shape the data-backed select filters: options, the one selected, and a value typed that no trace has."""
    shaped = []
    for name, label in SELECT_FILTERS:
        raw = getattr(filters, name)
        raw = "" if raw is None else str(raw)
        options = choices[name]
        matched = labels.matching_values(raw, [c.value for c in options], labels.LABELS_BY_FILTER.get(name))
        selected = matched[0] if len(matched) == 1 else raw
        shaped.append({"name": name, "label": label, "options": options, "selected": selected,
                       "unknown": raw if raw and not matched else ""})
    return shaped


EXPORT_COLUMNS = ["id", "created_at", "channel", "language", "route", "routing_rule", "outcome", "escalation_reason",
                  "verdict", "has_derived", "prompt_version", "model", "index_version", "total_ms", "query",
                  "final_text", "conversation_id", "provider_message_id"]


def _export_rows(filters):
    traces = selectors.traces_filtered(filters=filters).values_list(*EXPORT_COLUMNS)
    for row in traces.iterator(chunk_size=2000):
        record = dict(zip(EXPORT_COLUMNS, row))
        record["created_at"] = record["created_at"].isoformat()
        yield record


class _Echo:
    def write(self, value):
        return value


@login_required
def trace_export(request, fmt):
    """Stream the traces of the current filter as JSONL or CSV."""
    require_trace_reviewer(request.user)
    if fmt not in ("jsonl", "csv"):
        raise Http404("Export as jsonl or csv.")
    filters = selectors.parse_trace_filters(request.GET)
    if filters.problems:  # a download wider than the analyst asked for would be read as the answer
        raise BadRequest(" ".join(filters.problems))
    stamp = clock.now().strftime("%Y%m%d-%H%M%S")
    if fmt == "jsonl":
        body = (json.dumps(record, ensure_ascii=False) + "\n" for record in _export_rows(filters))
        response = StreamingHttpResponse(body, content_type="application/x-ndjson")
    else:
        writer = csv_safe.writer(_Echo())
        body = (writer.writerow(row) for row in _rows_with_header(_export_rows(filters), writer))
        response = StreamingHttpResponse(body, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="traces-{stamp}.{fmt}"'
    return response


def _rows_with_header(records, writer):
    yield EXPORT_COLUMNS
    for record in records:
        yield [record[c] for c in EXPORT_COLUMNS]


@login_required
def trace_detail(request, trace_id):
    """Show one turn: route, retrieval table, billing calls, evidence, writer attempts, final text, latency."""
    if not may_read_traces(request.user):
        raise PermissionDenied
    trace = get_object_or_404(Trace.objects.select_related("conversation__contact", "message", "reply",
                                                           "configuration").defer("search_vector"), pk=trace_id)
    notes = []
    if may_review_traces(request.user):
        notes = list(trace.review_notes.select_related("author", "failure_class", "session"))
    return render(request, "traces/trace_detail.html", {"trace": trace, "notes": notes, **turn_facts(trace),
                                                        "context": _conversation_context(trace),
                                                        "complaints": _complaints(trace),
                                                        "configuration": _configuration_rows(trace)})


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
        "stages": labels.latency_waterfall(latency, trace.total_ms),
        "billing_calls": labels.billing_calls(trace.tool_calls),
        "attempts": attempts,
        "humanizer": labels.humanizer_sentence(trace.humanizer),
        "tokens": labels.token_usage(trace.token_usage),
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


# --- review sessions ---------------------------------------------------------------------------------------------


@login_required
def session_list(request):
    """List review sessions and offer a new uniform draw (defaults: 30 traces from the last 7 days)."""
    require_trace_reviewer(request.user)
    if request.method == "POST":
        return _session_create(request)
    today = clock.today()
    return render(request, "traces/session_list.html", {
        "sessions": ReviewSession.objects.all()[:100],
        "default_since": (today - dt.timedelta(days=7)).isoformat(), "default_until": today.isoformat(),
        "filters": selectors.parse_trace_filters(request.GET).to_query(),
    })


MAX_SESSION_SIZE = 1_000


def _session_create(request):
    filters = selectors.parse_trace_filters(request.POST)
    name = params.text(request.POST.get("name"), label="The name", max_length=200)
    size = params.integer(request.POST.get("size"), label="The size", default=30, low=1, high=MAX_SESSION_SIZE)
    seed = params.integer(request.POST.get("seed"), label="The seed", low=-(2**63), high=2**63 - 1)
    problems = [*filters.problems, *(p.error for p in (name, size, seed) if p.error)]
    try:
        if problems:
            raise services.ReviewError(" ".join(problems))
        if filters.since is None or filters.until is None:
            raise services.ReviewError("Give the window's first and last day.")
        session = services.review_session_create(
            name=name.value, window_start=filters.since, window_end=filters.until, size=size.value,
            filters=filters.to_query(), seed=seed.value, created_by=request.user)
    except services.ReviewError as error:
        messages.error(request, str(error))
        return redirect("traces:sessions")
    if request.POST.get("add_verified_wrong"):
        services.review_session_add_verified_wrong(session=session)
    if request.POST.get("add_complaints"):
        services.review_session_add_complaints(session=session)
    return redirect("traces:session", session.pk)


@login_required
def session_detail(request, session_id):
    """Show a session's traces with this analyst's progress and the saturation hint."""
    session = access_session(request.user, session_id)
    items = list(selectors.session_items(session=session))
    mine = {n.trace_id: n for n in session.notes.filter(author=request.user)}
    for item in items:
        item.my_note = mine.get(item.trace_id)
    done = sum(1 for item in items if item.my_note and item.my_note.verdict != ReviewNote.Verdict.DEFER)
    return render(request, "traces/session_detail.html", {
        "session": session, "items": items, "done": done, "total": len(items),
        "saturation": _saturation(session), "first_open": next((i for i in items if not i.my_note), None),
    })


def _saturation(session):
    first_note_of_class = {}
    flags = []
    for note in session.notes.filter(failure_class__isnull=False).order_by("updated_at", "pk"):
        flags.append(note.failure_class_id not in first_note_of_class)
        first_note_of_class.setdefault(note.failure_class_id, note.pk)
    return saturation(flags)


@login_required
@require_POST
def session_add_verified_wrong(request, session_id):
    """Append the window's 'verified wrong' traces to the session, tagged as such."""
    session = access_session(request.user, session_id)
    added = services.review_session_add_verified_wrong(session=session)
    messages.info(request, f"{added} verified-wrong trace(s) added.")
    return redirect("traces:session", session.pk)


@login_required
@require_POST
def session_add_complaints(request, session_id):
    """Append the window's traces whose answer the customer complained about (confirmed), tagged as such."""
    session = access_session(request.user, session_id)
    added = services.review_session_add_complaints(session=session)
    messages.info(request, f"{added} complaint trace(s) added.")
    return redirect("traces:session", session.pk)


FIRST_FAILURE_MAX = ReviewNote._meta.get_field("first_failure").max_length


@login_required
def session_review(request, session_id, position):
    """Review one trace of the session: read it, then pass / fail (first upstream failure + stage) / defer."""
    session = access_session(request.user, session_id)
    item = get_object_or_404(SessionTrace.objects.select_related("trace"), session=session, position=position)
    note = ReviewNote.objects.filter(session=session, trace=item.trace, author=request.user).first()
    positions = list(session.items.values_list("position", flat=True))
    index = positions.index(position)
    previous_position = positions[index - 1] if index > 0 else None
    next_position = positions[index + 1] if index + 1 < len(positions) else None
    error = ""
    if request.method == "POST":
        faithful = params.boolean(request.POST.get("model_faithful"), label="Was the model faithful?")
        first_failure = params.text(request.POST.get("first_failure"), label="The first upstream failure",
                                    max_length=FIRST_FAILURE_MAX)
        try:
            if faithful.error or first_failure.error:
                raise services.ReviewError(faithful.error or first_failure.error)
            services.review_note_save(session=session, trace=item.trace, author=request.user,
                                      verdict=request.POST.get("verdict", ""), first_failure=first_failure.value,
                                      stage=request.POST.get("stage", ""), model_faithful=faithful.value)
        except services.ReviewError as failure:
            error = str(failure)
        else:
            if next_position is not None:
                return redirect("traces:review", session.pk, next_position)
            return redirect("traces:session", session.pk)
    done = session.notes.filter(author=request.user).exclude(verdict=ReviewNote.Verdict.DEFER).count()
    return render(request, "traces/session_review.html", {
        **turn_facts(item.trace),
        "session": session, "item": item, "trace": item.trace, "note": note, "review_stages": STAGES, "error": error,
        "previous_position": previous_position, "next_position": next_position, "done": done,
        "total": len(positions), "number": index + 1, "form": request.POST if error else None,
    }, status=400 if error else 200)


# --- taxonomy ----------------------------------------------------------------------------------------------------


@login_required
def session_taxonomy(request, session_id):
    """Group a session's failure notes into classes; counts by class and stage with an SVG bar chart."""
    session = access_session(request.user, session_id)
    if request.method == "POST":
        _taxonomy_action(request, session)
        return redirect("traces:taxonomy", session.pk)
    summary, classes = selectors.session_taxonomy(session=session)
    class_counts = [(classes[pk].name if pk else "(unassigned)", count) for pk, count in summary.by_class]
    class_bars = bars(class_counts)
    stage_bars = bars([(labels.label(labels.STAGE_LABELS, stage), count) for stage, count in summary.by_stage])
    live = [c for c in classes.values() if c.merged_into_id is None]
    merged = [c for c in classes.values() if c.merged_into_id is not None]
    notes = session.notes.filter(verdict=ReviewNote.Verdict.FAIL).select_related("author", "failure_class", "trace")
    return render(request, "traces/taxonomy.html", {
        "session": session, "summary": summary, "live_classes": sorted(live, key=lambda c: c.name.lower()),
        "merged_classes": merged, "notes": notes, "stages": STAGES,
        "class_bars": class_bars, "stage_bars": stage_bars,
        "class_chart_height": chart_height(class_bars), "stage_chart_height": chart_height(stage_bars),
        "class_ids": {classes[pk].name if pk else "(unassigned)": pk for pk, _ in summary.by_class},
        "retrieval_share": round(100 * summary.share(summary.retrieval_failures)),
        "generation_share": round(100 * summary.share(summary.generation_failures)),
        "events": FailureClassEvent.objects.filter(failure_class__session=session)
        .select_related("failure_class", "actor").order_by("-created_at", "-pk")[:50],
    })


def _session_class(session, raw: str | None, *, label: str) -> FailureClass | None:
    """Return the session's failure class named by a posted id (None when none was picked); 404 when unknown."""
    pk = params.integer(raw, label=label).or_bad_request()
    return get_object_or_404(FailureClass, pk=pk, session=session) if pk is not None else None


def _taxonomy_action(request, session):
    action = request.POST.get("action")
    name = params.text(request.POST.get("name"), label="The name",
                       max_length=FailureClass._meta.get_field("name").max_length)
    definition = params.text(request.POST.get("definition"), label="The definition",
                             max_length=FailureClass._meta.get_field("definition").max_length)
    try:
        if action in ("create", "rename") and (name.error or definition.error):
            raise services.ReviewError(name.error or definition.error)
        if action == "create":
            services.failure_class_create(session=session, name=name.value, definition=definition.value,
                                          stage=request.POST.get("stage", ""), actor=request.user)
        elif action == "assign":
            target = _session_class(session, request.POST.get("failure_class"), label="The class")
            note_ids = [params.integer(v, label="A note").or_bad_request() for v in request.POST.getlist("notes")]
            services.review_notes_assign(session=session, note_ids=[n for n in note_ids if n is not None],
                                         failure_class=target, actor=request.user)
        elif action == "rename":
            target = _session_class(session, request.POST.get("failure_class"), label="The class")
            if target is None:
                raise services.ReviewError("Pick the class to rename.")
            services.failure_class_rename(failure_class=target, name=name.value, definition=definition.value,
                                          actor=request.user)
        elif action == "merge":
            source = _session_class(session, request.POST.get("source"), label="The class to merge")
            target = _session_class(session, request.POST.get("target"), label="The class to merge into")
            if source is None or target is None:
                raise services.ReviewError("Pick the two classes to merge.")
            services.failure_class_merge(source=source, target=target, actor=request.user)
    except services.ReviewError as error:
        messages.error(request, str(error))


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
