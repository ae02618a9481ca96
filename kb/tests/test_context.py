"""The no-context decision: for the turn, from the kept chunks; an AND or identifier hit is always context."""

from dataclasses import dataclass

import pytest

from kb.context import decide_context


@dataclass
class Kept:
    vector_score: float | None
    matched_by_text: bool = False
    matched_by_identifier: bool = False


@pytest.mark.parametrize("hit", [Kept(0.2, matched_by_text=True), Kept(0.2, matched_by_identifier=True),
                                 Kept(None, matched_by_identifier=True)])
def test_a_text_or_identifier_hit_is_context_whatever_its_cosine(hit):
    decision = decide_context([Kept(0.5), hit], min_best_score=0.845)
    assert decision.has_context
    assert "hit" in decision.reason


@pytest.mark.parametrize("best, has_context", [(0.845, True), (0.9, True), (0.8449, False), (0.3, False)])
def test_without_a_hit_the_best_cosine_decides(best, has_context):
    decision = decide_context([Kept(0.2), Kept(best)], min_best_score=0.845)
    assert (decision.has_context, decision.best_score) == (has_context, best)


def test_nothing_retrieved_is_no_context():
    assert not decide_context([], min_best_score=0.845).has_context


def test_the_decision_never_changes_the_kept_chunks():
    kept = [Kept(0.4), Kept(0.1, matched_by_text=True)]
    decide_context(kept, min_best_score=0.845)
    assert kept == [Kept(0.4), Kept(0.1, matched_by_text=True)]
