"""Who reviews which trace of a review queue (pure: no Django).

Each item goes to one reviewer, or to two for a fraction of the items so their agreement can be measured. Which
items are doubled and who gets each item depend only on the items, the reviewers and the seed: the same queue
created again assigns the same way.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass


class AssignmentError(ValueError):
    """An assignment the rules refuse (the message says what to change)."""


@dataclass(frozen=True)
class Assignment:
    position: int
    trace_id: int
    reviewers: tuple[int, ...]  # one or two reviewer ids

    @property
    def double(self) -> bool:
        return len(self.reviewers) == 2


def doubled_count(items: int, fraction: float) -> int:
    """Return how many of `items` are reviewed twice for a fraction (rounded half up: 0.5 of 5 → 3)."""
    return int(items * fraction + 0.5)


def assign_reviewers(*, trace_ids: Sequence[int], reviewers: Sequence[int], double_fraction: float,
                     seed: int) -> list[Assignment]:
    """Return each trace's reviewers: one each, two for `double_fraction` of them, the load kept even.

    The doubled items are a seeded uniform sample of the positions; each item goes to the reviewers with the
    fewest items so far, ties broken by a seeded shuffle, so every reviewer gets within one item of the others.
    """
    if not 0 <= double_fraction <= 1:
        raise AssignmentError("The share reviewed twice is between 0 and 100 %.")
    people = sorted(set(reviewers))
    if not people:
        raise AssignmentError("Choose at least one reviewer.")
    doubles = doubled_count(len(trace_ids), double_fraction)
    if doubles and len(people) < 2:
        raise AssignmentError("Reviewing some traces twice needs at least two reviewers.")
    rng = random.Random(seed)
    doubled = set(rng.sample(range(len(trace_ids)), doubles))
    load = dict.fromkeys(people, 0)
    assignments = []
    for index, trace_id in enumerate(trace_ids):
        order = people[:]
        rng.shuffle(order)
        order.sort(key=lambda person: load[person])  # stable: the shuffle breaks ties
        chosen = tuple(order[:2] if index in doubled else order[:1])
        for person in chosen:
            load[person] += 1
        assignments.append(Assignment(position=index + 1, trace_id=trace_id, reviewers=chosen))
    return assignments
