"""Agreement between two reviewers of the same traces: Cohen's kappa and the list of disagreements (pure: no Django).

Cohen's kappa compares the agreement two reviewers reached (p_o, the share of items both labelled alike) with
the agreement chance alone would give them (p_e, from each reviewer's own label frequencies):

    κ = (p_o − p_e) / (1 − p_e)

κ is 1 for perfect agreement, 0 for what chance gives, below 0 for worse than chance.

**The degenerate case.** When every item got the same single label from both reviewers (both said "no class X" on
all twelve items), p_e is 1 and κ is 0 / 0: undefined. Nothing distinguishes skill from chance when there was
nothing to tell apart. `kappa()` then returns `value=None` with `degenerate=True`, and the page shows
"— (all items one label: agreement 100 %, κ undefined)" rather than a made-up 1 or 0. Items where only one
reviewer gave a label are left out of that label's κ (`n` counts only the items both labelled).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa over `n` items labelled by both reviewers; `value` None when undefined (see module)."""

    n: int
    observed: float | None  # p_o: the share of items with the same label
    expected: float | None  # p_e: the agreement expected by chance
    value: float | None
    degenerate: bool = False  # p_e == 1: both reviewers used one and the same label for every item

    @property
    def text(self) -> str:
        """Return κ as the pages show it."""
        if self.n == 0:
            return "— (no item reviewed by both)"
        if self.degenerate:
            return "— (all items one label: agreement 100 %, κ undefined)"
        return f"{self.value:.2f}"


def kappa(pairs: Iterable[tuple[Hashable, Hashable]]) -> Kappa:
    """Return Cohen's kappa of (first reviewer's label, second reviewer's label) pairs."""
    pairs = list(pairs)
    n = len(pairs)
    if n == 0:
        return Kappa(n=0, observed=None, expected=None, value=None)
    observed = sum(1 for a, b in pairs if a == b) / n
    first = Counter(a for a, _ in pairs)
    second = Counter(b for _, b in pairs)
    expected = sum(first[label] * second[label] for label in first) / (n * n)
    if expected >= 1.0:  # only possible when both used a single, identical label throughout: p_o is then 1 too
        return Kappa(n=n, observed=observed, expected=1.0, value=None, degenerate=True)
    return Kappa(n=n, observed=observed, expected=expected, value=(observed - expected) / (1 - expected))


@dataclass(frozen=True)
class ReviewerLabels:
    """What one reviewer said about one item: verdict, failure class (after merges) and scores by key."""

    verdict: str  # pass | fail (a deferred note is not a label)
    failure_class: int | None = None
    scores: tuple[tuple[str, str], ...] = ()  # (score key, canonical value)

    def score(self, key: str) -> str | None:
        return dict(self.scores).get(key)


@dataclass(frozen=True)
class DoubleReview:
    """One item reviewed by two people."""

    item: int
    first: ReviewerLabels
    second: ReviewerLabels


def class_kappa(reviews: Sequence[DoubleReview], class_id: int) -> Kappa:
    """Return κ for one failure class as presence / absence: did each reviewer put the item in that class?"""
    return kappa((r.first.failure_class == class_id, r.second.failure_class == class_id) for r in reviews)


def verdict_kappa(reviews: Sequence[DoubleReview]) -> Kappa:
    """Return κ of pass / fail."""
    return kappa((r.first.verdict, r.second.verdict) for r in reviews)


def score_kappa(reviews: Sequence[DoubleReview], key: str) -> Kappa:
    """Return κ of one score over the items both reviewers scored (values compared as they are: unweighted)."""
    return kappa((r.first.score(key), r.second.score(key)) for r in reviews
                 if r.first.score(key) is not None and r.second.score(key) is not None)


def differences(review: DoubleReview) -> list[str]:
    """Return what the two reviewers disagree on: "verdict", "failure class", "score:<key>" (empty: agreed)."""
    found = []
    if review.first.verdict != review.second.verdict:
        found.append("verdict")
    if review.first.failure_class != review.second.failure_class:
        found.append("failure class")
    keys = sorted({k for k, _ in review.first.scores} & {k for k, _ in review.second.scores})
    found += [f"score:{key}" for key in keys if review.first.score(key) != review.second.score(key)]
    return found
