"""Golden sets: versions with snapshots, import and export, cases made from traces and edited."""

from __future__ import annotations

import hashlib
from pathlib import Path

from django.db import transaction

from evals.golden import read_golden_rows
from evals.models import GateDecision, GoldenCase, GoldenSet, GoldenSetVersion
from traces.models import Trace

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
    if case.split:
        row["split"] = case.split
    if case.language:
        row["language"] = case.language
    if case.out_of_scope:
        row["out_of_scope"] = True
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
                   reviewed=not row["synthetic"], origin=row["origin"], split=row["split"],
                   language=row["language"], out_of_scope=row["out_of_scope"])
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


def gate_decision_record(*, run, golden_set_name: str | None, gates_file: str, gates_text: str, baseline: str,
                         outcome, newly_failing: list[str]) -> GateDecision:
    """Store one gate decision (`outcome` is evals.gates.GateReport) with a row per gate and why it decided so."""
    golden_set = run.golden_set if run is not None else (
        GoldenSet.objects.filter(name=golden_set_name).first() if golden_set_name else None)
    reasons = [{"metric": result.gate.metric, "value": result.value, "judged_on": result.judged_on,
                "decision": result.decision.value, "detail": result.detail} for result in outcome.results]
    return GateDecision.objects.create(
        run=run, golden_set=golden_set, baseline=baseline[:300], gates_file=gates_file[:300],
        gates_hash=hashlib.sha256(gates_text.encode("utf-8")).hexdigest(), decision=outcome.decision.value,
        reasons=reasons, newly_failing=list(newly_failing))
