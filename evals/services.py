"""Golden sets: versions with snapshots, import and export, cases made from traces and edited."""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from django.db import IntegrityError, transaction
from django.utils import timezone

from core import clock, params
from desk.reasons import LABELS as REASON_LABELS
from evals.golden import LANGUAGES, SPLITS, parse_as_of, read_golden_rows
from evals.models import GateDecision, GoldenCase, GoldenSet, GoldenSetVersion
from kb.models import Document
from traces.models import ReviewNote, Trace

# --- Golden set -------------------------------------------------------------------------------------------------

class GoldenSetError(ValueError):
    """A golden-set write or read that cannot be done (unknown set or version, bad name, archived set)."""


class GoldenSetTaken(GoldenSetError):
    """A name another set has; carries that set, so a page can link to it (a double-clicked create lands there)."""

    def __init__(self, message: str, *, golden_set: GoldenSet):
        super().__init__(message)
        self.golden_set = golden_set


NAME_MAX = 100
UNCHANGED = object()  # an argument left out of an update (None is a value: "no date")


def golden_set_require_open(golden_set: GoldenSet, *, to: str) -> None:
    """Refuse a change that an archived set does not take (new cases, runs), saying how to get it back."""
    if golden_set.archived_at is not None:
        raise GoldenSetError(f"Golden set “{golden_set.name}” is archived: unarchive it to {to}.")


def golden_set_name_check(raw: str | None, *, golden_set: GoldenSet | None = None) -> str:
    """Return a usable set name: not empty, at most NAME_MAX characters, no other set's (in any letter case)."""
    parsed = params.name(raw, max_length=NAME_MAX, empty="Give the set a name.")
    if parsed.error:
        raise GoldenSetError(parsed.error)
    name = parsed.value
    others = GoldenSet.objects.filter(name__iexact=name)
    if golden_set is not None:
        others = others.exclude(pk=golden_set.pk)
    taken = others.first()
    if taken is not None:
        archived = " (archived: show archived sets to find it)" if taken.archived_at else ""
        raise GoldenSetTaken(f"There is already a golden set named “{taken.name}”{archived}; choose another name.",
                             golden_set=taken)
    return name


def golden_set_create(*, name: str | None) -> GoldenSet:
    """Create an empty set (version 0 until its first case); refuse an empty or taken name."""
    name = golden_set_name_check(name)
    try:
        with transaction.atomic():
            return GoldenSet.objects.create(name=name)
    except IntegrityError as exc:  # a double submit that raced past the check: the name is taken now
        raise GoldenSetError(f"There is already a golden set named “{name}”; choose another name.") from exc


@transaction.atomic
def golden_set_rename(*, golden_set: GoldenSet, name: str | None) -> GoldenSet:
    """Rename a set (its cases, versions and runs stay); refuse an empty or taken name."""
    golden_set = GoldenSet.objects.select_for_update().get(pk=golden_set.pk)
    name = golden_set_name_check(name, golden_set=golden_set)
    golden_set.name = name
    golden_set.save(update_fields=["name"])
    return golden_set


@transaction.atomic
def golden_set_archive(*, golden_set: GoldenSet, archived: bool, now=None) -> bool:
    """Archive or unarchive a set; return whether it changed (a second click changes nothing)."""
    golden_set = GoldenSet.objects.select_for_update().get(pk=golden_set.pk)
    if golden_set.archived == archived:
        return False
    golden_set.archived_at = (now or clock.now()) if archived else None
    golden_set.save(update_fields=["archived_at"])
    return True


@transaction.atomic
def golden_set_gates_save(*, golden_set: GoldenSet, gates: dict | None, user, now=None) -> GoldenSet:
    """Store the set's own gates (already validated by evals.gate_rules.set_gates_problems), or None to go back to
    the repository's gates file."""
    golden_set = GoldenSet.objects.select_for_update().get(pk=golden_set.pk)
    golden_set.gates = gates
    golden_set.gates_edited_at = (now or clock.now()) if gates is not None else None
    golden_set.gates_edited_by = user if gates is not None and getattr(user, "pk", None) else None
    golden_set.save(update_fields=["gates", "gates_edited_at", "gates_edited_by"])
    return golden_set


