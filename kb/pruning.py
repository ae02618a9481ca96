"""Corrective prune of fused retrieval results (CRAG's refinement without a second model). Pure: no Django.

Fusion orders, it does not filter: top-k always returns k chunks, whether or not the last ones make
sense. Keep a chunk whose cosine is within `margin` of this turn's best (`best − margin`: relative to
the turn, so a weak question is not emptied and a strong one does not let noise through); a chunk
holding every content word of the question (an AND text hit) or one of its identifiers always
survives — the match itself is proof of relevance, and an account number has no meaningful
embedding; backfill from the top so at least `min_keep` chunks remain. When in doubt, keep: pruning
the one line that answered escalates a question the bot could have solved.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MARGIN = 0.12
DEFAULT_MIN_KEEP = 2
_EPSILON = 1e-9  # 0.80 − 0.12 is 0.6800000000000002 in floats; a score of 0.68 is within the margin


@dataclass(frozen=True)
class Candidate:
    chunk_id: int
    vector_score: float | None  # cosine similarity; None when unknown
    matched_by_text: bool = False  # the chunk holds every content word of the question (an AND match)
    matched_by_identifier: bool = False


@dataclass(frozen=True)
class PruneDecision:
    chunk_id: int
    kept: bool
    reason: str  # "within margin", "text hit", "identifier hit", "backfill", "below margin"


def prune(
    candidates: list[Candidate],
    *,
    margin: float = DEFAULT_MARGIN,
    min_keep: int = DEFAULT_MIN_KEEP,
) -> list[PruneDecision]:
    """Return one decision per candidate, in the candidates' (fused, best-first) order."""
    if not 0 <= margin < 1:
        raise ValueError("margin must be in [0, 1)")
    scores = [c.vector_score for c in candidates if c.vector_score is not None]
    cutoff = max(scores) - margin if scores else None

    reasons: list[str | None] = []
    for candidate in candidates:
        if candidate.matched_by_identifier:
            reasons.append("identifier hit")
        elif candidate.matched_by_text:
            reasons.append("text hit")
        elif cutoff is not None and candidate.vector_score is not None and candidate.vector_score >= cutoff - _EPSILON:
            reasons.append("within margin")
        else:
            reasons.append(None)

    # Candidates arrive best first, so backfilling from the top adds the best of the discarded ones.
    min_keep = max(min_keep, 1)  # never filter to zero when something matched
    kept = sum(r is not None for r in reasons)
    for index, reason in enumerate(reasons):
        if kept >= min_keep:
            break
        if reason is None:
            reasons[index] = "backfill"
            kept += 1

    return [
        PruneDecision(chunk_id=c.chunk_id, kept=r is not None, reason=r or "below margin")
        for c, r in zip(candidates, reasons)
    ]
