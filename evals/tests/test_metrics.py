import pytest

from evals.metrics import (
    GoldenCase,
    case_outcome,
    distinct_documents,
    mean_reciprocal_rank,
    recall_at_k,
    retrieval_report,
)

CASE = GoldenCase(id="g1", query="q", hits=["refund-annual"], hard_negatives=["refund-trial"], must_pass=True)


def test_a_document_counts_once_at_its_first_position():
    assert distinct_documents(["a", "a", "b", "a", "c"]) == ["a", "b", "c"]
    outcome = case_outcome(CASE, ["refund-trial", "refund-trial", "refund-trial", "refund-annual"])
    assert outcome.first_hit_rank == 2
    assert outcome.hard_negative_above == "refund-trial"
    assert outcome.must_pass_failed


def test_hit_at_rank_one_passes_must_pass():
    outcome = case_outcome(CASE, ["refund-annual", "refund-trial"])
    assert (outcome.first_hit_rank, outcome.hard_negative_above, outcome.must_pass_failed) == (1, None, False)


def test_no_hit_has_no_rank_and_scores_zero():
    outcome = case_outcome(CASE, ["x", "y"])
    assert outcome.first_hit_rank is None
    assert mean_reciprocal_rank([outcome]) == 0
    assert recall_at_k([outcome], 5) == 0


@pytest.mark.parametrize(
    "ranks, k, recall, mrr",
    [
        ([1, 2, None, 6], 5, 0.5, (1 + 0.5 + 0 + 1 / 6) / 4),
        ([1, 1], 1, 1.0, 1.0),
        ([3], 2, 0.0, 1 / 3),
    ],
)
def test_recall_and_mrr(ranks, k, recall, mrr):
    outcomes = []
    for i, rank in enumerate(ranks):
        docs = [f"other{j}" for j in range(1, rank)] + ["hit"] if rank else ["other"]
        outcomes.append(case_outcome(GoldenCase(id=f"c{i}", query="q", hits=["hit"]), docs))
    assert recall_at_k(outcomes, k) == pytest.approx(recall)
    assert mean_reciprocal_rank(outcomes) == pytest.approx(mrr)


def test_report_lists_must_pass_failures_and_hard_negative_wins():
    outcomes = [case_outcome(CASE, ["refund-trial", "refund-annual"]), case_outcome(CASE, ["refund-annual"])]
    report = retrieval_report(outcomes, k=5)
    assert report.must_pass_failures == ["g1"]
    assert report.hard_negative_wins == ["g1"]
    assert report.recall_at_k == 1.0 and report.mrr == pytest.approx(0.75)


def test_empty_input_reports_zero():
    assert recall_at_k([], 5) == 0.0 and mean_reciprocal_rank([]) == 0.0