def golden_case_row(case: GoldenCase) -> dict:
    """Return a case in the JSONL shape: the file's fields always, the optional ones only when set."""
    row = {"id": case.case_id, "query": case.query, "hits": list(case.hits),
           "hard_negatives": list(case.hard_negatives), "must_pass": case.must_pass}
    if case.facts:
        row["facts"] = list(case.facts)
    if case.context:
        row["context"] = list(case.context)
    if case.customer_id:
        row["customer_id"] = case.customer_id
    if case.clarification_expected:
        row["clarification_expected"] = True
    if case.synthetic:
        row["synthetic"] = True
    if case.origin != GoldenCase.Origin.FILE:
        row["origin"] = case.origin
    if case.split:
        row["split"] = case.split
    if case.language:
        row["language"] = case.language
    if case.out_of_scope:
        row["out_of_scope"] = True
    if case.as_of:
        row["as_of"] = case.as_of.isoformat()
    return row


def golden_set_bump(*, golden_set: GoldenSet, user=None, note: str = "") -> GoldenSetVersion:
    """Bump the set's version and store a snapshot of its cases as exported. Call inside the changing transaction."""
    golden_set = GoldenSet.objects.select_for_update().get(pk=golden_set.pk)
    golden_set.current_version += 1
    golden_set.save(update_fields=["current_version"])
    snapshot = [golden_case_row(case) for case in golden_set.cases.order_by("pk")]
    return GoldenSetVersion.objects.create(golden_set=golden_set, number=golden_set.current_version,
                                           created_by=user if getattr(user, "pk", None) else None,
                                           note=note[:200], snapshot=snapshot)


def golden_import(*, name: str, path: Path, user=None) -> GoldenSetVersion:
    """Replace the cases of set `name` (created if new) with a JSONL file's rows: all or nothing, a new version."""
    rows = read_golden_rows(Path(path))  # raises GoldenFileError naming file:line before anything is written
    return golden_import_rows(name=name, rows=rows, user=user, note=f"import {Path(path).name}")


@transaction.atomic
def golden_import_rows(*, name: str, rows: list[dict], note: str, user=None) -> GoldenSetVersion:
    """Replace the cases of set `name` (created if new) with golden rows as read_golden_rows returns them."""
    golden_set, _ = GoldenSet.objects.get_or_create(name=name)
    golden_set_require_open(golden_set, to="import cases into it")
    golden_set.cases.all().delete()
    GoldenCase.objects.bulk_create([
        GoldenCase(golden_set=golden_set, case_id=row["id"], query=row["query"], hits=row["hits"],
                   hard_negatives=row["hard_negatives"], must_pass=row["must_pass"], facts=row["facts"],
                   context=row["context"], customer_id=row["customer_id"],
                   clarification_expected=row["clarification_expected"], synthetic=row["synthetic"],
                   reviewed=not row["synthetic"], origin=row["origin"], split=row["split"],
                   language=row["language"], out_of_scope=row["out_of_scope"],
                   as_of=parse_as_of(row.get("as_of")))
        for row in rows
    ])
    return golden_set_bump(golden_set=golden_set, user=user, note=note)


def golden_version(*, name: str, version: int | None = None) -> GoldenSetVersion:
    """Return a stored version of set `name` (its current one by default)."""
    golden_set = GoldenSet.objects.filter(name=name).first()
    if golden_set is None:
        raise GoldenSetError(f"no golden set named {name!r}")
    number = golden_set.current_version if version is None else version
    found = golden_set.versions.filter(number=number).first()
    if found is None:
        raise GoldenSetError(f"golden set {name!r} has no version {number}")
    return found


