"""Golden-set pages: the list, create, the set's page (rename, archive, its gates, run, variants, review)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import Count, Q
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from core import params
from evals import services
from evals.access import access_golden_set
from evals.gate_rules import (
    GatesFileError,
    ThresholdRow,
    gates_from_mapping,
    set_gates_mapping,
    set_gates_problems,
    threshold_rows,
)
from evals.gates_for_set import REPOSITORY_GATES, own_gates_source, set_gates_defaults
from evals.models import EvalRun, GoldenCase, GoldenSet
from evals.tasks import eval_run_enqueue
from evals.variants import variant_review, variants_generate
from evals.views.golden_cases import CASE_LIST_MAX, commas
from evals.views.summaries import RunSummary
from traces.access import require_trace_reviewer
from traces.models import FailureClass


def _golden_sets_context(*, show_archived: bool) -> dict:
    sets = GoldenSet.objects.annotate(
        case_count=Count("cases", distinct=True),
        must_pass_count=Count("cases", filter=Q(cases__must_pass=True), distinct=True),
        synthetic_count=Count("cases", filter=Q(cases__synthetic=True), distinct=True),
        awaiting_review=Count("cases", filter=Q(cases__reviewed=False), distinct=True),
    )
    archived_count = GoldenSet.objects.filter(archived_at__isnull=False).count()
    sets = list(sets if show_archived else sets.filter(archived_at__isnull=True))
    last_runs = {run.golden_set_id: RunSummary.of(run) for run in
                 EvalRun.objects.filter(status=EvalRun.Status.DONE, labels_file="")
                 .order_by("golden_set_id", "-started_at", "-pk").distinct("golden_set_id")}
    for golden_set in sets:
        golden_set.last_run = last_runs.get(golden_set.pk)
    return {"golden_sets": sets, "show_archived": show_archived, "archived_count": archived_count}


@login_required
def golden_sets(request):
    """List golden sets (archived ones only with ?archived=yes) with their version, case counts and the last
    finished run's retrieval numbers; the form to create one."""
    require_trace_reviewer(request.user)
    show = params.boolean(request.GET.get("archived"), label="Show archived", default=False)
    return render(request, "traces/golden_sets.html", {
        **_golden_sets_context(show_archived=bool(show.value)),
        "problems": [show.error] if show.error else []})


@login_required
@require_POST
def golden_set_create(request):
    """Create an empty golden set and open it; an empty or taken name comes back with the reason."""
    require_trace_reviewer(request.user)
    try:
        golden_set = services.golden_set_create(name=request.POST.get("name"))
    except services.GoldenSetError as error:
        return render(request, "traces/golden_sets.html", {
            **_golden_sets_context(show_archived=False), "create_error": str(error),
            "create_existing": getattr(error, "golden_set", None),
            "create_name": request.POST.get("name", "")[:services.NAME_MAX * 2]}, status=400)
    messages.success(request, f"Golden set {golden_set.name} created. Add cases from the trace browser or a trace page.")
    return redirect("evals:golden_set", golden_set.pk)


def _gates_card(golden_set: GoldenSet) -> dict:
    """Return what the set's gates card shows, reading the repository's gates file once and parsing the set's
    stored gates once: the form's rows (the file's metrics, with the set's own values if edited), must-pass
    ids, no_new_failures, k, and why the stored gates cannot be used ('' when they can, or when there are none)."""
    defaults = set_gates_defaults(golden_set)
    rows = threshold_rows(gates_from_mapping(defaults, source=REPOSITORY_GATES))
    unreadable = ""
    if golden_set.gates is not None:
        try:
            stored_config = gates_from_mapping(golden_set.gates, source=own_gates_source(golden_set))
            own = {row.metric: row for row in threshold_rows(stored_config)}
        except GatesFileError as error:  # edited outside the page: show the file's, the card says so
            unreadable = str(error)
        else:
            rows = [own.get(row.metric) or ThresholdRow(metric=row.metric, higher_is_better=row.higher_is_better,
                                                         optional=row.optional, judge_on=row.judge_on)
                    for row in rows] + [row for metric, row in own.items() if metric not in {r.metric for r in rows}]
    stored = golden_set.gates if isinstance(golden_set.gates, dict) else defaults
    must_pass = stored.get("must_pass") if isinstance(stored.get("must_pass"), list) else []
    k = stored.get("k") if isinstance(stored.get("k"), int) and not isinstance(stored.get("k"), bool) else 5
    return {"rows": rows, "must_pass": [str(case) for case in must_pass],
            "no_new_failures": bool(stored.get("no_new_failures")), "k": k, "unreadable": unreadable}


