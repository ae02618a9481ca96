"""Decide whether a search found context for the turn, or nothing the bot may answer from. Pure: no Django.

The decision is for the turn, not per chunk: it never removes a kept chunk. A chunk that holds every
content word of the question (an AND match) or one of its identifiers is proof that the knowledge base
speaks about it, so either one means context whatever the cosine says. Without such a hit only
similarity is left, and the question has context when the best cosine reaches a threshold measured on
labelled in-scope and out-of-scope questions (the dev splits; see the README's Knowledge base section).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class Scored(Protocol):
    vector_score: float | None
    matched_by_text: bool  # an AND (all content words) or phrase-window match
    matched_by_identifier: bool


@dataclass(frozen=True)
class ContextDecision:
    has_context: bool
    reason: str
    best_score: float | None = None
    # the prune's margin and where it came from (the embedder's calibration, or the seed's rule), set by search
    prune_rule: str = ""


def decide_context(kept: list[Scored], *, min_best_score: float) -> ContextDecision:
    """Return whether the kept chunks of a search give the turn context, and why."""
    if not kept:
        return ContextDecision(False, "the knowledge base returned nothing")
    scores = [hit.vector_score for hit in kept if hit.vector_score is not None]
    best = max(scores) if scores else None
    if any(hit.matched_by_identifier for hit in kept):
        return ContextDecision(True, "identifier hit", best)
    if any(hit.matched_by_text for hit in kept):
        return ContextDecision(True, "text hit (every content word)", best)
    if best is not None and best >= min_best_score:
        return ContextDecision(True, f"best cosine {best:.3f} ≥ {min_best_score}", best)
    shown = "none" if best is None else f"{best:.3f}"
    return ContextDecision(False, f"no text or identifier hit and best cosine {shown} < {min_best_score}", best)
