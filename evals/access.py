"""Who may open which evals object: one permission-checked accessor per object (analysts and supervisors)."""

from django.shortcuts import get_object_or_404

from evals.models import EvalRun, EvalRunItem, GoldenCase, GoldenSet
from traces.access import require_trace_reviewer


def access_golden_set(user, golden_set_id: int) -> GoldenSet:
    """Return the golden set if this user may evaluate with it."""
    require_trace_reviewer(user)
    return get_object_or_404(GoldenSet, pk=golden_set_id)


def access_golden_case(user, case_id: int) -> GoldenCase:
    """Return the golden case (with its set and trace) if this user may edit golden cases."""
    require_trace_reviewer(user)
    return get_object_or_404(GoldenCase.objects.select_related("golden_set", "trace"), pk=case_id)


def access_run(user, run_id: int) -> EvalRun:
    """Return the run if this user may read runs."""
    require_trace_reviewer(user)
    return get_object_or_404(EvalRun.objects.select_related("golden_set", "created_by"), pk=run_id)


def access_run_item(user, item_id: int) -> EvalRunItem:
    """Return the run item (with its run) if this user may label it."""
    require_trace_reviewer(user)
    return get_object_or_404(EvalRunItem.objects.select_related("run"), pk=item_id)
