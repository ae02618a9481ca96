"""Corrective prune of fused retrieval results. Pure: no Django.

Keep a chunk whose vector score is within a relative margin of this turn's best vector
score; a full-text or identifier hit always survives (an account number has no meaningful
embedding); backfill from the top so at least `min_keep` chunks remain; never return
nothing when something matched.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MARGIN = 0.12
DEFAULT_MIN_KEEP = 2
_EPSILON = 1e-9  # 0.8 * (1 - 0.12) is 0.7040000000000001 in floats; a score of 0.704 is within margin


@dataclass(frozen=True)
class Candidate:
    chunk_id: int
    vector_score: float | None  # cosine similarity; None when unknown
    matched_by_text: bool = False
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
    """Return one decision per candidate, in the candidates' (fused) order."""
    if not 0 <= margin < 1:
        raise ValueError("margin must be in [0, 1)")
    scores = [c.vector_score for c in candidates if c.vector_score is not None]
    best = max(scores) if scores else None
    # Relative margin on a positive best; on a non-positive best, fall back to an absolute one.
    floor = None if best is None else (best * (1 - margin) if best > 0 else best - margin)

    reasons: list[str | None] = []
    for candidate in candidates:
        if candidate.matched_by_identifier:
            reasons.append("identifier hit")
        elif candidate.matched_by_text:
            reasons.append("text hit")
        elif floor is not None and candidate.vector_score is not None and candidate.vector_score >= floor - _EPSILON:
            reasons.append("within margin")
        else:
            reasons.append(None)

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
