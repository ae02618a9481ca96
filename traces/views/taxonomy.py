"""The taxonomy pages (axial coding): group failure notes into the team's classes and chart them — a session's
notes, or every note of every session and queue."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render

from core import params
from traces import display, selectors, services
from traces.models import STAGES, FailureClass, FailureClassEvent, ReviewNote
from traces.taxonomy import bars, chart_height
from traces.access import require_trace_reviewer
from traces.views.review import access_session

TEAM_NOTES_SHOWN = 500


@login_required
def session_taxonomy(request, session_id):
    """Group a session's failure notes into the team's classes; counts by class and stage as SVG bar charts."""
    session = access_session(request.user, session_id)
    if request.method == "POST":
        _taxonomy_action(request, session)
        return redirect("traces:taxonomy", session.pk)
    return _taxonomy_page(request, session)


@login_required
def team_taxonomy(request):
    """The team's taxonomy: every failure note of every session and queue, the same classes and charts."""
    require_trace_reviewer(request.user)
    if request.method == "POST":
        _taxonomy_action(request, None)
        return redirect("traces:team_taxonomy")
    return _taxonomy_page(request, None)


def _taxonomy_page(request, session):
    summary, classes = selectors.session_taxonomy(session=session)
    class_counts = [(classes[pk].name if pk else "(unassigned)", count) for pk, count in summary.by_class]
    class_bars = bars(class_counts)
    stage_bars = bars([(display.label(display.STAGE_LABELS, stage), count) for stage, count in summary.by_stage])
    live = [c for c in classes.values() if c.merged_into_id is None]
    merged = [c for c in classes.values() if c.merged_into_id is not None]
    notes = (session.notes if session is not None else ReviewNote.objects).filter(verdict=ReviewNote.Verdict.FAIL)
    notes = notes.select_related("author", "failure_class", "trace", "session", "queue").order_by("-updated_at", "-pk")
    if session is None:
        notes = notes[:TEAM_NOTES_SHOWN]
    return render(request, "traces/taxonomy.html", {
        "session": session, "summary": summary, "live_classes": sorted(live, key=lambda c: c.name.lower()),
        "merged_classes": merged, "notes": notes, "stages": STAGES,
        "class_bars": class_bars, "stage_bars": stage_bars,
        "class_chart_height": chart_height(class_bars), "stage_chart_height": chart_height(stage_bars),
        "class_ids": {classes[pk].name if pk else "(unassigned)": pk for pk, _ in summary.by_class},
        "retrieval_share": round(100 * summary.share(summary.retrieval_failures)),
        "generation_share": round(100 * summary.share(summary.generation_failures)),
        "events": FailureClassEvent.objects.select_related("failure_class", "actor").order_by("-created_at", "-pk")[:50],
    })


def _session_class(session, raw: str | None, *, label: str) -> FailureClass | None:
    """Return the team's failure class named by a posted id (None when none was picked); 404 when unknown."""
    pk = params.integer(raw, label=label).or_bad_request()
    return get_object_or_404(FailureClass, pk=pk) if pk is not None else None


def _taxonomy_action(request, session):
    """Create, assign, rename or merge; `session` None: the team page (any note may be assigned)."""
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
