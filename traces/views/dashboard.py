"""The dashboard's pages: the refusal dial and the numbers around it, from the hourly rollups; its CSV; a review
sample. The sections themselves are built in traces/views/dashboard_sections.py."""

from __future__ import annotations


from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from core import clock, csv_safe, params
from traces import display, services
from traces.access import dashboard_scope, require_trace_reviewer
from traces.views.dashboard_request import RANGES, parse_request
from traces.views.dashboard_sections import dashboard_build

SAMPLE_SIZE = 30


def _read(request):
    scope = dashboard_scope(request.user)
    now = clock.now()
    parsed = parse_request(request.GET, today=timezone.localdate(now),
                           agent_id=request.user.pk if scope == "own" else None)
    return scope, now, parsed


@login_required
def dashboard_page(request):
    """Show the dial, escalations per reason, shares, routes, operations and the comparison of two versions."""
    scope, now, parsed = _read(request)
    context = dashboard_build(parsed, scope=scope, now=now)
    context.update({
        "request_params": parsed, "ranges": RANGES, "problems": parsed.problems,
        "channels": display.CHANNEL_LABELS.items(), "languages": display.LANGUAGE_LABELS.items(),
        "routes_choices": display.ROUTE_LABELS.items(), "query_string": parsed.query_string(),
        "csv_query": parsed.query_string(a=parsed.compare_a, b=parsed.compare_b), "sample_size": SAMPLE_SIZE,
    })
    return render(request, "traces/dashboard.html", context)


@login_required
def dashboard_csv(request):
    """Download every chart's numbers as CSV: section, day (or key), measure, value."""
    scope, now, parsed = _read(request)
    if parsed.problems:  # a download of another range than the one asked for would be read as the answer
        raise BadRequest(" ".join(parsed.problems))
    context = dashboard_build(parsed, scope=scope, now=now)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = (f'attachment; filename="dashboard-{parsed.query.first_day}-'
                                       f'{parsed.query.last_day}.csv"')
    writer = csv_safe.writer(response)
    writer.writerow(["section", "day_or_key", "measure", "value"])
    writer.writerows(context["csv_rows"])
    return response


@login_required
@require_POST
def dashboard_review(request):
    """Start a review session from a uniform seeded sample of the dashboard's range and filters."""
    require_trace_reviewer(request.user)
    parsed = parse_request(request.POST, today=clock.today(), agent_id=None)
    if parsed.problems:
        raise BadRequest(" ".join(parsed.problems))
    size = params.integer(request.POST.get("size"), label="The sample size", default=SAMPLE_SIZE, low=1,
                          high=500).or_bad_request()
    query = parsed.query
    filters = {name: getattr(query, name) for name in ("channel", "language", "route") if getattr(query, name)}
    try:
        session = services.review_session_create(
            name=f"Dashboard sample {query.first_day:%Y-%m-%d} to {query.last_day:%Y-%m-%d}",
            window_start=query.start(), window_end=query.end(), size=size, filters=filters,
            created_by=request.user)
    except services.ReviewError as error:
        messages.error(request, str(error))
        return redirect(f"{reverse('dashboard:page')}?{parsed.query_string()}")
    messages.success(request, f"Review session “{session.name}” started with {session.items.count()} traces.")
    return redirect("traces:session", session_id=session.pk)