def golden_export(*, name: str, version: int | None = None) -> list[dict]:
    """Return the rows of set `name` at `version` (current by default), in the JSONL shape, in file order."""
    return [dict(row) for row in golden_version(name=name, version=version).snapshot]


def _next_case_id(golden_set: GoldenSet, trace: Trace) -> str:
    base = f"t{trace.pk}"
    taken = set(golden_set.cases.filter(case_id__startswith=base).values_list("case_id", flat=True))
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


def kept_docs(trace: Trace) -> list[str]:
    """Return the documents of the trace's kept chunks, once each, in rank order (a case's default hits)."""
    return list(dict.fromkeys(row["doc"] for row in trace.retrieval or [] if row.get("kept") and row.get("doc")))


def trace_failure(trace: Trace) -> str:
    """Return why the trace counts as a failure ('' when it answered and nobody marked it wrong)."""
    if trace.outcome == Trace.Outcome.ESCALATED:
        reason = REASON_LABELS.get(trace.escalation_reason, trace.escalation_reason) if trace.escalation_reason else ""
        return f"the turn escalated{f' ({reason})' if reason else ''}"
    if trace.verdict == "ungrounded" or trace.fallback:
        return "the verifier refused the writer's drafts"
    if trace.reply_id and trace.reply.verified_wrong_at:
        return "an agent marked the reply wrong"
    if ReviewNote.objects.filter(trace=trace, verdict=ReviewNote.Verdict.FAIL).exists():
        return "an analyst coded it as a failure"
    return ""


def cited_docs(trace: Trace) -> list[str]:
    """Return the documents of the chunks the reply cited, once each, in the order of its citations.

    What the answer rested on, not everything the search brought back: a chunk retrieved and not cited is no
    evidence that its document answers the question.
    """
    by_id = {row.get("id"): row for row in trace.evidence or [] if isinstance(row, dict)}
    docs = [by_id[cited].get("doc") for cited in trace.citations or [] if cited in by_id
            and by_id[cited].get("kind") == "chunk" and by_id[cited].get("doc")]
    return list(dict.fromkeys(docs))


def _case_of_trace(*, trace: Trace, golden_set: GoldenSet, awaiting_review: bool = False) -> GoldenCase:
    """Create a case from a trace (query, customer, language, the day it ran); not must-pass until edited. The
    caller bumps the version.

    An answered trace nobody faulted starts with hits: the documents of its kept chunks, or, for a case awaiting
    review (the bulk add), only those the reply cited. An escalated or failing one starts with none: what it
    retrieved is what failed, so the analyst picks the hits (the edit page offers the retrieved documents as
    suggestions, the ones the turn used as hard-negative candidates). `as_of` is the trace's day, so a run
    answers it with the figures of the day the customer asked.
    """
    if trace_failure(trace):
        hits = []
    else:
        hits = cited_docs(trace) if awaiting_review else kept_docs(trace)
    return GoldenCase.objects.create(golden_set=golden_set, case_id=_next_case_id(golden_set, trace),
                                     query=trace.query, customer_id=trace.customer_id or "", hits=hits,
                                     language=trace.language if trace.language in ("es", "en") else "",
                                     as_of=timezone.localdate(trace.created_at) if trace.created_at else None,
                                     origin=GoldenCase.Origin.TRACE, trace=trace, must_pass=False,
                                     reviewed=not awaiting_review)


def golden_case_from_trace(*, trace: Trace, user, golden_set: GoldenSet) -> GoldenCase:
    """Add a case from a trace to an open set and bump its version (see _case_of_trace for the starting hits).

    A set holds one case per trace, as the bulk add keeps it (this is the bulk add of one trace): when the set
    already has this trace's case (a double-clicked button, a second tab), that case is returned with
    `already_in_set = True` and nothing changes. The set's row lock makes the second click wait for the first.
    """
    result = golden_cases_from_traces(traces=[trace], user=user, golden_set=golden_set,
                                      describe=lambda cases: f"case {cases[0].case_id} from trace {trace.pk}")
    case = result.added[0] if result.added else result.held[trace.pk]
    case.already_in_set = not result.added
    return case


