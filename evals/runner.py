"""Eval runs: a golden-set version through retrieval (and the real answer path), judged, scored and compared.

`eval_run` records one EvalRun with an EvalRunItem per case and the versions that make two runs
comparable; `run_compare` says which cases newly fail or pass between two runs. Nothing here
writes a desk row or sends a message: the answer path runs through `bot.turn.answer_query`.
"""

from __future__ import annotations

import contextlib
import time

from django.db import transaction
from django.db.models import Sum

from bot.outcomes import Answered, Clarify, Declined, Escalated, Silenced
from bot.turn import answer_query
from bot.writer import get_writer
from core import clock
from evals import answer_checks
from evals.answer_checks import CaseResult, RunComparison
from evals.golden import metrics_case, parse_as_of
from evals.human_labels import evidence_items, judge_verdict_record, run_corrected_rate, verified_figures
from evals.judge import get_judge
from evals.judgement import JudgeError
from evals.metrics import case_outcome, mean_reciprocal_rank, recall_at_k
from evals.models import EvalRun, EvalRunItem, GoldenSet, JudgeVerdict
from evals.services import golden_set_require_open, golden_version
from kb.embeddings import embedder_fingerprint, get_embedder
from kb.models import EmbeddingSpace
from kb.search import search

# The retrieval fields an item keeps per hit (the chunk text stays in the knowledge base).
RETRIEVAL_KEYS = ("chunk_id", "doc", "section", "vector_score", "text_rank", "rrf", "kept")


class EvalRunError(RuntimeError):
    """A run that crashed; it is saved with status failed and the error, never reported as done."""

    def __init__(self, message: str, *, run: EvalRun):
        super().__init__(message)
        self.run = run


def eval_run(*, golden_set: GoldenSet, retrieval_only: bool = False, k: int = 5, use_judge: bool = True,
             writer=None, billing=None, judge=None, user=None, timer=time.perf_counter) -> EvalRun:
    """Run the current version of a golden set and return the finished run (EvalRunError when it crashed).

    Unreviewed synthetic cases are left out. Unless `retrieval_only`, every case also goes through
    the answer path (writer, verifier, humanizer); with `use_judge` and a judge available, every
    answered case is judged for faithfulness.
    """
    golden_set_require_open(golden_set, to="run it")
    version = golden_version(name=golden_set.name)
    space = EmbeddingSpace.objects.first()
    if not retrieval_only:
        writer = writer or get_writer()
        if use_judge and judge is None:
            judge = get_judge()
    writer = None if retrieval_only else writer
    judge = judge if (use_judge and not retrieval_only) else None
    run = EvalRun.objects.create(
        golden_set=golden_set, golden_version=version.number, retrieval_only=retrieval_only, k=k,
        prompt_version=writer.prompt_version if writer else "", model=writer.name if writer else "",
        index_version=space.index_version if space else None, embedding_model=space.model_name if space else "",
        judge_version=getattr(judge, "version", "") if judge else "",
        judge_model=getattr(judge, "model", "") if judge else "",
        created_by=user if getattr(user, "pk", None) else None,
    )
    try:
        with transaction.atomic():
            _run_cases(run, _counted_rows(golden_set, version.snapshot), writer=writer, billing=billing,
                       judge=judge, timer=timer)
    except Exception as exc:
        run.status, run.error = EvalRun.Status.FAILED, f"{type(exc).__name__}: {exc}"[:2000]
        run.finished_at = clock.now()
        run.save(update_fields=["status", "error", "finished_at"])
        raise EvalRunError(f"run {run.pk} failed: {run.error}", run=run) from exc
    return run


def _counted_rows(golden_set: GoldenSet, snapshot: list[dict]) -> tuple[list[dict], int]:
    """Return the snapshot rows that count (cases awaiting review — synthetic variants, cases bulk-added from
    traces — never do) and how many were left out."""
    unreviewed = set(golden_set.cases.filter(reviewed=False).values_list("case_id", flat=True))
    counted = []
    for row in snapshot:
        reviewed = row["reviewed"] if "reviewed" in row else row["id"] not in unreviewed
        if not reviewed:
            continue
        counted.append(row)
    return counted, len(snapshot) - len(counted)


