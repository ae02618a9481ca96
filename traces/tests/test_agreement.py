"""Cohen's kappa on examples computed by hand, its degenerate case, and what two reviewers disagree on (pure)."""

import pytest

from traces.agreement import DoubleReview, ReviewerLabels, class_kappa, differences, kappa, score_kappa, \
    verdict_kappa


def pairs(*counted):
    """Expand (first label, second label, how many) into that many pairs."""
    return [(a, b) for a, b, n in counted for _ in range(n)]


@pytest.mark.parametrize("table, observed, expected, value", [
    # 4 yes/yes, 1 yes/no, 1 no/yes, 4 no/no: p_o = 8/10; each said yes 5 times: p_e = .5·.5 + .5·.5 = .5;
    # κ = (.8 − .5) / (1 − .5) = .6
    ([("yes", "yes", 4), ("yes", "no", 1), ("no", "yes", 1), ("no", "no", 4)], 0.8, 0.5, 0.6),
    # 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no: p_o = 35/50 = .7; first yes 25/50, second yes 30/50:
    # p_e = .5·.6 + .5·.4 = .5; κ = (.7 − .5) / .5 = .4
    ([("yes", "yes", 20), ("yes", "no", 5), ("no", "yes", 10), ("no", "no", 15)], 0.7, 0.5, 0.4),
    # Three values, 8 items: 6 agree (p_o = .75); first a4 b3 c1, second a3 b3 c2: p_e = (12 + 9 + 2) / 64;
    # κ = (48/64 − 23/64) / (41/64) = 25/41
    ([("a", "a", 3), ("b", "b", 2), ("c", "c", 1), ("a", "b", 1), ("b", "c", 1)], 0.75, 23 / 64, 25 / 41),
    # Always opposite: p_o = 0, p_e = .5, κ = −1 (worse than chance)
    ([("yes", "no", 2), ("no", "yes", 2)], 0.0, 0.5, -1.0),
])
def test_kappa_matches_the_hand_computed_value(table, observed, expected, value):
    result = kappa(pairs(*table))
    assert result.n == sum(n for *_, n in table)
    assert result.observed == pytest.approx(observed)
    assert result.expected == pytest.approx(expected)
    assert result.value == pytest.approx(value)
    assert not result.degenerate and result.text == f"{value:.2f}"


def test_one_label_throughout_is_undefined_not_perfect():
    # Both reviewers said "absent" on all twelve items: p_o = 1 and p_e = 1, κ = 0/0.
    result = kappa(pairs((False, False, 12)))
    assert (result.n, result.observed, result.expected) == (12, 1.0, 1.0)
    assert result.value is None and result.degenerate
    assert result.text == "— (all items one label: agreement 100 %, κ undefined)"


def test_two_labels_with_one_reviewer_constant_are_defined():
    # The first always says yes, the second says no once: p_e = 1·.75 = .75 < 1, p_o = .75, κ = 0.
    result = kappa(pairs(("yes", "yes", 3), ("yes", "no", 1)))
    assert result.value == pytest.approx(0.0) and not result.degenerate


def test_no_items_say_so():
    result = kappa([])
    assert (result.n, result.value) == (0, None) and result.text == "— (no item reviewed by both)"


def labels(verdict, failure_class=None, **scores):
    return ReviewerLabels(verdict=verdict, failure_class=failure_class, scores=tuple(sorted(scores.items())))


def test_a_class_is_compared_as_present_or_absent_and_scores_over_the_items_both_scored():
    reviews = [
        DoubleReview(1, labels("fail", 7, answered="no"), labels("fail", 7, answered="no")),
        DoubleReview(2, labels("fail", 7, answered="no"), labels("fail", 9, answered="yes")),
        DoubleReview(3, labels("pass", answered="yes"), labels("pass", answered="yes")),
        DoubleReview(4, labels("pass"), labels("fail", 9, answered="no")),
    ]
    # Class 7 present/absent: (T,T), (T,F), (F,F), (F,F): p_o = .75, p_e = .5·.25 + .5·.75 = .5, κ = .5
    assert class_kappa(reviews, 7).value == pytest.approx(0.5)
    # Pass/fail: (f,f), (f,f), (p,p), (p,f): p_o = .75, p_e = .5·.75 + .5·.25 = .5, κ = .5
    assert verdict_kappa(reviews).value == pytest.approx(0.5)
    # "answered" on the three items both scored: (no,no), (no,yes), (yes,yes): p_o = 2/3,
    # p_e = (2/3)(1/3) + (1/3)(2/3) = 4/9, κ = (2/3 − 4/9) / (5/9) = .4
    scored = score_kappa(reviews, "answered")
    assert scored.n == 3 and scored.value == pytest.approx(0.4)
    assert differences(reviews[0]) == []
    assert differences(reviews[1]) == ["failure class", "score:answered"]
    assert differences(reviews[3]) == ["verdict", "failure class"]