def _detail_context(golden_set: GoldenSet, *, card: dict | None = None) -> dict:
    cases = list(golden_set.cases.select_related("trace", "failure_class"))
    deleted = services.deleted_document_slugs()
    for case in cases:
        case.missing_documents = services.missing_documents(case, deleted)
    card = card or _gates_card(golden_set)
    return {
        "golden_set": golden_set, "cases": cases,
        "cases_missing_documents": sum(1 for case in cases if case.missing_documents),
        "awaiting_review": [c for c in cases if not c.reviewed],
        "versions": golden_set.versions.defer("snapshot").select_related("created_by").order_by("-number"),
        "runs": [RunSummary.of(run) for run in golden_set.runs.all()[:10]],
        "gate": golden_set.gate_decisions.first(),
        "failure_classes": FailureClass.objects.filter(merged_into__isnull=True)
        .select_related("session").annotate(note_count=Count("notes")).order_by("session__name", "name"),
        "gate_rows": card["rows"], "gates_must_pass": ", ".join(card["must_pass"]),
        "gates_no_new_failures": card["no_new_failures"], "repository_gates": REPOSITORY_GATES,
        "gates_unreadable": card["unreadable"],
        "rename_value": golden_set.name,
    }


@login_required
def golden_set_detail(request, golden_set_id):
    """Show a set's cases, versions and runs, its gates, the run, rename and archive forms, the variants form and
    the synthetic review queue."""
    golden_set = access_golden_set(request.user, golden_set_id)
    return render(request, "traces/golden_set_detail.html", _detail_context(golden_set))


@login_required
@require_POST
def golden_set_rename(request, golden_set_id):
    """Rename the set; an empty or taken name comes back with the reason."""
    golden_set = access_golden_set(request.user, golden_set_id)
    old_name = golden_set.name
    try:
        golden_set = services.golden_set_rename(golden_set=golden_set, name=request.POST.get("name"))
    except services.GoldenSetError as error:
        return render(request, "traces/golden_set_detail.html", {
            **_detail_context(golden_set), "rename_error": str(error),
            "rename_value": request.POST.get("name", "")[:services.NAME_MAX * 2]}, status=400)
    if golden_set.name != old_name:
        messages.success(request, f"Renamed {old_name} to {golden_set.name}.")
    return redirect("evals:golden_set", golden_set.pk)


@login_required
@require_POST
def golden_set_archive(request, golden_set_id):
    """Archive the set (hidden from lists, no new cases or runs) or unarchive it; a second click changes nothing."""
    golden_set = access_golden_set(request.user, golden_set_id)
    action = params.choice(request.POST.get("action"), ("archive", "unarchive"), label="The action")
    if not action.value:
        messages.error(request, action.error or "Archive or unarchive.")
        return redirect("evals:golden_set", golden_set.pk)
    archive = action.value == "archive"
    changed = services.golden_set_archive(golden_set=golden_set, archived=archive)
    if not changed:
        messages.info(request, f"{golden_set.name} was already {'archived' if archive else 'not archived'}.")
    elif archive:
        messages.success(request, f"{golden_set.name} archived: hidden from the lists, and it takes no new cases "
                                  f"or runs until unarchived.")
    else:
        messages.success(request, f"{golden_set.name} unarchived.")
    return redirect("evals:golden_set", golden_set.pk)


GATE_NUMBER_LIMIT = 1e9  # parsing only; evals.gate_rules.set_gates_problems says which range each metric takes