def _run_cases(run: EvalRun, counted, *, writer, billing, judge, timer) -> None:
    rows, left_out = counted
    outcomes, items = [], []
    for row in rows:
        with _case_clock(row):
            item, outcome, scored = _run_case(run, row, writer=writer, billing=billing, judge=judge, timer=timer)
        if scored:
            outcomes.append(outcome)
        items.append(item)

    metrics = {
        "cases": len(items),
        "k": run.k,
        f"recall@{run.k}": round(recall_at_k(outcomes, run.k), 4),
        "mrr": round(mean_reciprocal_rank(outcomes), 4),
        "must_pass_failures": sorted(i.case_id for i in items if i.must_pass and i.failures),
        "hard_negative_wins": sorted(i.case_id for i in items if i.hard_negative_above),
        "failing": sorted(i.case_id for i in items if i.failures),
        "unreviewed_left_out": left_out,
    }
    if not run.retrieval_only:
        checked = [i for i in items if i.grounded is not None]
        metrics["answered"] = round(sum(i.outcome == "answered" for i in items) / len(items), 4) if items else None
        metrics["clarified"] = round(sum(i.outcome == "clarify" for i in items) / len(items), 4) if items else None
        metrics["grounded"] = round(sum(bool(i.grounded) for i in checked) / len(checked), 4) if checked else None
    if not run.retrieval_only:
        metrics["cost"] = run_cost(run, items)
    if judge is not None:
        labels = [i.judge_label for i in items if i.judge_label]
        passes, fails = labels.count("pass"), labels.count("fail")
        metrics["judge"] = {"version": run.judge_version, "model": run.judge_model, "passes": passes,
                            "fails": fails, "errors": labels.count("error"),
                            "observed": round(passes / (passes + fails), 4) if passes + fails else None}
        run.metrics = metrics  # what the calibration may read
        metrics["corrected_pass_rate"] = _corrected_rate(run)
    run.metrics = metrics
    run.status, run.finished_at = EvalRun.Status.DONE, clock.now()
    run.save(update_fields=["metrics", "status", "finished_at"])


def run_cost(run: EvalRun, items: list[EvalRunItem]) -> dict:
    """Return what the run's model calls cost (USD at MODEL_PRICES): the writer's (and router's) per case, the
    judge's verdicts, and the cost per answered case — a configuration's price beside its quality."""
    writer = round(sum(getattr(item, "model_cost", 0.0) or 0.0 for item in items), 8)
    judge = JudgeVerdict.objects.filter(run_item__run=run).aggregate(total=Sum("cost"))["total"] or 0.0
    answered = sum(1 for item in items if item.outcome == "answered")
    return {"writer": writer, "judge": round(judge, 8), "total": round(writer + judge, 8), "answered": answered,
            "per_answered": round(writer / answered, 8) if answered else None}


def _case_clock(row: dict):
    """Return the clock a case runs under: pinned to its `as_of` date when it has one, else the product's."""
    as_of = parse_as_of(row.get("as_of"))
    return clock.pinned(as_of) if as_of is not None else contextlib.nullcontext()


def _run_case(run: EvalRun, row: dict, *, writer, billing, judge, timer):
    """Run one case: search, answer (unless retrieval-only), judge, and why it failed; return (item, outcome,
    whether its retrieval is scored)."""
    case = metrics_case(row)
    began = timer()
    found = search(case.query, k=run.k)
    searched_ms = (timer() - began) * 1000
    outcome = case_outcome(case, [hit.doc for hit in found.results])
    item = EvalRunItem(
        run=run, case_id=case.id, query=case.query, must_pass=case.must_pass,
        first_hit_rank=outcome.first_hit_rank, hard_negative_above=bool(outcome.hard_negative_above),
        ranked_docs=outcome.ranked_docs, latency_ms=round(searched_ms, 3),
        retrieval=[{key: getattr(hit, key) for key in RETRIEVAL_KEYS} for hit in found.fused],
    )
    cited, kept = (_answer(item, row, writer=writer, billing=billing, timer=timer) if not run.retrieval_only
                   else ("", None))
    if kept is not None:  # scored on what retrieval kept for this customer, as the bot searched
        outcome = case_outcome(case, kept)
        item.first_hit_rank, item.ranked_docs = outcome.first_hit_rank, outcome.ranked_docs
        item.hard_negative_above = bool(outcome.hard_negative_above)
    item.save()
    judged = _judge(item, judge, answer=cited) if judge is not None and item.outcome == "answered" else ""
    item.failures = answer_checks.case_failures(CaseResult(
        k=run.k, first_hit_rank=outcome.first_hit_rank, hard_negative_above=outcome.hard_negative_above,
        must_pass=case.must_pass, scored_retrieval=bool(case.hits),
        clarification_expected=bool(row.get("clarification_expected")), outcome=item.outcome,
        escalation_reason=item.escalation_reason, grounded=item.grounded, missing_facts=item.missing_facts,
        judge_label=judged, out_of_scope=case.out_of_scope, has_context=found.context.has_context,
    ))
    item.save(update_fields=["failures", "judge_label", "judge_reason"])
    return item, outcome, bool(case.hits)


