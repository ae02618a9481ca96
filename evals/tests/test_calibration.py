"""Calibration math on hand-computed cases, and a bootstrap that is reproducible and covers the truth."""

import random

import pytest

from evals.calibration import (
    CalibrationError,
    JudgeNoBetterThanChance,
    LabelPair,
    corrected_pass_rate,
    corrected_rate,
    judge_accuracy,
)


def pairs(*, tp=0, fn=0, tn=0, fp=0):
    """Return pairs: tp/fn = judge pass/fail on human passes, tn/fp = judge fail/pass on human fails."""
    return ([LabelPair(True, True)] * tp + [LabelPair(False, True)] * fn
            + [LabelPair(False, False)] * tn + [LabelPair(True, False)] * fp)


def verdicts(passes, fails):
    return [True] * passes + [False] * fails


def test_tpr_and_tnr_come_with_their_counts():
    accuracy = judge_accuracy(pairs(tp=36, fn=4, tn=24, fp=6))
    assert (accuracy.tpr, accuracy.tnr) == (pytest.approx(0.9), pytest.approx(0.8))
    counts = (accuracy.true_passes, accuracy.human_passes, accuracy.true_fails, accuracy.human_fails)
    assert counts == (36, 40, 24, 30)
    assert accuracy.warnings == []


def test_a_class_under_twenty_items_is_flagged():
    accuracy = judge_accuracy(pairs(tp=30, tn=5, fp=1))
    assert len(accuracy.warnings) == 1
    assert "only 6 human-labelled fail items" in accuracy.warnings[0]


@pytest.mark.parametrize(
    "observed, tpr, tnr, expected, clipped",
    [
        (0.6, 1.0, 1.0, 0.6, False),  # perfect judge: nothing to correct
        (0.6, 0.9, 0.8, (0.6 + 0.8 - 1) / 0.7, False),  # hand-computed: 0.4 / 0.7
        (1.0, 0.9, 0.8, 1.0, True),  # all judged items pass: 0.8 / 0.7 > 1 is clipped
        (0.0, 0.9, 0.8, 0.0, True),  # all judged items fail: −0.2 / 0.7 < 0 is clipped
        (0.15, 0.9, 0.8, 0.0, True),  # fewer passes than the false-pass rate alone explains
        (0.2, 0.9, 0.8, 0.0, False),  # exactly the false-pass rate: zero, not clipped
        (0.3, 0.56, 0.5, 0.0, True),  # barely better than chance: (0.3 − 0.5) / 0.06 clipped at 0
    ],
)
def test_corrected_rate(observed, tpr, tnr, expected, clipped):
    value, was_clipped = corrected_rate(observed, tpr, tnr)
    assert value == pytest.approx(expected)
    assert was_clipped is clipped


@pytest.mark.parametrize(
    "tpr, tnr",
    [
        (0.0, 0.0),  # inverted judge: fails what humans pass and passes what they fail
        (0.1, 0.3),  # worse than chance
        (0.5, 0.5),  # a coin
        (1.0, 0.0),  # always says pass
        (0.0, 1.0),  # always says fail
        (0.54, 0.5),  # J = 0.04, inside the refusal margin
    ],
)
def test_a_judge_no_better_than_chance_is_refused(tpr, tnr):
    with pytest.raises(JudgeNoBetterThanChance, match="no better than chance"):
        corrected_rate(0.5, tpr, tnr)


@pytest.mark.parametrize("tp, fn, tn, fp", [
    (12, 8, 9, 11),  # TPR 12/20 + TNR 9/20 − 1: 0.050000000000000044 in floating point, 0.05 on paper
    (1, 0, 1, 19),  # TPR 1/1 + TNR 1/20 − 1: the same rounding from other counts
])
def test_a_judge_exactly_at_the_chance_line_is_refused(tp, fn, tn, fp):
    accuracy = judge_accuracy(pairs(tp=tp, fn=fn, tn=tn, fp=fp))
    assert accuracy.youden > 0.05  # the rounding the refusal has to see through
    with pytest.raises(JudgeNoBetterThanChance, match="no better than chance"):
        corrected_pass_rate(pairs(tp=tp, fn=fn, tn=tn, fp=fp), verdicts(10, 10), seed=1, resamples=0)


def test_a_judge_just_above_the_chance_line_gets_a_number():
    # TPR 61/100 + TNR 45/100 − 1 = 0.06: above the line by a margin no rounding explains.
    result = corrected_pass_rate(pairs(tp=61, fn=39, tn=45, fp=55), verdicts(12, 8), seed=1, resamples=0)
    assert result.accuracy.youden == pytest.approx(0.06)
    assert result.corrected == pytest.approx((0.6 + 0.45 - 1) / 0.06)  # 0.833…


def test_inverted_judge_is_refused_from_labels():
    with pytest.raises(JudgeNoBetterThanChance):
        corrected_pass_rate(pairs(fn=30, fp=30), verdicts(10, 10), seed=1)


