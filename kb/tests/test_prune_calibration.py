"""The prune's margin measured in the embedder's own scale (pure, no database)."""

import json

import pytest

from kb.prune_calibration import (
    LabelledSearch,
    SetMeasurement,
    calibrate,
    cut_figures,
    measure,
    read_calibrations,
    required_margin,
    rule_for,
    score_spread,
    write_calibration,
)
from kb.pruning import Candidate


def candidates(*scores, text=()):
    return [Candidate(i, score, matched_by_text=i in text) for i, score in enumerate(scores)]


def test_the_spread_is_top_one_minus_top_tenth():
    assert score_spread([0.90 - i / 100 for i in range(12)]) == pytest.approx(0.09)
    assert score_spread([0.9, 0.8]) is None  # too few candidates to say


@pytest.mark.parametrize("scores, relevant, text, expected", [
    ((0.90, 0.89, 0.88, 0.87, 0.86), (False, False, False, False, True), (), 0.04),
    ((0.90, 0.89, 0.88, 0.87, 0.86), (False, True, False, False, False), (), 0.0),  # min keep holds the 2nd
    ((0.90, 0.89, 0.88, 0.87, 0.80), (False, False, False, False, True), (4,), 0.0),  # an AND hit is immune
    # with a text hit above it, the backfill stops at one: the 2nd needs its own distance from the best
    ((0.90, 0.89, 0.70), (False, True, False), (2,), 0.01),
    ((0.90, 0.89), (False, False), (), None),  # nothing relevant to keep
])
def test_the_margin_a_question_needs_is_the_smallest_that_keeps_a_relevant_chunk(scores, relevant, text, expected):
    needed = required_margin(candidates(*scores, text=text), list(relevant), min_keep=2)
    assert needed == (None if expected is None else pytest.approx(expected))


def labelled(split, scores, docs, hits=("a",), text=()):
    return LabelledSearch(case_id="q", split=split, vector_cosines=[0.9 - i / 100 for i in range(10)],
                          fused=candidates(*scores, text=text), docs=list(docs), hits=frozenset(hits))


def test_the_margin_is_the_smallest_quarter_of_the_spread_that_loses_no_dev_question():
    searches = [labelled("dev", (0.90, 0.89, 0.88, 0.87, 0.865), "xyzwa"),  # needs 0.035
                labelled("dev", (0.90, 0.89, 0.88), "abc"),
                labelled("test", (0.90, 0.80, 0.70, 0.60, 0.50), "xyzwa")]  # test: never measured
    measured = measure(searches, min_keep=2)
    assert (measured.dev_queries, measured.spreads, measured.required) == (2, [0.09, 0.09], [0.035, 0.0])
    chosen = calibrate({"set": measured}, fingerprint="f" * 16, embedder="e5", measured_on="2026-11-20")
    # 0.035 / 0.09 = 0.39 spreads → the next quarter, 0.5
    assert (chosen.spread, chosen.multiplier, chosen.margin) == (0.09, 0.5, 0.045)


def test_sets_measured_apart_pool_into_one_margin():
    one = SetMeasurement(dev_queries=2, spreads=[0.02, 0.02], required=[0.0, 0.019])
    two = SetMeasurement(dev_queries=1, spreads=[0.04], required=[0.0])
    pooled = calibrate({"one": one, "two": two}, fingerprint="f", embedder="e5", measured_on="2026-11-20")
    assert (pooled.spread, pooled.multiplier, pooled.margin) == (0.02, 1.0, 0.02)
    with pytest.raises(ValueError, match="spread"):
        calibrate({"none": SetMeasurement(dev_queries=0)}, fingerprint="f", embedder="e5", measured_on="x")


def test_cut_figures_count_the_drops_and_score_the_kept_documents_once():
    searches = [labelled("dev", (0.90, 0.89, 0.85, 0.84, 0.83), "bbxya"),
                labelled("dev", (0.90, 0.89, 0.88), "xyz", hits=())]  # out of scope: drops only
    kept_all = cut_figures(searches, margin=0.12, min_keep=2)
    assert (kept_all.dropped, kept_all.retrieved, kept_all.recall, kept_all.mrr) == (0, 8, 1.0, 0.25)
    cut = cut_figures(searches, margin=0.02, min_keep=2)
    assert (cut.dropped, cut.retrieved, cut.questions, cut.recall, cut.mrr) == (3, 8, 1, 0.0, 0.0)


def test_calibrations_are_recorded_per_fingerprint_and_read_back(tmp_path):
    path = tmp_path / "calibrations.json"
    assert read_calibrations(path) == {}
    measured = SetMeasurement(dev_queries=1, spreads=[0.03], required=[0.01])
    first = calibrate({"golden": measured}, fingerprint="aaaa", embedder="e5", measured_on="2026-11-20")
    other = calibrate({"golden": measured}, fingerprint="bbbb", embedder="other", measured_on="2026-11-21")
    write_calibration(path, first)
    write_calibration(path, other)
    assert read_calibrations(path) == {"aaaa": first, "bbbb": other}
    assert json.loads(path.read_text())["aaaa"]["sets"]["golden"]["spreads"] == [0.03]


def test_an_embedder_without_a_calibration_prunes_by_the_seeds_rule_and_says_so():
    measured = SetMeasurement(dev_queries=1, spreads=[0.03], required=[0.025])
    recorded = {"aaaa": calibrate({"g": measured}, fingerprint="aaaa", embedder="e5", measured_on="2026-11-20")}
    calibrated = rule_for(recorded, fingerprint="aaaa", embedder="e5", fallback_margin=0.12)
    assert calibrated.calibrated and calibrated.margin == 0.03
    assert "0.0300 = 1.00 × this embedder's spread 0.0300 (calibrated for fingerprint aaaa" in calibrated.description
    seed = rule_for(recorded, fingerprint="cccc", embedder="e5", fallback_margin=0.12)
    assert (seed.calibrated, seed.margin) == (False, 0.12)
    assert seed.description == ("prune margin 0.12 (KB_PRUNE_MARGIN, the seed's rule): no calibration for "
                                 "embedder e5 cccc")
