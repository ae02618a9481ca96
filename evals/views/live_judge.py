"""The dashboard's card of the judge on live traffic (loaded by htmx beside the dial)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from core import clock
from evals.judge import JudgePromptError, get_judge
from evals.models import JudgeVerdict
from evals.online_judge import live_judge_summary
from traces.access import require_trace_reviewer
from traces.views.dashboard_request import parse_request


@login_required
def dashboard_judge(request):
    """Judged count, judge-flagged rate and (when calibrated) the judge-corrected rate for the dashboard's days."""
    require_trace_reviewer(request.user)
    parsed = parse_request(request.GET, today=clock.today(), agent_id=None)
    query = parsed.query
    problem = ""
    try:
        judge_version = get_judge().version
    except JudgePromptError as error:
        problem = str(error)
        judge_version = (JudgeVerdict.objects.filter(sampled_on__isnull=False).order_by("-created_at")
                         .values_list("judge_version", flat=True).first() or "")
    summary = live_judge_summary(first_day=query.first_day, last_day=query.last_day,
                                 judge_version=judge_version) if judge_version else None
    return render(request, "evals/_dashboard_judge.html", {
        "summary": summary, "first_day": query.first_day, "last_day": query.last_day, "problem": problem,
        "rate": settings.JUDGE_LIVE_RATE, "cap": settings.JUDGE_LIVE_DAILY_CAP,
        "corrected": summary.corrected_flagged if summary else None,
    })
