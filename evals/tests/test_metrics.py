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


def test_split_reports_score_each_branch_per_split_and_out_of_scope_cases_on_the_decision():
    from evals.metrics import split_reports

    cases = [
        GoldenCase(id="d1", query="q", hits=["a"], must_pass=True, split="dev"),
        GoldenCase(id="d2", query="q", hits=["b", "b-twin"], split="dev"),
        GoldenCase(id="d3", query="football?", hits=[], split="dev", out_of_scope=True),
        GoldenCase(id="t1", query="q", hits=["a"], split="test"),
        GoldenCase(id="t2", query="weather?", hits=[], split="test", out_of_scope=True),
    ]
    ranked = {
        "d1": {"vector": ["x", "a"], "text": [], "hybrid": ["a"]},
        "d2": {"vector": ["b-twin"], "text": ["b"], "hybrid": ["x", "b"]},  # either hit counts
        "d3": {"vector": ["x"], "text": [], "hybrid": ["x"]},
        "t1": {"vector": ["a"], "text": ["a"], "hybrid": ["a"]},
        "t2": {"vector": ["x"], "text": [], "hybrid": ["x"]},
    }
    has_context = {"d1": True, "d2": False, "d3": True, "t1": True, "t2": False}
    dev, test = split_reports(cases, ranked, has_context, k=5)
    assert (dev.split, test.split) == ("dev", "test")
    assert {b: (r.cases, r.mrr, r.must_pass_failures) for b, r in dev.branches.items()} == {
        "vector": (2, (0.5 + 1) / 2, ["d1"]), "text": (2, 0.5, ["d1"]), "hybrid": (2, (1 + 0.5) / 2, [])}
    assert (dev.no_context.false_no_context, dev.no_context.false_context) == (["d2"], ["d3"])
    assert (dev.no_context.false_no_context_rate, dev.no_context.false_answer_rate) == (0.5, 1.0)
    assert (test.no_context.false_no_context, test.no_context.false_context) == ([], [])
    assert test.branches["hybrid"].recall_at_k == 1.0


def test_no_context_rates_are_undefined_without_cases_of_a_kind():
    from evals.metrics import no_context_report

    report = no_context_report([(GoldenCase(id="c", query="q", hits=["a"]), True)])
    assert (report.false_no_context_rate, report.false_answer_rate) == (0.0, None)
