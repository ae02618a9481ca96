"""Retrieval metrics over golden cases. Pure: no Django.

A document counts once, at its first position in the ranked chunk list: five chunks of the
same wrong document are one miss, not five.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class GoldenCase:
    id: str
    query: str
    hits: list[str]
    hard_negatives: list[str] = field(default_factory=list)
    must_pass: bool = False
    split: str = "dev"  # "dev" (choose on it) or "test" (report it once)
    language: str = ""
    out_of_scope: bool = False  # no document answers it: it passes when the search says "no context"


@dataclass(frozen=True)
class CaseOutcome:
    case_id: str
    first_hit_rank: int | None  # 1-based rank among distinct documents; None when no hit in the list
    hard_negative_above: str | None  # a hard-negative document ranked above the first hit
    must_pass: bool
    ranked_docs: list[str]

    @property
    def must_pass_failed(self) -> bool:
        return self.must_pass and self.first_hit_rank != 1


@dataclass(frozen=True)
class RetrievalReport:
    cases: int
    recall_at_k: float
    mrr: float
    k: int
    must_pass_failures: list[str]
    hard_negative_wins: list[str]


def distinct_documents(ranked_docs: list[str]) -> list[str]:
    """Return the documents in order of their first appearance."""
    return list(dict.fromkeys(ranked_docs))


def case_outcome(case: GoldenCase, ranked_docs: list[str]) -> CaseOutcome:
    """Score one case from the documents of its ranked chunks (best first)."""
    docs = distinct_documents(ranked_docs)
    hits = set(case.hits)
    first = next((i for i, doc in enumerate(docs, start=1) if doc in hits), None)
    above = docs[: (first - 1) if first else len(docs)]
    negative = next((doc for doc in above if doc in set(case.hard_negatives)), None)
    return CaseOutcome(case.id, first, negative, case.must_pass, docs)


def recall_at_k(outcomes: list[CaseOutcome], k: int) -> float:
    """Share of cases with a hit document within the first k distinct documents."""
    if not outcomes:
        return 0.0
    return sum(1 for o in outcomes if o.first_hit_rank is not None and o.first_hit_rank <= k) / len(outcomes)


def mean_reciprocal_rank(outcomes: list[CaseOutcome]) -> float:
    """Mean of 1 / first hit rank (0 for a case without a hit)."""
    if not outcomes:
        return 0.0
    return sum(1 / o.first_hit_rank for o in outcomes if o.first_hit_rank) / len(outcomes)


def retrieval_report(outcomes: list[CaseOutcome], *, k: int = 5) -> RetrievalReport:
    """Summarise outcomes as recall@k, MRR, must-pass failures and hard-negative wins."""
    return RetrievalReport(
        cases=len(outcomes),
        recall_at_k=recall_at_k(outcomes, k),
        mrr=mean_reciprocal_rank(outcomes),
        k=k,
        must_pass_failures=[o.case_id for o in outcomes if o.must_pass_failed],
        hard_negative_wins=[o.case_id for o in outcomes if o.hard_negative_above],
    )


# ── Per split, per branch, and the no-context decision ───────────────────────────────────────────

BRANCHES = ("vector", "text", "hybrid")
SPLITS = ("dev", "test")


@dataclass(frozen=True)
class NoContextReport:
    """How the search's "context or no context" decision fared on labelled questions."""

    in_scope: int
    false_no_context: list[str]  # in-scope cases the decision sent to NO_CONTEXT
    out_of_scope: int
    false_context: list[str]  # out-of-scope cases the decision would have answered

    @property
    def false_no_context_rate(self) -> float | None:
        return len(self.false_no_context) / self.in_scope if self.in_scope else None

    @property
    def false_answer_rate(self) -> float | None:
        return len(self.false_context) / self.out_of_scope if self.out_of_scope else None


def no_context_report(decisions: list[tuple[GoldenCase, bool]]) -> NoContextReport:
    """Score (case, has_context) pairs: in-scope cases need context, out-of-scope cases need none."""
    inside = [(case, has) for case, has in decisions if not case.out_of_scope]
    outside = [(case, has) for case, has in decisions if case.out_of_scope]
    return NoContextReport(
        in_scope=len(inside), false_no_context=[case.id for case, has in inside if not has],
        out_of_scope=len(outside), false_context=[case.id for case, has in outside if has],
    )


@dataclass(frozen=True)
class SplitReport:
    split: str
    branches: dict[str, RetrievalReport]  # "vector", "text", "hybrid"
    no_context: NoContextReport


def split_reports(cases: list[GoldenCase], ranked: dict[str, dict[str, list[str]]], has_context: dict[str, bool],
                  *, k: int = 5) -> list[SplitReport]:
    """Return one report per split present: each branch's retrieval figures over the in-scope cases
    (`ranked[case id][branch]` = documents of its ranked chunks) and the no-context error rates."""
    reports = []
    for split in [s for s in SPLITS if any(c.split == s for c in cases)]:
        chosen = [c for c in cases if c.split == split]
        scored = [c for c in chosen if not c.out_of_scope and c.hits]
        branches = {branch: retrieval_report([case_outcome(c, ranked[c.id][branch]) for c in scored], k=k)
                    for branch in BRANCHES}
        decisions = [(c, has_context[c.id]) for c in chosen if c.id in has_context]
        reports.append(SplitReport(split, branches, no_context_report(decisions)))
    return reports
