"""The analyst's eval pages: golden sets, runs with plots, run comparison, human labels and judge calibration.

Analysts and supervisors (`traces.review_traces`) only; agents and KB editors get 403. Views stay thin: they
check the permission, call one function of evals/runner.py, labels.py or variants.py, and render.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import Count, Q
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from core import params
from evals import services
from evals.gates import (
    GatesFileError,
    ThresholdRow,
    gates_from_mapping,
    set_gates_mapping,
    set_gates_problems,
    threshold_rows,
)
from evals.judge import get_judge
from evals.labels import (
    calibration_report,
    human_label_save,
    item_key_for,
    judge_labelled,
    run_corrected_rate,
    split_for,
)
from evals.models import EvalRun, EvalRunItem, GoldenCase, GoldenSet, HumanLabel, JudgeVerdict
from evals.run_plots import PlotValue, line_plot
from evals.runner import run_compare as compare_runs
from evals.set_gates import REPOSITORY_GATES, own_gates_source, set_gates_defaults
from evals.tasks import eval_run_enqueue
from evals.variants import variant_review, variants_generate
from traces.access import may_review_traces, require_trace_reviewer
from traces.models import FailureClass, Trace

PLOTTED_RUNS = 50
LISTED_RUNS = 200
SPLITS = ("dev", "test")
CALIBRATION_SEED = 2026


def access_golden_set(user, golden_set_id: int) -> GoldenSet:
    """Return the golden set if this user may evaluate with it."""
    require_trace_reviewer(user)
    return get_object_or_404(GoldenSet, pk=golden_set_id)


def access_run(user, run_id: int) -> EvalRun:
    """Return the run if this user may read runs."""
    require_trace_reviewer(user)
    return get_object_or_404(EvalRun.objects.select_related("golden_set", "created_by"), pk=run_id)


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _count(value) -> int | None:
    if isinstance(value, (list, tuple)):
        return len(value)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass
class CorrectedRate:
    """A run's corrected pass rate as the pages show it: a value with its interval, or why it is undefined."""

    value: float | None = None
    lower: float | None = None
    upper: float | None = None
    observed: float | None = None
    seed: int | None = None
    judge_version: str = ""
    clipped: bool = False
    undefined: str = ""  # the reason when there is no number
    raw: dict | None = None

    @classmethod
    def from_metrics(cls, metrics: dict) -> CorrectedRate | None:
        corrected = metrics.get("corrected_pass_rate")
        if not isinstance(corrected, dict):
            return None
        observed = _number(corrected.get("observed"))
        if corrected.get("error") or _number(corrected.get("value")) is None:
            return cls(undefined=str(corrected.get("error") or "no value"), observed=observed, raw=corrected,
                       judge_version=str(corrected.get("judge_version") or ""))
        return cls(value=_number(corrected.get("value")), lower=_number(corrected.get("lower")),
                   upper=_number(corrected.get("upper")), observed=observed, seed=corrected.get("seed"),
                   judge_version=str(corrected.get("judge_version") or ""), clipped=bool(corrected.get("clipped")),
                   raw=corrected)


@dataclass
class RunSummary:
    """The numbers of one run that the tables and plots show (metrics may be missing on running/failed runs)."""

    run: EvalRun
    recall: float | None
    mrr: float | None
    corrected: CorrectedRate | None
    must_pass_failures: int | None
    hard_negative_wins: int | None
    judge: dict

    @classmethod
    def of(cls, run: EvalRun) -> RunSummary:
        metrics = run.metrics or {}
        return cls(run=run, recall=_number(metrics.get(f"recall@{run.k}")), mrr=_number(metrics.get("mrr")),
                   corrected=CorrectedRate.from_metrics(metrics),
                   must_pass_failures=_count(metrics.get("must_pass_failures")),
                   hard_negative_wins=_count(metrics.get("hard_negative_wins")),
                   judge=metrics.get("judge") if isinstance(metrics.get("judge"), dict) else {})

    @property
    def recall_name(self) -> str:
        return f"recall@{self.run.k}"


# --- golden sets -------------------------------------------------------------------------------------------------


