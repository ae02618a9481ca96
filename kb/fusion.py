"""Reciprocal Rank Fusion. Pure: no Django.

score(d) = Σ over branches of 1 / (k + rank_b(d)), ranks starting at 1. Ties are broken
by chunk id ascending, so identical inputs always give the identical order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_K = 60


@dataclass(frozen=True)
class Fused:
    chunk_id: int
    rrf: float
    ranks: dict[str, int] = field(default_factory=dict)  # branch name -> 1-based rank in that branch


def reciprocal_rank_fusion(rankings: dict[str, list[int]], *, k: int = DEFAULT_K) -> list[Fused]:
    """Fuse ranked lists of chunk ids (best first) from named branches into one list, best first."""
    if k <= 0:
        raise ValueError("k must be positive")
    scores: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for branch, ids in rankings.items():
        seen: set[int] = set()
        for position, chunk_id in enumerate(ids, start=1):
            if chunk_id in seen:  # a branch lists a chunk once; later repeats carry no extra vote
                continue
            seen.add(chunk_id)
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (k + position)
            ranks.setdefault(chunk_id, {})[branch] = position
    ordered = sorted(scores, key=lambda chunk_id: (-scores[chunk_id], chunk_id))
    return [Fused(chunk_id=c, rrf=scores[c], ranks=ranks[c]) for c in ordered]
