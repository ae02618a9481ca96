"""Review queues: create one, work "next item" with the keyboard, follow progress and agreement, settle."""

import datetime as dt
import uuid

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from core import clock, params
from traces import review_queues, selectors, services
from traces.access import require_trace_reviewer
from traces.models import STAGES, FailureClass, QueueItem, ReviewNote, ReviewQueue, SavedFilter
from traces.scores import score_definitions
from traces.views.review_form import read_review_post, review_form_context
from traces.views.turn import turn_facts


def reviewers():
    """Return the people who may review traces (analysts, supervisors), by username."""
    return (get_user_model().objects.filter(is_active=True).filter(
        Q(groups__permissions__codename="review_traces") | Q(user_permissions__codename="review_traces")
        | Q(is_superuser=True)).distinct().order_by("username"))


def access_queue(user, queue_id: int) -> ReviewQueue:
    """Return the queue if this user may review traces."""
    require_trace_reviewer(user)
    return get_object_or_404(ReviewQueue, pk=queue_id)


@login_required
def queue_list(request):
    """List the review queues with their progress; offer a new one (the browser's filters carried over)."""
    require_trace_reviewer(request.user)
    if request.method == "POST":
        return _queue_create(request)
    today = clock.today()
    carried = selectors.parse_trace_filters(request.GET)  # the browser's filters; its dates become the window
    queues = list(ReviewQueue.objects.prefetch_related("assignees")[:100])
    for queue in queues:
        queue.progress_rows, queue.open_items, queue.item_count = review_queues.queue_progress(queue=queue)
    return render(request, "traces/queue_list.html", {
        "queues": queues, "reviewers": reviewers(), "presets": ReviewQueue.Preset.choices,
        "sources": ReviewQueue.Source.choices, "routes": selectors.filter_choices()["route"],
        "saved_filters": SavedFilter.objects.filter(user=request.user).order_by("name"),
        "filters": {k: v for k, v in carried.to_query().items() if k not in ("since", "until")},
        "default_since": (timezone.localdate(carried.since) if carried.since else today - dt.timedelta(days=7))
        .isoformat(),
        "default_until": (timezone.localdate(carried.until - dt.timedelta(microseconds=1)) if carried.until
                          else today).isoformat(),
        "token": uuid.uuid4().hex,
        "preset": request.GET.get("preset", "") if request.GET.get("preset") in ReviewQueue.Preset.values else "",
    })


def _queue_create(request):
    window = selectors.parse_trace_filters({"since": request.POST.get("since"), "until": request.POST.get("until")})
    name = params.text(request.POST.get("name"), label="The name", max_length=200)
    size = params.integer(request.POST.get("size"), label="The size", default=30, low=1,
                          high=review_queues.MAX_QUEUE_SIZE)
    seed = params.integer(request.POST.get("seed"), label="The seed", low=-(2**63), high=2**63 - 1)
    percent = params.number(request.POST.get("double_percent"), label="The share reviewed twice", default=0.0)
    saved = params.integer(request.POST.get("saved_filter"), label="The saved filter")
    route = params.text(request.POST.get("route"), label="The route", max_length=20)
    token = params.text(request.POST.get("token"), label="The form", max_length=40)
    problems = [*window.problems, *(p.error for p in (name, size, seed, percent, saved, route, token) if p.error)]
    try:
        if problems:
            raise services.ReviewError(" ".join(problems))
        if window.since is None or window.until is None:
            raise services.ReviewError("Give the window's first and last day.")
        if not 0 <= percent.value <= 100:
            raise services.ReviewError("The share reviewed twice is between 0 and 100 %.")
        filters = selectors.parse_trace_filters(request.POST)
        if filters.problems:
            raise services.ReviewError(" ".join(filters.problems))
        chosen = filters.to_query()
        if saved.value is not None:
            saved_filter = SavedFilter.objects.filter(user=request.user, pk=saved.value).first()
            if saved_filter is None:
                raise services.ReviewError("That saved filter is not in your list (deleted?).")
            chosen = selectors.parse_trace_filters(QueryDict(saved_filter.query)).to_query()
        people = list(reviewers().filter(pk__in=[v for v in request.POST.getlist("assignees") if v.isdigit()]))
        queue, created = review_queues.review_queue_create(
            name=name.value, source=request.POST.get("source", ""), preset=request.POST.get("preset", ""),
            route=route.value, filters=chosen, window_start=window.since, window_end=window.until,
            size=size.value, double_fraction=percent.value / 100, assignees=people, seed=seed.value,
            created_by=request.user, token=token.value)
    except services.ReviewError as error:
        messages.error(request, str(error))
        return redirect("traces:queues")
    if created:
        messages.success(request, f"Queue “{queue.name}” created with {queue.items.count()} traces.")
    return redirect("traces:queue", queue.pk)