@dataclass(frozen=True)
class BulkAddResult:
    """What adding several traces to a set did: the cases made, and the traces the set already held."""

    golden_set: GoldenSet
    added: list[GoldenCase]
    already_in_set: list[int]  # trace ids
    held: dict[int, GoldenCase] = field(default_factory=dict)  # the set's case of each trace it already held

    @property
    def summary(self) -> str:
        added = f"{len(self.added)} added to {self.golden_set.name}"
        if self.added:
            added += f" (version {self.golden_set.current_version})"
        return f"{added}, {len(self.already_in_set)} already in the set." if self.already_in_set else f"{added}."


@transaction.atomic
def golden_cases_from_traces(*, traces: list[Trace], user, golden_set: GoldenSet,
                             describe=None, awaiting_review: bool = False) -> BulkAddResult:
    """Add one case per trace that the set does not hold yet; bump the version once (its note: `describe(added)`,
    or how many cases from which traces). With `awaiting_review` the cases wait for a person's review and count
    in no run until then.

    Holds the set's row lock while it checks and writes: a second submit of the same form waits for the
    first, then finds every trace already in the set and adds nothing.
    """
    golden_set = GoldenSet.objects.select_for_update().get(pk=golden_set.pk)
    golden_set_require_open(golden_set, to="add cases to it")
    held = {}
    for case in golden_set.cases.filter(trace__in=[t.pk for t in traces]).order_by("-pk"):
        held[case.trace_id] = case  # the first case made of a trace wins
    added, already = [], []
    for trace in dict((t.pk, t) for t in traces).values():
        if trace.pk in held:
            already.append(trace.pk)
            continue
        added.append(_case_of_trace(trace=trace, golden_set=golden_set, awaiting_review=awaiting_review))
    if added:
        ids = ", ".join(case.case_id for case in added)
        note = describe(added) if describe else f"{len(added)} case(s) from traces: {ids}"
        golden_set_bump(golden_set=golden_set, user=user, note=note)
        golden_set.refresh_from_db(fields=["current_version"])
    return BulkAddResult(golden_set=golden_set, added=added, already_in_set=already, held=held)


@transaction.atomic
def golden_case_update(*, case: GoldenCase, user, query: str, facts: list[str], hits: list[str],
                       hard_negatives: list[str], must_pass: bool, clarification_expected: bool,
                       synthetic: bool, out_of_scope: bool | None = None, split: str | None = None,
                       language: str | None = None, as_of=UNCHANGED) -> GoldenCase:
    """Save an edited case and bump its set's version (a case awaiting review is accepted by saving it).

    `out_of_scope`, `split`, `language` and `as_of` stay as they are when not given.
    """
    query = query.strip()
    if not query:
        raise GoldenSetError("the query cannot be empty")
    if out_of_scope and hits:
        raise GoldenSetError("An out-of-scope case lists no hits: no document answers it. Empty the hits or "
                             "untick out of scope.")
    if split not in (None, "", *SPLITS):
        raise GoldenSetError("The split is dev, test, or empty (hashed from the case id).")
    if language not in (None, "", *LANGUAGES):
        raise GoldenSetError("The language is es, en, or empty.")
    case.query, case.facts, case.hits, case.hard_negatives = query, facts, hits, hard_negatives
    case.must_pass, case.clarification_expected, case.synthetic = must_pass, clarification_expected, synthetic
    if out_of_scope is not None:
        case.out_of_scope = out_of_scope
    if split is not None:
        case.split = split
    if language is not None:
        case.language = language
    if as_of is not UNCHANGED:
        case.as_of = as_of
    case.reviewed = True  # a human has just read and saved it
    case.save()
    golden_set_bump(golden_set=case.golden_set, user=user, note=f"edit {case.case_id}")
    return case