@pytest.mark.parametrize(
    "labels, missing",
    [(pairs(tp=20, fn=5), "fail"), (pairs(tn=20, fp=5), "pass"), ([], "pass")],
)
def test_all_human_labels_in_one_class_is_refused(labels, missing):
    with pytest.raises(CalibrationError, match=f"no human-labelled {missing}"):
        judge_accuracy(labels)


def test_no_judged_verdicts_is_refused():
    with pytest.raises(CalibrationError, match="no judged verdicts"):
        corrected_pass_rate(pairs(tp=20, tn=20), [], seed=1)


@pytest.mark.parametrize("passes, fails, expected", [(50, 0, 1.0), (0, 50, 0.0), (30, 20, 0.6)])
def test_perfect_judge_has_the_observed_rate_and_a_binomial_interval(passes, fails, expected):
    result = corrected_pass_rate(pairs(tp=40, tn=40), verdicts(passes, fails), seed=7, resamples=500)
    assert result.observed == pytest.approx(expected) and result.corrected == pytest.approx(expected)
    assert result.interval.lower <= expected <= result.interval.upper
    if passes == 0 or fails == 0:  # nothing varies in any resample
        assert result.interval.lower == result.interval.upper == expected


def test_all_pass_verdicts_are_clipped_to_one_with_a_flag():
    result = corrected_pass_rate(pairs(tp=36, fn=4, tn=24, fp=6), verdicts(100, 0), seed=3, resamples=300)
    assert result.corrected == 1.0 and result.clipped
    assert 0 <= result.interval.lower <= result.interval.upper <= 1


def test_same_seed_gives_the_same_interval_and_another_seed_another():
    labels, judged = pairs(tp=45, fn=5, tn=40, fp=10), verdicts(140, 60)
    first = corrected_pass_rate(labels, judged, seed=2024)
    again = corrected_pass_rate(labels, judged, seed=2024)
    other = corrected_pass_rate(labels, judged, seed=2025)
    assert first.interval == again.interval
    assert first.interval.resamples == 2000 and first.interval.confidence == 0.95
    assert (other.interval.lower, other.interval.upper) != (first.interval.lower, first.interval.upper)
    assert first.interval.lower < first.corrected < first.interval.upper


def test_the_interval_widens_with_the_calibration_uncertainty():
    """Resampling the pairs, not only the verdicts: fewer labels, same rates → a wider interval."""
    judged = verdicts(600, 400)
    few = corrected_pass_rate(pairs(tp=18, fn=2, tn=16, fp=4), judged, seed=11, resamples=1000)
    many = corrected_pass_rate(pairs(tp=180, fn=20, tn=160, fp=40), judged, seed=11, resamples=1000)
    assert few.corrected == pytest.approx(many.corrected)
    assert (few.interval.upper - few.interval.lower) > 1.5 * (many.interval.upper - many.interval.lower)


def simulate(rng, *, true_rate, tpr, tnr, labelled, judged_items):
    """Draw human truths, let a judge with the given error rates label them: pairs plus judged verdicts."""
    def judge(human_pass):
        return rng.random() < tpr if human_pass else rng.random() >= tnr

    truths = [rng.random() < true_rate for _ in range(labelled)]
    calibration = [LabelPair(judge(h), h) for h in truths]
    judged = [judge(rng.random() < true_rate) for _ in range(judged_items)]
    return calibration, judged


def test_the_interval_covers_the_true_rate_in_a_fixed_seed_simulation():
    rng = random.Random(8)
    calibration, judged = simulate(rng, true_rate=0.5, tpr=0.95, tnr=0.6, labelled=200, judged_items=800)
    result = corrected_pass_rate(calibration, judged, seed=8)
    assert result.observed == pytest.approx(0.5 * 0.95 + 0.5 * 0.4, abs=0.05)  # the biased raw rate, ≈ 0.675
    assert result.interval.lower <= 0.5 <= result.interval.upper
    assert not result.interval.lower <= result.observed <= result.interval.upper  # raw rate is off


def test_the_95_percent_interval_covers_the_truth_in_most_simulations():
    rng = random.Random(20261130)
    covered = 0
    for run in range(40):
        calibration, judged = simulate(rng, true_rate=0.6, tpr=0.85, tnr=0.75, labelled=80, judged_items=600)
        interval = corrected_pass_rate(calibration, judged, seed=run, resamples=400).interval
        covered += interval.lower <= 0.6 <= interval.upper
    # ≈ 38 of 40 expected (40 with this seed); resampling only the verdicts, TPR/TNR fixed, covers 25.
    assert covered >= 35


def test_report_shape_for_the_gate():
    report = corrected_pass_rate(pairs(tp=36, fn=4, tn=24, fp=6), verdicts(60, 40), seed=5,
                                 resamples=200).as_report()
    assert report["value"] == pytest.approx(0.5714, abs=1e-4)
    assert report["lower"] <= report["value"] <= report["upper"]
    assert (report["tpr"], report["tnr"], report["seed"], report["observed_pass_rate"]) == (0.9, 0.8, 5, 0.6)


def test_from_verdicts_rejects_other_labels():
    assert LabelPair.from_verdicts("pass", "FAIL") == LabelPair(True, False)
    with pytest.raises(CalibrationError):
        LabelPair.from_verdicts("maybe", "pass")