def _answer(item: EvalRunItem, row: dict, *, writer, billing, timer) -> tuple[str, list[str] | None]:
    """Put the case through the real answer path, record what it did on the item; return the cited draft and, for a
    case with a customer, the documents the bot's search kept for them (best first; None otherwise)."""
    result = answer_query(query=row["query"], language=row.get("language") or "es",
                          customer_id=row.get("customer_id") or "", history=_history(row.get("context")),
                          writer=writer, billing=billing, clock=timer)
    outcome, draft = result.outcome, result.draft
    verdicts = [attempt["verdict"] for attempt in draft.attempts if "verdict" in attempt]
    if isinstance(outcome, Escalated):
        item.outcome, item.escalation_reason = "escalated", outcome.reason.value
    elif isinstance(outcome, Clarify):
        item.outcome, item.answer = "clarify", outcome.text
    elif isinstance(outcome, Answered) and outcome.asks_identity:
        item.outcome, item.answer = "asked", outcome.text
    elif isinstance(outcome, Declined):  # not about plans, bills or payments
        item.outcome, item.answer = "declined", outcome.text
    elif isinstance(outcome, Silenced):  # a bare acknowledgement of the bot's last answer
        item.outcome = "silenced"
    else:
        item.outcome, item.answer = "answered", outcome.text
    item.evidence = draft.evidence
    kept = None
    if draft.retrieval:
        # The case's retrieval is what the bot's own search kept: a known customer's leaves out the passages
        # written for other customers (their segment, their plan), and the bot searches a regional word as meant
        # ("que me pongan la fibra" → installing) and a follow-up with the question it follows.
        ranked = sorted(draft.retrieval, key=lambda hit: hit["rank"])
        kept = [hit["doc"] for hit in ranked if hit["kept"]]
        item.retrieval = [{key: hit.get(key) for key in RETRIEVAL_KEYS} for hit in ranked]
    fell_back = draft.fallback in ("template", "quote") and bool(draft.fallback_draft)
    if fell_back:  # the verified-only answer was what went out: its verdict is the one that counts
        verdicts = [*verdicts, draft.fallback_draft["verdict"]]
    item.verdicts = verdicts
    item.grounded = verdicts[-1]["grounded"] if verdicts else None
    item.missing_facts = answer_checks.missing_facts(list(row.get("facts") or []), item.answer)
    item.latency_ms = round(draft.total_ms, 3)
    item.model_cost = draft.cost  # not a column: the run's metrics sum it (run_cost)
    # The judge reads the draft with its [E#] markers: what it cited is part of what it claims.
    if fell_back:
        cited = draft.fallback_draft["reply"]
    else:
        cited = next((a["reply"] for a in reversed(draft.attempts) if a.get("verdict", {}).get("grounded")),
                     item.answer)
    item.cited_answer = cited if item.outcome == "answered" else ""
    return cited, kept


def _history(context) -> list[tuple[str, str]]:
    """Return a case's conversation context as (role, text) pairs: strings are the customer's turns."""
    pairs = []
    for turn in context or []:
        if isinstance(turn, str):
            pairs.append(("user", turn))
        elif isinstance(turn, dict):
            role = "assistant" if turn.get("role") in ("assistant", "bot", "agent") else "user"
            pairs.append((role, str(turn.get("text") or turn.get("content") or "")))
    return [pair for pair in pairs if pair[1]]


def _judge(item: EvalRunItem, judge, *, answer: str) -> str:
    """Judge one answered item, store the verdict row, and return the label (a judge error is never a pass)."""
    try:
        judgement = judge.judge(answer=answer or item.answer, evidence=evidence_items(item.evidence),
                                question=item.query, verified=verified_figures(item.verdicts))
    except JudgeError as exc:
        verdict = judge_verdict_record(run_item=item, error=exc, judge=judge)
    else:
        verdict = judge_verdict_record(run_item=item, judgement=judgement, judge=judge)
    item.judge_label, item.judge_reason = str(verdict.label), verdict.reason
    return item.judge_label


def _corrected_rate(run: EvalRun) -> dict:
    """Return the run's calibrated pass rate, or why there is none."""
    try:
        return run_corrected_rate(run=run)
    except Exception as exc:  # a calibration that cannot be computed must not sink the run
        return {"error": f"calibration failed: {exc}"}


def run_compare(*, base: EvalRun, head: EvalRun) -> RunComparison:
    """Compare two runs case by case (only retrieval failures when one of them is retrieval-only)."""
    base_failures = dict(base.items.values_list("case_id", "failures"))
    head_failures = dict(head.items.values_list("case_id", "failures"))
    return answer_checks.compare_failures(
        base_failures, head_failures, metrics=_metric_pairs(base, head),
        retrieval_only=base.retrieval_only != head.retrieval_only)


def run_compare_with_cases(*, base: dict[str, list[str]], base_retrieval_only: bool, head: EvalRun) -> RunComparison:
    """Compare a run with a saved one given as {case_id: failures} (a baseline run file)."""
    head_failures = dict(head.items.values_list("case_id", "failures"))
    return answer_checks.compare_failures(base, head_failures, retrieval_only=base_retrieval_only != head.retrieval_only)


