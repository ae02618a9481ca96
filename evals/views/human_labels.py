"""Human labels of answers: the label forms on run items and traces, and the trace page's evals panels."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from core import params
from evals.access import access_run_item
from evals.human_labels import human_label_save, item_key_for, split_for
from evals.models import EvalRunItem, GoldenSet, HumanLabel
from evals.online_judge import trace_verdicts
from traces.access import may_review_traces, require_trace_reviewer
from traces.models import Trace


def item_label_context(item: EvalRunItem) -> None:
    """Give a run item its human label (or None) and its split, as the label form shows them."""
    labels = list(item.human_labels.all())
    item.human_label = labels[0] if labels else None
    item.split = item.human_label.split if item.human_label else split_for(item_key_for(run_item=item))


@login_required
@require_POST
def run_item_label(request, item_id):
    """Save a person's pass/fail (with a note) on a run item's answer, for judge calibration."""
    item = access_run_item(request.user, item_id)
    error = _save_label(request, run_item=item)
    if request.htmx:
        item = EvalRunItem.objects.prefetch_related("human_labels").get(pk=item.pk)
        item_label_context(item)
        return render(request, "traces/run_detail.html#label_form", {"item": item, "label_error": error},
                      status=400 if error else 200)
    return HttpResponseRedirect(f"{reverse('evals:run', args=[item.run_id])}#item-{item.pk}")


LABEL_NOTE_MAX = 2_000


def _save_label(request, **target) -> str:
    label = request.POST.get("label", "")
    if label not in (HumanLabel.Label.PASS, HumanLabel.Label.FAIL):
        messages.error(request, "Choose pass or fail.")
        return "Choose pass or fail."
    try:
        note = params.text(request.POST.get("note"), label="The note", max_length=LABEL_NOTE_MAX)
        if note.error:
            raise ValueError(note.error)
        saved = human_label_save(label=label, note=note.value, author=request.user, **target)
    except ValueError as error:
        messages.error(request, str(error))
        return str(error)
    if not request.htmx:
        messages.success(request, f"Labelled {saved.label} ({saved.split} split).")
    return ""


@login_required
@require_POST
def trace_label(request, trace_id):
    """Save a person's pass/fail (with a note) on a trace's answer, for judge calibration."""
    require_trace_reviewer(request.user)
    trace = get_object_or_404(Trace, pk=trace_id)
    _save_label(request, trace=trace)
    return HttpResponseRedirect(f"{reverse('traces:detail', args=[trace.pk])}#human-label")


@login_required
def trace_panels(request, trace_id):
    """The trace page's evals panels (loaded by htmx): the judge's verdicts, replay, make a golden case, and the
    human label."""
    require_trace_reviewer(request.user)
    trace = get_object_or_404(Trace, pk=trace_id)
    return render(request, "evals/_trace_panels.html", {
        "trace": trace, "golden_sets": list(GoldenSet.objects.filter(archived_at__isnull=True)),
        "golden_cases": list(trace.golden_cases.select_related("golden_set")),
        "judge_verdicts": trace_verdicts(trace),
        **trace_label_context(request.user, trace)})


def trace_label_context(user, trace: Trace) -> dict:
    """Return the human-label form's context for the trace page (empty for users who may not label)."""
    if not may_review_traces(user):
        return {}
    label = trace.human_labels.select_related("author").first()
    return {"human_label": label, "label_split": label.split if label else split_for(item_key_for(trace=trace))}


