"""Read-only trace pages (the full browser with filters comes with the review tools)."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, render

from traces.models import Trace


def _may_read_traces(user) -> bool:
    # Analysts and supervisors review traces; agents read the trace behind their conversations.
    return user.has_perm("desk.review_traces") or user.has_perm("desk.use_desk")


@login_required
def trace_list(request):
    """List the latest traces, newest first (keyset on id)."""
    if not _may_read_traces(request.user):
        raise PermissionDenied
    traces = Trace.objects.select_related("conversation__contact").order_by("-pk")
    before = request.GET.get("before")
    if before and before.isdigit():
        traces = traces.filter(pk__lt=int(before))
    page = list(traces[:50])
    return render(request, "traces/trace_list.html", {
        "traces": page, "next_before": page[-1].pk if len(page) == 50 else None,
    })


@login_required
def trace_detail(request, trace_id):
    """Show one turn: route, retrieval table, billing calls, evidence, writer attempts, final text, latency."""
    if not _may_read_traces(request.user):
        raise PermissionDenied
    trace = get_object_or_404(Trace.objects.select_related("conversation__contact", "message"), pk=trace_id)
    stages = [{"name": name, "ms": ms} for name, ms in trace.latency_ms.items()]
    longest = max((s["ms"] for s in stages), default=0) or 1
    for stage in stages:
        stage["width"] = max(1, round(100 * stage["ms"] / longest))
    return render(request, "traces/trace_detail.html", {"trace": trace, "stages": stages})
