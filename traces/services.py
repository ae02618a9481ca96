"""Writes for trace review: sessions, notes, failure classes (each with its audit event)."""

from __future__ import annotations

import datetime as dt
import secrets

from django.db import transaction
from django.db.models import Max

from pathlib import Path

from traces.golden import read_golden_rows
from traces.models import (STAGES, FailureClass, FailureClassEvent, GoldenCase, GoldenSet, GoldenSetVersion, ReviewNote,
                           ReviewSession, SessionTrace, Trace)
from traces.sampling import append_tagged, draw_uniform
from traces.selectors import TraceFilters, parse_trace_filters, traces_filtered


class ReviewError(ValueError):
    """A review write that the rules refuse (shown to the analyst as is)."""


def _window_population(*, window_start: dt.datetime, window_end: dt.datetime, filters: dict) -> list[int]:
    parsed = parse_trace_filters(filters)
    # The session's window overrides any date range in the filters.
    parsed = TraceFilters(**{**parsed.__dict__, "since": window_start, "until": window_end})
    return list(traces_filtered(filters=parsed).order_by().values_list("pk", flat=True))


@transaction.atomic
def review_session_create(*, name: str, window_start: dt.datetime, window_end: dt.datetime, size: int,
                          filters: dict | None = None, seed: int | None = None, created_by=None) -> ReviewSession:
    """Create a session with `size` traces drawn uniformly from the window; the seed is recorded for replay."""
    if size < 1:
        raise ReviewError("A session needs at least one trace.")
    if window_end <= window_start:
        raise ReviewError("The window must end after it starts.")
    filters = {k: v for k, v in (filters or {}).items() if v not in ("", None) and k not in ("since", "until")}
    seed = secrets.randbelow(2**31) if seed is None else seed
    draw = draw_uniform(population_ids=_window_population(window_start=window_start, window_end=window_end,
                                                          filters=filters), size=size, seed=seed)
    session = ReviewSession.objects.create(name=name or f"Sample of {size}", window_start=window_start,
                                           window_end=window_end, filters=filters, seed=seed, requested_size=size,
                                           created_by=created_by)
    SessionTrace.objects.bulk_create(
        SessionTrace(session=session, trace_id=trace_id, source=SessionTrace.Source.UNIFORM, position=i)
        for i, trace_id in enumerate(draw.trace_ids, start=1))
    return session


@transaction.atomic
def review_session_add_verified_wrong(*, session: ReviewSession, limit: int = 100) -> int:
    """Append the window's traces whose reply an agent marked verified wrong, tagged as such; return how many."""
    session = ReviewSession.objects.select_for_update().get(pk=session.pk)
    candidates = (Trace.objects.filter(created_at__gte=session.window_start, created_at__lt=session.window_end,
                                       reply__verified_wrong_at__isnull=False)
                  .order_by("reply__verified_wrong_at", "pk").values_list("pk", flat=True)[:limit])
    existing = list(session.items.values_list("trace_id", flat=True))
    added = append_tagged(existing=existing, candidates=candidates)
    start = (session.items.aggregate(last=Max("position"))["last"] or 0) + 1
    SessionTrace.objects.bulk_create(
        SessionTrace(session=session, trace_id=trace_id, source=SessionTrace.Source.VERIFIED_WRONG, position=i)
        for i, trace_id in enumerate(added, start=start))
    return len(added)


@transaction.atomic
def review_note_save(*, session: ReviewSession, trace: Trace, author, verdict: str, first_failure: str = "",
                     stage: str = "", model_faithful: bool | None = None) -> ReviewNote:
    """Record (or replace) this analyst's note on a trace of the session."""
    if not session.items.filter(trace=trace).exists():
        raise ReviewError("This trace is not in the session.")
    if verdict not in ReviewNote.Verdict.values:
        raise ReviewError("Choose pass, fail or defer.")
    first_failure = " ".join(first_failure.split())
    if verdict == ReviewNote.Verdict.FAIL:
        if not first_failure:
            raise ReviewError("Write one sentence about the first upstream failure.")
        if stage not in STAGES:
            raise ReviewError("Choose the stage where the failure starts.")
    else:
        first_failure, stage = "", ""
    note, _ = ReviewNote.objects.update_or_create(
        session=session, trace=trace, author=author,
        defaults={"verdict": verdict, "first_failure": first_failure, "stage": stage,
                  "model_faithful": model_faithful})
    if model_faithful is not None and trace.final_text:
        # "Was the model faithful to its context?" on an answer is the judge's question: the review
        # doubles as a calibration label (the latest person's answer wins, as on the trace page).
        from traces.labels import human_label_save

        human_label_save(trace=trace, label="pass" if model_faithful else "fail",
                         note=first_failure or "from a review note", author=author)
    return note


@transaction.atomic
def failure_class_create(*, session: ReviewSession, name: str, definition: str, stage: str,
                         actor=None) -> FailureClass:
    """Create a failure class in the session."""
    name, definition = name.strip(), " ".join(definition.split())
    if not name or not definition:
        raise ReviewError("A class needs a name and a one-line definition.")
    if stage not in STAGES:
        raise ReviewError("Choose the stage where this failure starts.")
    failure_class = FailureClass.objects.create(session=session, name=name, definition=definition, stage=stage)
    FailureClassEvent.objects.create(failure_class=failure_class, kind="created", actor=actor,
                                     detail={"name": name, "definition": definition, "stage": stage})
    return failure_class