def _golden_sets_context(*, show_archived: bool) -> dict:
    sets = GoldenSet.objects.annotate(
        case_count=Count("cases", distinct=True),
        must_pass_count=Count("cases", filter=Q(cases__must_pass=True), distinct=True),
        synthetic_count=Count("cases", filter=Q(cases__synthetic=True), distinct=True),
        awaiting_review=Count("cases", filter=Q(cases__synthetic=True, cases__reviewed=False), distinct=True),
    )
    archived_count = GoldenSet.objects.filter(archived_at__isnull=False).count()
    sets = list(sets if show_archived else sets.filter(archived_at__isnull=True))
    last_runs = {run.golden_set_id: RunSummary.of(run) for run in
                 EvalRun.objects.filter(status=EvalRun.Status.DONE)
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
        "awaiting_review": [c for c in cases if c.synthetic and not c.reviewed],
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


GATE_NUMBER_LIMIT = 1e9  # parsing only; evals.gates.set_gates_problems says which range each metric takes


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
    must_pass = _commas(must_pass_field.value)
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
    """Approve or reject one synthetic case; a second click on a case already reviewed changes nothing."""
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


# --- runs --------------------------------------------------------------------------------------------------------


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
        recent = EvalRun.objects.filter(golden_set=chosen, status=EvalRun.Status.DONE)[:PLOTTED_RUNS]
        plotted = [RunSummary.of(run) for run in reversed(recent)]
    of_chosen = [s.run for s in listed if chosen is not None and s.run.golden_set_id == chosen.pk]
    return render(request, "traces/runs.html", {
        "runs": listed, "golden_sets": sets, "chosen": chosen, "plots": _plots(plotted) if plotted else [],
        "plotted_count": len(plotted),
        "default_head": of_chosen[0].pk if of_chosen else None,
        "default_base": of_chosen[1].pk if len(of_chosen) > 1 else None,
        "problems": [golden.error] if golden.error else [],
    })


def _label_context(item: EvalRunItem) -> None:
    labels = list(item.human_labels.all())
    item.human_label = labels[0] if labels else None
    item.split = item.human_label.split if item.human_label else split_for(item_key_for(run_item=item))


@login_required
def run_detail(request, run_id):
    """Show a run's per-case items, failing cases first; each expands to its answer and a human-label form."""
    run = access_run(request.user, run_id)
    items = list(run.items.prefetch_related("human_labels"))
    items.sort(key=lambda item: (item.passed, item.case_id))
    for item in items:
        _label_context(item)
    return render(request, "traces/run_detail.html", {
        "run": run, "summary": RunSummary.of(run), "items": items,
        "failing": sum(1 for item in items if not item.passed), "gate": run.gate_decisions.first(),
    })


@login_required
@require_POST
def run_item_label(request, item_id):
    """Save a person's pass/fail (with a note) on a run item's answer, for judge calibration."""
    require_trace_reviewer(request.user)
    item = get_object_or_404(EvalRunItem.objects.select_related("run"), pk=item_id)
    error = _save_label(request, run_item=item)
    if request.htmx:
        item = EvalRunItem.objects.prefetch_related("human_labels").get(pk=item.pk)
        _label_context(item)
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
    """The trace page's evals panels (loaded by htmx): make a golden case, and the human label."""
    require_trace_reviewer(request.user)
    trace = get_object_or_404(Trace, pk=trace_id)
    return render(request, "evals/_trace_panels.html", {
        "trace": trace, "golden_sets": list(GoldenSet.objects.filter(archived_at__isnull=True)),
        "golden_cases": list(trace.golden_cases.select_related("golden_set")),
        **trace_label_context(request.user, trace)})


def trace_label_context(user, trace: Trace) -> dict:
    """Return the human-label form's context for the trace page (empty for users who may not label)."""
    if not may_review_traces(user):
        return {}
    label = trace.human_labels.select_related("author").first()
    return {"human_label": label, "label_split": label.split if label else split_for(item_key_for(trace=trace))}


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
        b, h = _number(base_value), _number(head_value)
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


# --- calibration -------------------------------------------------------------------------------------------------


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
    report = calibration_report(judge_version=judge_version, split=split) if judge_version else None
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
        "labelled": sum(label_counts.values()),
    })


@login_required
@require_POST
def golden_case_create(request, trace_id):
    """Make a golden case from this trace in the chosen set, then open it for editing."""
    require_trace_reviewer(request.user)
    trace = get_object_or_404(Trace, pk=trace_id)
    golden_set_id = params.integer(request.POST.get("golden_set"), label="The golden set").or_bad_request()
    golden_set = get_object_or_404(GoldenSet, pk=golden_set_id or 0)
    try:
        case = services.golden_case_from_trace(trace=trace, user=request.user, golden_set=golden_set)
    except services.GoldenSetError as error:
        messages.error(request, str(error))
        return redirect("traces:detail", trace.pk)
    golden_set.refresh_from_db()
    if not case.already_in_set:
        messages.success(request, f"Case {case.case_id} added to {golden_set.name} "
                                  f"(version {golden_set.current_version}).")
    else:
        messages.info(request, f"{golden_set.name} already holds this trace as case {case.case_id}: here it is.")
    return redirect("evals:golden_case", case_id=case.pk)


CASE_QUERY_MAX = 2_000
CASE_LIST_MAX = 20_000  # facts, hits or hard negatives, as typed in one field


