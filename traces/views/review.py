"""Review sessions (open coding): draw a sample, add the flagged traces, and review one trace after another."""

import datetime as dt

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from core import clock, params
from traces import selectors, services
from traces.access import require_trace_reviewer
from traces.models import STAGES, ReviewNote, ReviewSession, SessionTrace
from traces.taxonomy import saturation
from traces.views.review_form import read_review_post, review_form_context
from traces.views.turn import turn_facts


def access_session(user, session_id: int) -> ReviewSession:
    """Return the session if this user may review it."""
    require_trace_reviewer(user)
    return get_object_or_404(ReviewSession, pk=session_id)


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
        try:
            services.review_note_save(session=session, trace=item.trace, author=request.user,
                                      **read_review_post(request.POST))
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
        **review_form_context(trace=item.trace, author=request.user, post=request.POST if error else None),
    }, status=400 if error else 200)
