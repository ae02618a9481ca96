"""Uniform, reproducible draws of traces for review sessions (pure: no Django)."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Draw:
    seed: int
    population: int
    trace_ids: list[int]


def draw_uniform(*, population_ids: Iterable[int], size: int, seed: int) -> Draw:
    """Return `size` distinct ids drawn uniformly without replacement; same seed and population → same draw.

    The population is sorted first so the draw does not depend on the order the database returned it in.
    """
    population = sorted(set(population_ids))
    size = max(0, min(size, len(population)))
    chosen = random.Random(seed).sample(population, size)
    return Draw(seed=seed, population=len(population), trace_ids=chosen)


def append_tagged(*, existing: Sequence[int], candidates: Iterable[int]) -> list[int]:
    """Return the candidates not already in the session (nor repeated among themselves), in their order."""
    seen = set(existing)
    added = []
    for trace_id in candidates:
        if trace_id not in seen:
            seen.add(trace_id)
            added.append(trace_id)
    return added