def _case_field(request, name: str, label: str, max_length: int) -> str:
    parsed = params.text(request.POST.get(name), label=label, max_length=max_length)
    if parsed.error:
        raise services.GoldenSetError(parsed.error)
    return parsed.value


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _commas(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


@login_required
def golden_case_edit(request, case_id):
    """Edit a golden case: query, facts (one per line), hits and hard negatives (comma-separated), three flags."""
    require_trace_reviewer(request.user)
    case = get_object_or_404(GoldenCase.objects.select_related("golden_set", "trace"), pk=case_id)
    error = ""
    if request.method == "POST":
        try:
            query = _case_field(request, "query", "The query", CASE_QUERY_MAX)
            facts = _lines(_case_field(request, "facts", "The facts field", CASE_LIST_MAX))
            hits = _commas(_case_field(request, "hits", "The hits field", CASE_LIST_MAX))
            negatives = _commas(_case_field(request, "hard_negatives", "The hard negatives field", CASE_LIST_MAX))
            services.golden_case_documents_check(hits=hits, hard_negatives=negatives)
            services.golden_case_update(
                case=case, user=request.user, query=query, facts=facts, hits=hits, hard_negatives=negatives,
                must_pass="must_pass" in request.POST,
                clarification_expected="clarification_expected" in request.POST,
                synthetic="synthetic" in request.POST)
        except services.GoldenSetError as exc:
            error = str(exc)
        else:
            case.golden_set.refresh_from_db()
            messages.success(request,
                             f"Saved; {case.golden_set.name} is now version {case.golden_set.current_version}.")
            return redirect("evals:golden_case", case_id=case.pk)
    live = services.live_document_slugs()
    posted = request.POST if error else None  # a refused form comes back as typed, not as stored
    return render(request, "traces/golden_case.html", {
        "case": case, "error": error,
        "query": posted.get("query", "") if posted else case.query,
        "facts": posted.get("facts", "") if posted else "\n".join(case.facts),
        "hits": posted.get("hits", "") if posted else ", ".join(case.hits),
        "hard_negatives": posted.get("hard_negatives", "") if posted else ", ".join(case.hard_negatives),
        "suggestions": services.case_suggestions(case, live), "live_documents": sorted(live),
        "missing_documents": services.missing_documents(case, services.deleted_document_slugs()),
        "trace_failure": services.trace_failure(case.trace) if case.trace_id else "",
    }, status=400 if error else 200)


BULK_MAX = 200  # traces per bulk add; the trace browser shows 50 a page


def _bulk_back(request) -> str:
    """Return where to go after a bulk add: the trace browser page it came from, if it is one of ours."""
    back = request.POST.get("next", "")
    if back and url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()},
                                                require_https=request.is_secure()):
        return back
    return reverse("traces:list")


@login_required
@require_POST
def golden_bulk_add(request):
    """Add the traces ticked in the trace browser to a golden set, one case each (as from a trace page).

    Without a chosen set it shows the traces and asks which set; with one it adds the traces the set does not
    hold yet and says how many were added and how many were already in it.
    """
    require_trace_reviewer(request.user)
    back = _bulk_back(request)
    raw_ids = request.POST.getlist("trace")
    ids, bad = [], []
    for raw in raw_ids[:BULK_MAX + 1]:
        parsed = params.integer(raw, label="A trace id", low=1)
        (ids.append(parsed.value) if parsed.value is not None else bad.append(parsed.error or "A trace id is empty."))
    if len(raw_ids) > BULK_MAX:
        bad.append(f"Add at most {BULK_MAX} traces at a time.")
    # The reply comes along: making a case asks whether an agent marked it wrong (one query per trace without).
    traces = list(Trace.objects.filter(pk__in=ids).select_related("reply")
                  .prefetch_related("golden_cases__golden_set").order_by("-created_at", "-pk")) if not bad else []
    missing = sorted(set(ids) - {trace.pk for trace in traces})
    if missing and not bad:
        bad.append(f"No trace {', '.join(map(str, missing))}.")
    if bad or not traces:
        messages.error(request, " ".join(bad) or "Tick at least one trace to add.")
        return HttpResponseRedirect(back)
    open_sets = list(GoldenSet.objects.filter(archived_at__isnull=True))
    chosen = params.integer(request.POST.get("golden_set"), label="The golden set", low=1)
    error = chosen.error
    golden_set = None
    if chosen.value is not None:
        golden_set = GoldenSet.objects.filter(pk=chosen.value).first()
        if golden_set is None:
            error = "That golden set does not exist (any more); choose another."
        else:
            try:
                result = services.golden_cases_from_traces(traces=traces, user=request.user, golden_set=golden_set)
            except services.GoldenSetError as exc:
                error = str(exc)
            else:
                messages.success(request, result.summary)
                return HttpResponseRedirect(back)
    elif "golden_set" in request.POST:
        error = error or "Choose a golden set."
    return render(request, "evals/golden_bulk_add.html", {
        "traces": traces, "golden_sets": open_sets, "error": error, "back": back,
        "chosen": golden_set.pk if golden_set is not None else None,
    }, status=400 if error else 200)
