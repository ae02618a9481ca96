"""The judge's calibration page: TPR/TNR against human labels per split, and the corrected pass rate."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import HttpResponseRedirect
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from django.urls import reverse

from evals.human_labels import calibration_report, judge_labelled, run_corrected_rate, settled_labels_import
from evals.judge import get_judge
from evals.judge_test_reads import judge_test_reads
from evals.models import EvalRun, HumanLabel, JudgeVerdict
from evals.views.summaries import CorrectedRate, RunSummary
from traces.access import require_trace_reviewer

SPLITS = ("dev", "test")
CALIBRATION_SEED = 2026


@login_required
def calibration(request):
    """Judge against human labels for one judge version and split, and the latest run's corrected rate."""
    require_trace_reviewer(request.user)
    judge = get_judge()
    if request.method == "POST":
        split = request.POST.get("split") if request.POST.get("split") in SPLITS else "dev"
        if judge is None:
            messages.error(request, "No judge is configured.")
            return redirect("evals:calibration")
        judged = judge_labelled(judge=judge)
        messages.success(request, f"Judged {judged} labelled item(s) with {judge.version}.")
        return HttpResponseRedirect(f"{reverse('evals:calibration')}?judge_version={judge.version}&split={split}")
    versions = set(JudgeVerdict.objects.order_by().values_list("judge_version", flat=True).distinct())
    if judge is not None:
        versions.add(judge.version)
    versions = sorted(versions)
    judge_version = request.GET.get("judge_version", "")
    if judge_version not in versions:
        judge_version = judge.version if judge is not None else (versions[-1] if versions else "")
    split = request.GET.get("split") if request.GET.get("split") in SPLITS else "dev"
    # Showing the test split's TPR/TNR is a read of it, recorded for the version (the first read is final).
    report = calibration_report(judge_version=judge_version, split=split, purpose="calibration page",
                                reader=request.user) if judge_version else None
    reads = judge_test_reads(judge_version) if judge_version else []
    latest = (EvalRun.objects.select_related("golden_set")
              .filter(judge_version=judge_version, status=EvalRun.Status.DONE).first() if judge_version else None)
    # Recomputed with today's test-split labels (the run stored the rate its labels allowed when it finished).
    current = None
    if latest is not None:
        current = CorrectedRate.from_metrics(
            {"corrected_pass_rate": run_corrected_rate(run=latest, seed=CALIBRATION_SEED)})
    label_counts = dict(HumanLabel.objects.order_by().values_list("split").annotate(n=Count("pk")))
    return render(request, "traces/calibration.html", {
        "judge": judge, "versions": versions, "judge_version": judge_version, "split": split, "splits": SPLITS,
        "report": report, "latest": RunSummary.of(latest) if latest else None, "current": current,
        "label_counts": label_counts,
        "labelled": sum(label_counts.values()), "test_reads": reads,
    })




@login_required
@require_POST
def calibration_import_settled(request):
    """Import the review queues' settled faithfulness labels as human labels (a second click changes nothing)."""
    require_trace_reviewer(request.user)
    messages.success(request, settled_labels_import().summary)
    return redirect(f"{reverse('evals:calibration')}#settled")
