"""Replay pages: one trace replayed beside itself, and a set of ticked traces replayed as one experiment."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponseRedirect, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from core import params
from desk.reasons import LABELS as REASON_LABELS
from evals import replay
from evals.judge import JudgePromptError, get_judge
from evals.models import ReplayExperiment
from evals.views.golden_cases import bulk_back
from traces import selectors
from traces.access import require_trace_reviewer
from traces.display import ROUTE_LABELS
from traces.models import Trace

VALUE_LABELS = {"answered": "Answered", "escalated": "Escalated", "clarify": "Asked to clarify",
                "declined": "Declined (not plans or billing)", "silenced": "Silenced", "pass": "pass (faithful)",
                "fail": "fail (a claim the evidence does not support)", "error": "judge error",
                "grounded": "grounded", "rewritten": "grounded after a rewrite", "ungrounded": "not grounded",
                "none": "no draft verified"}


def shown(name: str, value) -> dict:
    """Return one side of a compared aspect as the page shows it: a list of items, or a text in words."""
    if isinstance(value, (list, tuple)):
        return {"items": [str(v) for v in value], "text": ""}
    if value is None or value == "":
        return {"items": None, "text": "not judged" if name.startswith("Judge") else ""}
    if name == "Escalation reason":
        return {"items": None, "text": REASON_LABELS.get(value, value)}
    if name == "Route":
        return {"items": None, "text": ROUTE_LABELS.get(value, value)}
    if name == "Cost (USD)":
        return {"items": None, "text": f"{value:.6f}"}
    return {"items": None, "text": VALUE_LABELS.get(value, str(value)) if isinstance(value, str) else str(value)}


FILTER_QUERY_MAX = 2_000

CHANGE_LABELS = {"better": "better", "worse": "worse", "same": "same", "unknown": "judge gave no verdict"}


@login_required
def replay_trace(request, trace_id):
    """Choose a configuration (GET), then replay the trace's message under it and show both turns (POST).

    Nothing is stored and nothing is sent, so submitting twice only replays twice.
    """
    require_trace_reviewer(request.user)
    trace = get_object_or_404(Trace.objects.select_related("message", "conversation__contact", "configuration")
                              .defer("search_vector"), pk=trace_id)
    choices = replay.configuration_choices()
    chosen = request.POST.get("configuration") or request.GET.get("configuration") or replay.CURRENT
    context = {"trace": trace, "choices": choices, "chosen": chosen, "result": None, "error": ""}
    if request.method == "POST":
        if chosen not in {key for key, _ in choices}:
            context["error"] = "Choose one of the configurations listed."
            return render(request, "evals/replay.html", context, status=400)
        try:
            setup = replay.replay_setup(chosen)
            result = replay.replay_trace(trace=trace, setup=setup, judge=get_judge())
        except (replay.ReplayError, JudgePromptError) as error:
            context["error"] = str(error)
            return render(request, "evals/replay.html", context, status=400)
        context.update(result=result, change_label=CHANGE_LABELS[result.change],
                       rows=[{"name": a.name, "changed": a.changed, "before": shown(a.name, a.before),
                              "after": shown(a.name, a.after)} for a in result.aspects])
    return render(request, "evals/replay.html", context)


@login_required
@require_POST
def replay_experiment_new(request):
    """From the trace browser's ticked traces: ask which configuration (then start the experiment)."""
    require_trace_reviewer(request.user)
    back = bulk_back(request)
    ids, bad = [], []
    if "matching" in request.POST:  # every trace the browser's filters match, newest first, up to the cap
        query = params.text(request.POST.get("matching"), label="The filters", max_length=FILTER_QUERY_MAX)
        if query.error:
            bad.append(query.error)
        else:
            filters = selectors.parse_trace_filters(QueryDict(query.value))
            page, _ = selectors.trace_page(filters=filters, size=settings.REPLAY_MAX_TRACES)
            ids = [trace.pk for trace in page]
    else:
        for raw in request.POST.getlist("trace")[:1_000]:
            parsed = params.integer(raw, label="A trace id", low=1)
            (ids.append(parsed.value) if parsed.value is not None
             else bad.append(parsed.error or "A trace id is empty."))
    if bad or not ids:
        messages.error(request, " ".join(bad) or "Tick at least one trace to replay (or filter to some).")
        return HttpResponseRedirect(back)
    chosen = request.POST.get("configuration", "")
    error = ""
    if chosen:
        try:
            experiment, created = replay.replay_experiment_create(trace_ids=ids, key=chosen, user=request.user)
        except replay.ReplayError as exc:
            error = str(exc)
        else:
            if not created:
                messages.info(request, "That experiment was started already: here it is.")
            return redirect("evals:replay_experiment", experiment_id=experiment.pk)
    traces = list(Trace.objects.filter(pk__in=ids).defer("search_vector").order_by("-created_at", "-pk"))
    return render(request, "evals/replay_experiment_new.html", {
        "traces": traces, "choices": replay.configuration_choices(), "back": back, "error": error,
        "cap": settings.REPLAY_MAX_TRACES,
    }, status=400 if error else 200)


@login_required
def replay_experiment_detail(request, experiment_id):
    """One experiment: counts better / worse / same and each trace's turn before and after."""
    require_trace_reviewer(request.user)
    experiment = get_object_or_404(ReplayExperiment.objects.select_related("created_by"), pk=experiment_id)
    return render(request, "evals/replay_experiment.html", {
        "experiment": experiment, "change_labels": CHANGE_LABELS,
        "runs_url": reverse("evals:runs"),
    })