def live_document_slugs() -> set[str]:
    """Return the slugs of the knowledge base's documents that are not deleted."""
    return set(Document.objects.filter(deleted_at__isnull=True).values_list("slug", flat=True))


def golden_case_documents_check(*, hits: list[str], hard_negatives: list[str]) -> None:
    """Refuse hits or hard negatives that name no live document of the knowledge base, saying which and why."""
    live = live_document_slugs()
    named = list(dict.fromkeys([*hits, *hard_negatives]))
    unknown = [slug for slug in named if slug not in live]
    if not unknown:
        return
    deleted = set(Document.objects.filter(slug__in=unknown, deleted_at__isnull=False).values_list("slug", flat=True))
    problems = []
    for slug in unknown:
        if slug in deleted:
            problems.append(f"“{slug}” was deleted from the knowledge base")
            continue
        close = difflib.get_close_matches(slug, sorted(live), n=2, cutoff=0.75)
        hint = f" (did you mean {' or '.join(f'“{c}”' for c in close)}?)" if close else ""
        problems.append(f"“{slug}” is not a document in the knowledge base{hint}")
    raise GoldenSetError("Hits and hard negatives must name live documents: " + "; ".join(problems) + ".")


@dataclass(frozen=True)
class DocumentSuggestion:
    """A document the case's trace retrieved, offered on the case's edit page."""

    slug: str
    rank: int | None
    vector_score: float | None
    kept: bool
    live: bool
    hard_negative_candidate: bool  # the turn failed with this document in its context


def case_suggestions(case: GoldenCase, live: set[str]) -> list[DocumentSuggestion]:
    """Return the documents the case's trace retrieved, best rank first, once each."""
    trace = case.trace
    if trace is None:
        return []
    failed = bool(trace_failure(trace))
    best: dict[str, dict] = {}
    for row in trace.retrieval or []:
        if not isinstance(row, dict) or not row.get("doc"):
            continue
        seen = best.setdefault(row["doc"], {"rank": row.get("rank"), "score": row.get("vector_score"), "kept": False})
        seen["kept"] = seen["kept"] or bool(row.get("kept"))
    return [DocumentSuggestion(slug=slug, rank=row["rank"], vector_score=row["score"], kept=row["kept"],
                               live=slug in live, hard_negative_candidate=failed and row["kept"])
            for slug, row in best.items()]


def deleted_document_slugs() -> set[str]:
    """Return the slugs of the knowledge base's soft-deleted documents."""
    return set(Document.objects.filter(deleted_at__isnull=False).values_list("slug", flat=True))


def missing_documents(case: GoldenCase, deleted: set[str]) -> list[str]:
    """Return the case's hits and hard negatives whose document was deleted from the knowledge base since.

    Only deleted documents: a set imported before its knowledge base names documents not there yet, and
    flagging every case of it would hide the ones that really lost their document.
    """
    return [slug for slug in dict.fromkeys([*case.hits, *case.hard_negatives]) if slug in deleted]


def gate_decision_record(*, run, gates_file: str, gates_text: str, baseline: str, outcome,
                         newly_failing: list[str]) -> GateDecision:
    """Store one gate decision on a run (`outcome` is evals.gate_rules.GateReport) with a row per gate and why it
    decided so. A saved report (`gate --report`) has no run and is only logged."""
    golden_set = run.golden_set
    reasons = [{"metric": result.gate.metric, "value": result.value, "judged_on": result.judged_on,
                "decision": result.decision.value, "detail": result.detail} for result in outcome.results]
    return GateDecision.objects.create(
        run=run, golden_set=golden_set, baseline=baseline[:300], gates_file=gates_file[:300],
        gates_hash=hashlib.sha256(gates_text.encode("utf-8")).hexdigest(), decision=outcome.decision.value,
        reasons=reasons, newly_failing=list(newly_failing))