def _metric_pairs(base: EvalRun, head: EvalRun) -> list[tuple[str, object, object]]:
    b, h = base.metrics or {}, head.metrics or {}
    pairs = [(f"recall@{head.k}" if base.k == head.k else "recall@k",
              b.get(f"recall@{base.k}"), h.get(f"recall@{head.k}"))]
    pairs += [(name, b.get(name), h.get(name)) for name in ("mrr", "answered", "clarified", "grounded")]
    pairs.append(("judge observed", (b.get("judge") or {}).get("observed"), (h.get("judge") or {}).get("observed")))
    pairs.append(("corrected", (b.get("corrected_pass_rate") or {}).get("value"),
                  (h.get("corrected_pass_rate") or {}).get("value")))
    return pairs


def run_baseline(*, head: EvalRun) -> EvalRun | None:
    """Return the latest finished run of the same set before `head`, preferring one of the same kind."""
    earlier = EvalRun.objects.filter(golden_set_id=head.golden_set_id, status=EvalRun.Status.DONE, labels_file="",
                                     pk__lt=head.pk).order_by("-pk")
    return earlier.filter(retrieval_only=head.retrieval_only).first() or earlier.first()


def run_gate_report(run: EvalRun) -> dict:
    """Return a run's metrics as a gate report, with the case ids it ran."""
    return {**(run.metrics or {}), "retrieval_only": run.retrieval_only,
            "case_ids": list(run.items.values_list("case_id", flat=True))}


def run_summary(run: EvalRun) -> str:
    """Return the one-line summary of a finished run: id, versions, retrieval numbers, must-pass, judge."""
    metrics = run.metrics or {}
    parts = [f"run {run.pk}", f"{run.golden_set.name} v{run.golden_version}",
             "retrieval only" if run.retrieval_only else f"prompt {run.prompt_version or '—'} ({run.model or '—'})",
             f"index v{run.index_version} ({run.embedding_model or '—'})",
             f"{metrics.get('cases', 0)} cases",
             f"recall@{run.k} {_fmt(metrics.get(f'recall@{run.k}'))}", f"MRR {_fmt(metrics.get('mrr'))}",
             f"must-pass failures {len(metrics.get('must_pass_failures') or [])}",
             f"failing {len(metrics.get('failing') or [])}"]
    if not run.retrieval_only:
        parts.append(f"answered {_fmt(metrics.get('answered'))} · asked to clarify {_fmt(metrics.get('clarified'))} "
                     f"· grounded {_fmt(metrics.get('grounded'))}")
    judge = metrics.get("judge")
    if judge:
        parts.append(f"judge {judge['version']} ({judge['model'] or '—'}): {judge['passes']} pass, "
                     f"{judge['fails']} fail, {judge['errors']} error, observed {_fmt(judge['observed'])}")
        corrected = metrics.get("corrected_pass_rate") or {}
        parts.append(f"corrected {_fmt(corrected.get('value'))} [{_fmt(corrected.get('lower'))}, "
                     f"{_fmt(corrected.get('upper'))}]" if corrected.get("value") is not None
                     else f"corrected: {corrected.get('error', 'undefined')}")
    elif not run.retrieval_only:
        parts.append("not judged")
    return " · ".join(parts)


def run_json(run: EvalRun) -> dict:
    """Return a finished run as `eval_run --json` prints it: what ran, its numbers and every case (a baseline file).

    `embedder_fingerprint` is this process's embedder (kb.embeddings.embedder_fingerprint): a baseline file
    written here records how its vectors were made, so the gate can tell when a later run's were made
    differently.
    """
    return {"run": run.pk, "status": run.status, "golden_set": run.golden_set.name,
            "golden_version": run.golden_version, "retrieval_only": run.retrieval_only, "k": run.k,
            "prompt_version": run.prompt_version, "model": run.model, "index_version": run.index_version,
            "judge_version": run.judge_version, "embedder_fingerprint": embedder_fingerprint(get_embedder()),
            **(run.metrics or {}), "per_case": run_cases_json(run)}


def run_cases_json(run: EvalRun) -> list[dict]:
    """Return the run's items as plain JSON rows, in case order."""
    return [
        {"id": item.case_id, "passed": item.passed, "failures": item.failures, "must_pass": item.must_pass,
         "first_hit_rank": item.first_hit_rank, "hard_negative_above": item.hard_negative_above,
         "docs": item.ranked_docs, "outcome": item.outcome, "escalation_reason": item.escalation_reason,
         "answer": item.answer, "grounded": item.grounded, "missing_facts": item.missing_facts,
         "judge_label": item.judge_label, "latency_ms": item.latency_ms}
        for item in run.items.order_by("case_id")
    ]


def _fmt(value) -> str:
    return "—" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)
