import pytest

from kb.fusion import reciprocal_rank_fusion


def test_a_chunk_found_by_two_branches_outranks_one_found_by_one():
    fused = reciprocal_rank_fusion({"vector": [1, 2, 3], "text": [3, 9]}, k=60)
    assert fused[0].chunk_id == 3
    assert fused[0].rrf == pytest.approx(1 / 63 + 1 / 61)
    assert fused[0].ranks == {"vector": 3, "text": 1}


@pytest.mark.parametrize(
    "rankings, expected",
    [
        ({"vector": [7], "text": [4]}, [4, 7]),  # equal scores: lower chunk id first
        ({"vector": [9, 2], "text": [2, 9]}, [2, 9]),
        ({"text": [5, 3], "vector": [3, 5]}, [3, 5]),  # branch order does not matter
    ],
)
def test_ties_are_broken_by_chunk_id(rankings, expected):
    assert [f.chunk_id for f in reciprocal_rank_fusion(rankings)] == expected


def test_identical_inputs_give_identical_order():
    rankings = {"vector": list(range(50, 0, -1)), "text": list(range(1, 51)), "identifier": [25]}
    first = reciprocal_rank_fusion(rankings)
    assert first == reciprocal_rank_fusion(dict(rankings))
    assert first[0].chunk_id == 25


def test_a_repeated_id_in_one_branch_votes_once():
    fused = reciprocal_rank_fusion({"vector": [1, 1, 2]}, k=60)
    assert fused[0].rrf == pytest.approx(1 / 61)
    assert fused[1].rrf == pytest.approx(1 / 63)


def test_empty_branches_give_nothing():
    assert reciprocal_rank_fusion({"vector": [], "text": []}) == []


def test_k_must_be_positive():
    with pytest.raises(ValueError):
        reciprocal_rank_fusion({"vector": [1]}, k=0)
