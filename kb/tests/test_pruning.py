import pytest

from kb.pruning import Candidate, prune


def kept(decisions):
    return [d.chunk_id for d in decisions if d.kept]


@pytest.mark.parametrize(
    "score, survives",
    [(0.80, True), (0.68, True), (0.6799, False), (0.5, False)],  # cutoff = best − 0.12 = 0.68
)
def test_cutoff_is_the_best_cosine_minus_the_margin(score, survives):
    candidates = [Candidate(1, 0.80), Candidate(2, 0.79), Candidate(3, score)]
    assert (3 in kept(prune(candidates, margin=0.12))) is survives


def test_the_margin_is_absolute_not_a_share_of_the_best():
    # best × (1 − 0.12) would be 0.792 and drop chunk 3; best − 0.12 = 0.78 keeps it.
    candidates = [Candidate(1, 0.90), Candidate(2, 0.89), Candidate(3, 0.785)]
    assert kept(prune(candidates, margin=0.12)) == [1, 2, 3]


@pytest.mark.parametrize("flag, reason", [("matched_by_text", "text hit"), ("matched_by_identifier", "identifier hit")])
def test_an_and_text_hit_or_an_identifier_hit_always_survives(flag, reason):
    candidates = [Candidate(1, 0.9), Candidate(2, 0.85), Candidate(3, 0.1, **{flag: True})]
    decisions = prune(candidates, margin=0.12)
    assert kept(decisions) == [1, 2, 3]
    assert decisions[2].reason == reason


def test_an_identifier_hit_with_a_low_cosine_is_kept_and_the_rest_compete_on_cosine():
    # The account number's chunk scores far below the best: only its identifier keeps it.
    candidates = [Candidate(1, 0.88), Candidate(2, 0.70), Candidate(3, 0.41, matched_by_identifier=True),
                  Candidate(4, 0.79)]
    decisions = prune(candidates, margin=0.12)
    assert [(d.chunk_id, d.kept, d.reason) for d in decisions] == [
        (1, True, "within margin"), (2, False, "below margin"), (3, True, "identifier hit"), (4, True, "within margin")]


def test_a_chunk_that_is_not_a_text_hit_gets_no_immunity():
    # An OR-style partial match is no proof: without matched_by_text it competes on cosine like any chunk.
    decisions = prune([Candidate(1, 0.9), Candidate(2, 0.88), Candidate(3, 0.5)], margin=0.12)
    assert (decisions[2].kept, decisions[2].reason) == (False, "below margin")


def test_backfill_from_the_top_to_two_chunks():
    candidates = [Candidate(1, 0.9), Candidate(2, 0.3), Candidate(3, 0.2)]
    decisions = prune(candidates, margin=0.12)
    assert kept(decisions) == [1, 2]
    assert [d.reason for d in decisions] == ["within margin", "backfill", "below margin"]


def test_backfill_takes_the_best_ranked_of_the_dropped_not_the_best_cosine():
    # Fused order is the ranking: chunk 2 comes before chunk 3 even with a lower cosine.
    candidates = [Candidate(1, 0.9), Candidate(2, 0.5), Candidate(3, 0.6)]
    assert kept(prune(candidates, margin=0.12)) == [1, 2]


def test_two_candidates_or_fewer_are_all_kept():
    assert kept(prune([Candidate(1, 0.9), Candidate(2, 0.1)])) == [1, 2]


def test_never_filters_to_zero_even_when_asked_to_keep_none():
    decisions = prune([Candidate(4, None), Candidate(5, None)], min_keep=0)
    assert kept(decisions) == [4]


def test_nothing_in_nothing_out():
    assert prune([]) == []


def test_margin_out_of_range_is_refused():
    with pytest.raises(ValueError):
        prune([Candidate(1, 0.5)], margin=1.0)
