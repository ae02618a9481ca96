import pytest

from kb.pruning import Candidate, prune


def kept(decisions):
    return [d.chunk_id for d in decisions if d.kept]


@pytest.mark.parametrize(
    "score, survives",
    [(0.80, True), (0.704, True), (0.7039, False), (0.5, False)],
)
def test_relative_margin_of_the_best_vector_score(score, survives):
    candidates = [Candidate(1, 0.80), Candidate(2, 0.79), Candidate(3, score)]
    assert (3 in kept(prune(candidates, margin=0.12))) is survives


@pytest.mark.parametrize("flag", ["matched_by_text", "matched_by_identifier"])
def test_a_text_or_identifier_hit_always_survives(flag):
    candidates = [Candidate(1, 0.9), Candidate(2, 0.85), Candidate(3, 0.1, **{flag: True})]
    decisions = prune(candidates, margin=0.12)
    assert kept(decisions) == [1, 2, 3]
    assert decisions[2].reason in {"text hit", "identifier hit"}


def test_backfill_from_the_top_to_two_chunks():
    candidates = [Candidate(1, 0.9), Candidate(2, 0.3), Candidate(3, 0.2)]
    decisions = prune(candidates, margin=0.12)
    assert kept(decisions) == [1, 2]
    assert decisions[1].reason == "backfill"
    assert decisions[2].reason == "below margin"


def test_never_filters_to_zero_even_when_asked_to_keep_none():
    decisions = prune([Candidate(4, None), Candidate(5, None)], min_keep=0)
    assert kept(decisions) == [4]


def test_nothing_in_nothing_out():
    assert prune([]) == []


def test_non_positive_best_uses_an_absolute_margin():
    decisions = prune([Candidate(1, -0.05), Candidate(2, -0.1), Candidate(3, -0.5)], margin=0.12, min_keep=1)
    assert kept(decisions) == [1, 2]


def test_margin_out_of_range_is_refused():
    with pytest.raises(ValueError):
        prune([Candidate(1, 0.5)], margin=1.0)