@login_required
@require_POST
def golden_set_gates(request, golden_set_id):
    """Save the set's own gates (thresholds, must-pass ids, no new failures) or go back to the gates file."""
    golden_set = access_golden_set(request.user, golden_set_id)
    if request.POST.get("action") == "reset":
        if golden_set.gates is not None:
            services.golden_set_gates_save(golden_set=golden_set, gates=None, user=request.user)
            messages.success(request, f"{golden_set.name} is held to {REPOSITORY_GATES} again.")
        else:
            messages.info(request, f"{golden_set.name} already follows {REPOSITORY_GATES}.")
        return redirect("evals:golden_set", golden_set.pk)
    problems, rows = [], []
    card = _gates_card(golden_set)
    for row in card["rows"]:
        values = {}
        for kind in ("iterate", "block"):
            parsed = params.number(request.POST.get(f"{kind}:{row.metric}"),
                                   label=f"{row.label}: the {kind} threshold", low=-GATE_NUMBER_LIMIT,
                                   high=GATE_NUMBER_LIMIT)
            if parsed.error:
                problems.append(parsed.error)
            values[kind] = parsed.value
        rows.append(ThresholdRow(metric=row.metric, higher_is_better=row.higher_is_better, optional=row.optional,
                                 judge_on=row.judge_on, **values))
    must_pass_field = params.text(request.POST.get("must_pass"), label="The must-pass ids", max_length=CASE_LIST_MAX)
    if must_pass_field.error:
        problems.append(must_pass_field.error)
    must_pass = commas(must_pass_field.value)
    case_ids = set(golden_set.cases.values_list("case_id", flat=True))
    problems += set_gates_problems(rows=rows, must_pass=must_pass, case_ids=case_ids)
    if problems:
        context = _detail_context(golden_set, card=card)
        context.update(gate_rows=rows, gates_must_pass=must_pass_field.value,
                       gates_no_new_failures="no_new_failures" in request.POST, gates_errors=problems)
        return render(request, "traces/golden_set_detail.html", context, status=400)
    mapping = set_gates_mapping(rows=rows, must_pass=must_pass, no_new_failures="no_new_failures" in request.POST,
                                k=card["k"])
    services.golden_set_gates_save(golden_set=golden_set, gates=mapping, user=request.user)
    messages.success(request, f"Gates of {golden_set.name} saved: its runs and `manage.py gate` use them now.")
    return redirect(f"{reverse('evals:golden_set', args=[golden_set.pk])}#gates")


@login_required
@require_POST
def golden_set_run(request, golden_set_id):
    """Queue a run of the set's current version, then show the runs page for this set."""
    golden_set = access_golden_set(request.user, golden_set_id)
    if golden_set.archived:
        messages.error(request, f"{golden_set.name} is archived: unarchive it to run it.")
        return redirect("evals:golden_set", golden_set.pk)
    retrieval_only = request.POST.get("retrieval_only") in ("on", "1", "true")
    eval_run_enqueue(golden_set_id=golden_set.pk, retrieval_only=retrieval_only, user_id=request.user.pk)
    messages.info(request, f"Run of {golden_set.name} v{golden_set.current_version} queued"
                           f"{' (retrieval only)' if retrieval_only else ''}; when it finishes, its gate decision "
                           f"shows on the run's and the set's page.")
    return HttpResponseRedirect(f"{reverse('evals:runs')}?golden={golden_set.pk}")


@login_required
@require_POST
def golden_set_variants(request, golden_set_id):
    """Generate synthetic variants of the traces coded into one failure class; they wait for review."""
    golden_set = access_golden_set(request.user, golden_set_id)
    class_id = params.integer(request.POST.get("failure_class"), label="The failure class")
    per_trace = params.integer(request.POST.get("per_trace"), label="Variants per trace", default=3, low=1,
                               high=10, clamp=True)
    if class_id.value is None or per_trace.error:
        messages.error(request, per_trace.error or class_id.error or "Pick a failure class.")
        return redirect("evals:golden_set", golden_set.pk)
    failure_class = get_object_or_404(FailureClass, pk=class_id.value)
    try:
        cases = variants_generate(failure_class=failure_class, golden_set=golden_set,
                                  per_trace=per_trace.value, user=request.user)
    except ValueError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"{len(cases)} synthetic variant(s) of “{failure_class.name}” wait for review.")
    return redirect("evals:golden_set", golden_set.pk)


@login_required
@require_POST
def golden_case_review(request, golden_set_id, case_id):
    """Approve or reject one case awaiting review; a second click on a case already reviewed changes nothing."""
    golden_set = access_golden_set(request.user, golden_set_id)
    decision = request.POST.get("decision", "")
    if decision not in ("approve", "reject"):
        messages.error(request, "Approve or reject.")
        return redirect("evals:golden_set", golden_set.pk)
    with transaction.atomic():
        # The row lock makes a double click wait for the first, then find the case reviewed (or gone).
        case = GoldenCase.objects.select_for_update().filter(pk=case_id, golden_set=golden_set).first()
        if case is None or case.reviewed:
            messages.info(request, "That case was already reviewed.")
            return redirect("evals:golden_set", golden_set.pk)
        case_name = case.case_id
        try:
            variant_review(case=case, approve=decision == "approve", user=request.user)
        except ValueError as error:
            messages.error(request, str(error))
            return redirect("evals:golden_set", golden_set.pk)
    messages.success(request, f"{case_name} {'approved' if decision == 'approve' else 'rejected'}.")
    return redirect("evals:golden_set", golden_set.pk)

