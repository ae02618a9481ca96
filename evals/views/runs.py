"""Run pages: the runs list with plots, one run's items, and the comparison of two runs."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.shortcuts import redirect, render

from core import params
from evals.access import access_run
from evals.models import EvalRun, EvalRunItem, GoldenCase, GoldenSet, ReplayExperiment
from evals.run_plots import PlotValue, line_plot
from evals.runner import run_compare as compare_runs
from evals.views.human_labels import item_label_context
from evals.views.summaries import RunSummary, as_number
from traces.access import require_trace_reviewer

PLOTTED_RUNS = 50
LISTED_RUNS = 200
OTHER_RUNS_SHOWN = 8  # a case's other runs linked from a run's page, newest first


def _plots(summaries: list[RunSummary]) -> list[dict]:
    recall_name = summaries[-1].recall_name if summaries else "recall@5"
    labels = [f"#{s.run.pk}" for s in summaries]
    corrected = [(s.corrected.value, s.corrected.lower, s.corrected.upper) if s.corrected and not s.corrected.undefined
                 else (None, None, None) for s in summaries]
    return [
        {"name": recall_name, "slug": "recall",
         "plot": line_plot([PlotValue(label, s.recall) for label, s in zip(labels, summaries)])},
        {"name": "MRR", "slug": "mrr",
         "plot": line_plot([PlotValue(label, s.mrr) for label, s in zip(labels, summaries)])},
        {"name": "corrected pass rate (95 % interval)", "slug": "corrected",
         "plot": line_plot([PlotValue(label, *values) for label, values in zip(labels, corrected)])},
    ]


@login_required
def runs(request):
    """List runs with their versions and numbers; plot recall@k, MRR and the corrected rate over one set's runs."""
    require_trace_reviewer(request.user)
    listed = [RunSummary.of(run) for run in EvalRun.objects.select_related("golden_set")[:LISTED_RUNS]]
    golden = params.integer(request.GET.get("golden"), label="The golden set")
    # Archived sets leave the picker, except the one asked for (its runs stay readable).
    sets = list(GoldenSet.objects.filter(Q(archived_at__isnull=True) | Q(pk=golden.value or 0)))
    chosen = next((g for g in sets if g.pk == golden.value), None)
    if chosen is None and listed:
        chosen = listed[0].run.golden_set
    plotted = []
    if chosen is not None:
        recent = EvalRun.objects.filter(golden_set=chosen, status=EvalRun.Status.DONE, labels_file="")[:PLOTTED_RUNS]
        plotted = [RunSummary.of(run) for run in reversed(recent)]
    of_chosen = [s.run for s in listed if chosen is not None and s.run.golden_set_id == chosen.pk]
    return render(request, "traces/runs.html", {
        "runs": listed, "golden_sets": sets, "chosen": chosen, "plots": _plots(plotted) if plotted else [],
        "plotted_count": len(plotted),
        "default_head": of_chosen[0].pk if of_chosen else None,
        "default_base": of_chosen[1].pk if len(of_chosen) > 1 else None,
        "problems": [golden.error] if golden.error else [],
        "experiments": list(ReplayExperiment.objects.select_related("created_by")[:LISTED_RUNS]),
    })

@login_required
def run_detail(request, run_id):
    """Show a run's per-case items, failing cases first; each expands to its answer and a human-label form."""
    run = access_run(request.user, run_id)
    items = list(run.items.prefetch_related("human_labels"))
    items.sort(key=lambda item: (item.passed, item.case_id))
    cases = {case.case_id: case for case in GoldenCase.objects.filter(golden_set_id=run.golden_set_id,
                                                                        case_id__in=[i.case_id for i in items])
             .only("pk", "case_id", "trace_id")}
    other_runs: dict[str, list] = {}
    for row in (EvalRunItem.objects.filter(run__golden_set_id=run.golden_set_id, case_id__in=list(cases),
                                           run__labels_file="")
                .exclude(run=run).order_by("-run_id").values("run_id", "case_id", "failures")):
        if len(other_runs.setdefault(row["case_id"], [])) < OTHER_RUNS_SHOWN:
            other_runs[row["case_id"]].append({"run_id": row["run_id"], "passed": not row["failures"]})
    for item in items:
        item_label_context(item)
        item.golden_case = cases.get(item.case_id)
        item.other_runs = other_runs.get(item.case_id, [])
    return render(request, "traces/run_detail.html", {
        "run": run, "summary": RunSummary.of(run), "items": items,
        "failing": sum(1 for item in items if not item.passed), "gate": run.gate_decisions.first(),
    })


@login_required
def run_compare(request):
    """Compare two runs: newly failing case ids first, then newly passing, still failing, then the numbers."""
    require_trace_reviewer(request.user)
    base_id = params.integer(request.GET.get("base"), label="The base run")
    head_id = params.integer(request.GET.get("head"), label="The head run")
    if base_id.value is None or head_id.value is None:
        messages.error(request, base_id.error or head_id.error or "Pick two runs to compare.")
        return redirect("evals:runs")
    base, head = access_run(request.user, base_id.value), access_run(request.user, head_id.value)
    comparison = compare_runs(base=base, head=head)
    base_summary, head_summary = RunSummary.of(base), RunSummary.of(head)
    metrics = []
    for name, base_value, head_value in comparison.metrics:
        b, h = as_number(base_value), as_number(head_value)
        row = {"name": name, "base": base_value, "head": head_value,
               "delta": round(h - b, 4) if b is not None and h is not None else None}
        if name == "corrected":  # shown with its interval, or why it is undefined
            row.update(name="corrected pass rate", base_rate=base_summary.corrected, head_rate=head_summary.corrected)
        metrics.append(row)
    return render(request, "traces/run_compare.html", {
        "base": base_summary, "head": head_summary, "comparison": comparison, "metrics": metrics,
        "different_sets": base.golden_set_id != head.golden_set_id,
        "different_versions": base.golden_set_id == head.golden_set_id and base.golden_version != head.golden_version,
    })

