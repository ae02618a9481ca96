"""Golden cases: one made from a trace, edited, or many added from the trace browser at once."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from core import params
from evals import services
from evals.access import access_golden_case
from evals.models import GoldenSet
from traces.access import require_trace_reviewer
from traces.models import Trace


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
SPLIT_CHOICES = [("", "hashed from the case id"), ("dev", "dev (choose on it)"), ("test", "test (report once)")]
LANGUAGE_CHOICES = [("", "not set"), ("es", "Spanish"), ("en", "English")]
CASE_LIST_MAX = 20_000  # facts, hits or hard negatives, as typed in one field


def _case_field(request, name: str, label: str, max_length: int) -> str:
    parsed = params.text(request.POST.get(name), label=label, max_length=max_length)
    if parsed.error:
        raise services.GoldenSetError(parsed.error)
    return parsed.value


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def commas(text: str) -> list[str]:
    """Return the non-empty, stripped parts of a comma-separated field."""
    return [part.strip() for part in text.split(",") if part.strip()]


@login_required
def golden_case_edit(request, case_id):
    """Edit a golden case: query, facts (one per line), hits and hard negatives (comma-separated), three flags."""
    case = access_golden_case(request.user, case_id)
    error = ""
    if request.method == "POST":
        try:
            query = _case_field(request, "query", "The query", CASE_QUERY_MAX)
            facts = _lines(_case_field(request, "facts", "The facts field", CASE_LIST_MAX))
            hits = commas(_case_field(request, "hits", "The hits field", CASE_LIST_MAX))
            negatives = commas(_case_field(request, "hard_negatives", "The hard negatives field", CASE_LIST_MAX))
            split = params.choice(request.POST.get("split"), ["dev", "test"], label="The split")
            language = params.choice(request.POST.get("language"), ["es", "en"], label="The language")
            as_of = params.day(request.POST.get("as_of"), label="As of")
            problem = next((p.error for p in (split, language, as_of) if p.error), "")
            if problem:
                raise services.GoldenSetError(problem)
            services.golden_case_documents_check(hits=hits, hard_negatives=negatives)
            services.golden_case_update(
                case=case, user=request.user, query=query, facts=facts, hits=hits, hard_negatives=negatives,
                must_pass="must_pass" in request.POST,
                clarification_expected="clarification_expected" in request.POST,
                synthetic="synthetic" in request.POST, out_of_scope="out_of_scope" in request.POST,
                # A field the form did not send stays as it is (the page always sends all three).
                split=split.value if "split" in request.POST else None,
                language=language.value if "language" in request.POST else None,
                as_of=as_of.value if "as_of" in request.POST else services.UNCHANGED)
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
        "flags": {name: (name in posted) if posted else getattr(case, name)
                  for name in ("must_pass", "clarification_expected", "synthetic", "out_of_scope")},
        "split": posted.get("split", "") if posted else case.split,
        "language": posted.get("language", "") if posted else case.language,
        "as_of": posted.get("as_of", "") if posted else (case.as_of.isoformat() if case.as_of else ""),
        "split_choices": SPLIT_CHOICES, "language_choices": LANGUAGE_CHOICES,
        "suggestions": services.case_suggestions(case, live), "live_documents": sorted(live),
        "missing_documents": services.missing_documents(case, services.deleted_document_slugs()),
        "trace_failure": services.trace_failure(case.trace) if case.trace_id else "",
    }, status=400 if error else 200)


BULK_MAX = 200  # traces per bulk add; the trace browser shows 50 a page


def bulk_back(request) -> str:
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
    back = bulk_back(request)
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
                result = services.golden_cases_from_traces(traces=traces, user=request.user, golden_set=golden_set,
                                                           awaiting_review=True)
            except services.GoldenSetError as exc:
                error = str(exc)
            else:
                waiting = (f" The new case{'s wait' if len(result.added) > 1 else ' waits'} for review on the set's "
                           "page (approve, or open and save) before any run counts it.") if result.added else ""
                messages.success(request, result.summary + waiting)
                return HttpResponseRedirect(back)
    elif "golden_set" in request.POST:
        error = error or "Choose a golden set."
    return render(request, "evals/golden_bulk_add.html", {
        "traces": traces, "golden_sets": open_sets, "error": error, "back": back,
        "chosen": golden_set.pk if golden_set is not None else None,
    }, status=400 if error else 200)