@login_required
def queue_detail(request, queue_id):
    """A queue: progress per reviewer, what is left, agreement (κ) and the disagreements to settle."""
    queue = access_queue(request.user, queue_id)
    progress, open_items, item_count = review_queues.queue_progress(queue=queue)
    agreement = review_queues.queue_agreement(queue=queue)
    mine = next((row for row in progress if row.reviewer.pk == request.user.pk), None)
    return render(request, "traces/queue_detail.html", {
        "queue": queue, "progress": progress, "open_items": open_items, "item_count": item_count, "mine": mine,
        "agreement": agreement, "failure_classes": FailureClass.objects.filter(merged_into__isnull=True),
        "definitions": {d.key: d for d in score_definitions()},

    })


@login_required
def queue_next(request, queue_id):
    """Open this reviewer's next item of the queue (none left: back to the queue)."""
    queue = access_queue(request.user, queue_id)
    item = review_queues.next_item(queue=queue, reviewer=request.user)
    if item is None:
        messages.info(request, "Nothing left for you in this queue.")
        return redirect("traces:queue", queue.pk)
    return redirect("traces:queue_review", queue.pk, item.position)


@login_required
def queue_review(request, queue_id, position):
    """Review one of your items of the queue: the trace's facts, then the note form (save goes to the next)."""
    queue = access_queue(request.user, queue_id)
    mine = review_queues.reviewer_items(queue=queue, reviewer=request.user)
    item = next((i for i in mine if i.position == position), None)
    if item is None:
        get_object_or_404(QueueItem, queue=queue, position=position)  # 404 when there is no such item
        messages.error(request, "That trace is assigned to someone else in this queue.")
        return redirect("traces:queue", queue.pk)
    index = mine.index(item)
    error = ""
    if request.method == "POST":
        try:
            services.review_note_save(queue=queue, trace=item.trace, author=request.user,
                                      **read_review_post(request.POST))
        except services.ReviewError as failure:
            error = str(failure)
        else:
            return redirect("traces:queue_next", queue.pk)
    notes = ReviewNote.objects.filter(queue=queue, author=request.user)
    note = notes.filter(trace=item.trace).first()
    done = notes.exclude(verdict=ReviewNote.Verdict.DEFER).count()
    return render(request, "traces/queue_review.html", {
        **turn_facts(item.trace),
        "queue": queue, "item": item, "trace": item.trace, "note": note, "review_stages": STAGES, "error": error,
        "previous_position": mine[index - 1].position if index > 0 else None,
        "next_position": mine[index + 1].position if index + 1 < len(mine) else None,
        "done": done, "total": len(mine), "number": index + 1, "form": request.POST if error else None,
        "failure_classes": list(FailureClass.objects.filter(merged_into__isnull=True).order_by("name")),
        **review_form_context(trace=item.trace, author=request.user, post=request.POST if error else None),
    }, status=400 if error else 200)


@login_required
@require_POST
def queue_settle(request, queue_id, queue_item_id):
    """Record the settled label of an item two reviewers disagreed on (who and when are recorded)."""
    queue = access_queue(request.user, queue_id)
    item = get_object_or_404(QueueItem, queue=queue, pk=queue_item_id)
    failure_class = params.integer(request.POST.get("failure_class"), label="The failure class")
    note = params.text(request.POST.get("note"), label="The note", max_length=400)
    scores = {d.key: request.POST.get(f"score_{d.key}") for d in score_definitions()
              if request.POST.get(f"score_{d.key}")}
    try:
        if failure_class.error or note.error:
            raise services.ReviewError(failure_class.error or note.error)
        settled, what = review_queues.settled_label_save(
            item=item, verdict=request.POST.get("verdict", ""), failure_class_id=failure_class.value,
            scores=scores, note=note.value, actor=request.user)
    except services.ReviewError as error:
        messages.error(request, f"Trace {item.trace_id}: {error}")
    else:
        messages.success(request, {"settled": f"Trace {item.trace_id} settled.",
                                   "changed": f"Trace {item.trace_id}: the settled label changed.",
                                   "unchanged": f"Trace {item.trace_id} was already settled so."}[what])
    return redirect(f"{reverse('traces:queue', args=[queue.pk])}#disagreements")

