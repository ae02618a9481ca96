"""The inbox: the escalation queue's views, filters and keyset pages."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import render
from django.views.decorators.http import require_GET

from core import clock
from desk.access import may_supervise_desk, may_work_desk
from desk.channel import MEDIA_KINDS
from desk.forms import QueueFilterForm
from desk.selectors import (
    VIEWS,
    QueueCursor,
    QueueFilters,
    attachments_of,
    escalation_counts,
    escalation_queue,
    view_counts,
    wait_level,
    wait_thresholds,
)

QUEUE_PAGE_SIZE = 50


def _waited_label(waited: timedelta) -> str:
    minutes = max(0, int(waited.total_seconds() // 60))
    if minutes < 60:
        return f"{minutes} min"
    if minutes < 60 * 48:
        return f"{minutes // 60} h {minutes % 60:02d} min"
    return f"{minutes // (60 * 24)} days"


@login_required
@require_GET
def queue(request):
    """The inbox: a view (all open, unassigned, mine, waiting on the customer, resolved) of escalations with
    their reason, summary, last customer message and waiting time, filtered and paged by keyset."""
    if not may_work_desk(request.user):
        raise PermissionDenied("Only agents and supervisors work the queue.")
    form = QueueFilterForm(request.GET or None)
    filters = form.filters() if form.is_bound else QueueFilters()
    after = QueueCursor.decode(request.GET.get("after"))
    now = clock.now()
    page = list(escalation_queue(agent=request.user, filters=filters, after=after, limit=QUEUE_PAGE_SIZE + 1,
                                 now=now))
    older = None
    if len(page) > QUEUE_PAGE_SIZE:
        page = page[:QUEUE_PAGE_SIZE]
        query = request.GET.copy()
        query["after"] = QueueCursor.of(page[-1], filters.order_field).encode()
        older = query.urlencode()
    amber, red = wait_thresholds()
    # One query for the page's files, and none when no row's last message is a photo, voice note or file.
    files = attachments_of(message_ids=[e.last_customer_message_id for e in page
                                        if e.last_customer_kind in MEDIA_KINDS])
    rows = []
    for escalation in page:
        waited = (escalation.resolved_at or now) - escalation.created_at
        # A taken escalation has someone on it: only the ones nobody holds turn amber or red.
        level = "" if escalation.status != "open" else wait_level(waited, amber_minutes=amber,
                                                                  red_minutes=red)
        rows.append({"escalation": escalation, "conversation": escalation.conversation,
                     "waited": _waited_label(waited), "level": level,
                     "attachment": files.get(escalation.last_customer_message_id)})
    counts = escalation_counts()
    view_query = request.GET.copy()
    for name in ("view", "after", "resolved_from", "resolved_to"):
        view_query.pop(name, None)
    context = {
        "form": form, "filters": filters, "rows": rows, "older_query": older, "paged": after is not None,
        "counts": counts, "counts_total": sum(c["total"] for c in counts),
        "views": VIEWS, "view_counts": view_counts(agent=request.user), "view_query": view_query.urlencode(),
        "problems": form.problems(),
        "amber_minutes": amber, "red_minutes": red, "supervises": may_supervise_desk(request.user),
    }
    template = "desk/queue.html#rows" if request.htmx else "desk/queue.html"
    return render(request, template, context)