@transaction.atomic
def review_notes_assign(*, session: ReviewSession, note_ids: list[int], failure_class: FailureClass | None,
                        actor=None) -> int:
    """Put the session's failure notes in a class (or take them out with None); return how many moved."""
    if failure_class is not None:
        if failure_class.session_id != session.pk or failure_class.merged_into_id is not None:
            raise ReviewError("Assign notes to a live class of this session.")
    notes = ReviewNote.objects.filter(session=session, pk__in=note_ids, verdict=ReviewNote.Verdict.FAIL)
    moved = notes.update(failure_class=failure_class)
    if failure_class is not None and moved:
        FailureClassEvent.objects.create(failure_class=failure_class, kind="assigned", actor=actor,
                                         detail={"notes": sorted(note_ids)})
    return moved


@transaction.atomic
def failure_class_rename(*, failure_class: FailureClass, name: str, definition: str = "", actor=None) -> FailureClass:
    """Rename a class (and optionally redefine it), keeping the old wording in its history."""
    name = name.strip()
    definition = " ".join(definition.split()) or failure_class.definition
    if not name:
        raise ReviewError("A class needs a name.")
    FailureClassEvent.objects.create(failure_class=failure_class, kind="renamed", actor=actor,
                                     detail={"from": failure_class.name, "to": name,
                                             "definition_from": failure_class.definition, "definition_to": definition})
    failure_class.name, failure_class.definition = name, definition
    failure_class.save(update_fields=["name", "definition"])
    return failure_class


@transaction.atomic
def failure_class_merge(*, source: FailureClass, target: FailureClass, actor=None) -> FailureClass:
    """Merge source into target: its notes move, it stays as history pointing at the target."""
    if source.pk == target.pk or source.session_id != target.session_id:
        raise ReviewError("Merge two different classes of the same session.")
    if target.merged_into_id is not None or source.merged_into_id is not None:
        raise ReviewError("Merge live classes only.")
    moved = list(source.notes.values_list("pk", flat=True))
    source.notes.update(failure_class=target)
    FailureClass.objects.filter(merged_into=source).update(merged_into=target)
    source.merged_into = target
    source.save(update_fields=["merged_into"])
    FailureClassEvent.objects.create(failure_class=target, kind="merged", actor=actor,
                                     detail={"from": source.pk, "from_name": source.name, "notes": moved})
    FailureClassEvent.objects.create(failure_class=source, kind="merged_into", actor=actor,
                                     detail={"into": target.pk, "into_name": target.name})
    return target


# --- Golden set -------------------------------------------------------------------------------------------------

class GoldenSetError(ValueError):
    """A golden-set write or read that cannot be done (unknown set or version)."""


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


@transaction.atomic
def golden_import(*, name: str, path: Path, user=None) -> GoldenSetVersion:
    """Replace the cases of set `name` (created if new) with a JSONL file's rows: all or nothing, a new version."""
    rows = read_golden_rows(Path(path))  # raises GoldenFileError naming file:line before anything is written
    golden_set, _ = GoldenSet.objects.get_or_create(name=name)
    golden_set.cases.all().delete()
    GoldenCase.objects.bulk_create([
        GoldenCase(golden_set=golden_set, case_id=row["id"], query=row["query"], hits=row["hits"],
                   hard_negatives=row["hard_negatives"], must_pass=row["must_pass"], facts=row["facts"],
                   context=row["context"], customer_id=row["customer_id"],
                   clarification_expected=row["clarification_expected"], synthetic=row["synthetic"],
                   reviewed=not row["synthetic"], origin=row["origin"])
        for row in rows
    ])
    return golden_set_bump(golden_set=golden_set, user=user, note=f"import {Path(path).name}")


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


@transaction.atomic
def golden_case_from_trace(*, trace: Trace, user, golden_set: GoldenSet) -> GoldenCase:
    """Add a case prefilled from a trace (query, customer, kept chunks' docs as hits); not must-pass until edited."""
    case = GoldenCase.objects.create(golden_set=golden_set, case_id=_next_case_id(golden_set, trace),
                                     query=trace.query, customer_id=trace.customer_id or "", hits=kept_docs(trace),
                                     origin=GoldenCase.Origin.TRACE, trace=trace, must_pass=False)
    golden_set_bump(golden_set=golden_set, user=user, note=f"case {case.case_id} from trace {trace.pk}")
    return case


@transaction.atomic
def golden_case_update(*, case: GoldenCase, user, query: str, facts: list[str], hits: list[str],
                       hard_negatives: list[str], must_pass: bool, clarification_expected: bool,
                       synthetic: bool) -> GoldenCase:
    """Save an edited case and bump its set's version."""
    query = query.strip()
    if not query:
        raise GoldenSetError("the query cannot be empty")
    case.query, case.facts, case.hits, case.hard_negatives = query, facts, hits, hard_negatives
    case.must_pass, case.clarification_expected, case.synthetic = must_pass, clarification_expected, synthetic
    case.reviewed = True  # a human has just read and saved it
    case.save()
    golden_set_bump(golden_set=case.golden_set, user=user, note=f"edit {case.case_id}")
    return case
