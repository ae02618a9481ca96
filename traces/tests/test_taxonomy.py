"""Axial-coding counts (pure)."""

import pytest

from traces.taxonomy import CodedNote, bars, chart_height, resolve_class, saturation, summarize


def seed_pile():
    """The seed's pile: 12 failures, 7 starting in retrieval, 9 with a faithful model."""
    notes = [CodedNote("fail", "retrieval", 1, True) for _ in range(5)]
    notes += [CodedNote("fail", "pruning", 2, True) for _ in range(2)]
    notes += [CodedNote("fail", "writing", 3, False) for _ in range(3)]
    notes += [CodedNote("fail", "billing", 4, True), CodedNote("fail", "routing", None, True)]
    notes += [CodedNote("pass"), CodedNote("defer")]
    return notes


def test_the_seed_headline_numbers():
    summary = summarize(seed_pile(), {})
    assert summary.failures == 12
    assert (summary.retrieval_failures, summary.generation_failures) == (7, 3)
    assert (summary.model_faithful, summary.model_faithful_known) == (9, 12)
    assert dict(summary.by_stage) == {"retrieval": 5, "pruning": 2, "writing": 3, "billing": 1, "routing": 1}
    assert summary.share(7) == pytest.approx(7 / 12)


def test_counts_follow_merges_including_chains():
    merged_into = {1: None, 2: 1, 3: None, 4: 2}
    summary = summarize(seed_pile(), merged_into)
    assert dict(summary.by_class) == {1: 8, 3: 3, None: 1}


@pytest.mark.parametrize("class_id, expected", [(None, None), (1, 1), (2, 1), (4, 1), (9, 9)])
def test_resolve_class(class_id, expected):
    assert resolve_class(class_id, {1: None, 2: 1, 4: 2}) == expected


def test_resolve_class_stops_on_a_cycle():
    assert resolve_class(1, {1: 2, 2: 1}) in (1, 2)


def test_bars_scale_to_the_longest():
    laid_out = bars([("retrieval", 7), ("writing", 3), ("other", 0)], max_width=140)
    assert [(b.width, b.y) for b in laid_out] == [(140, 0), (60, 22), (0, 44)]


def test_a_long_label_wraps_onto_more_lines_and_its_row_grows():
    name = "Fee quoted from the wrong plan's document"
    laid_out = bars([(name, 4), ("writing", 2)], wrap=20)
    assert " ".join(laid_out[0].lines) == name and all(len(line) <= 20 for line in laid_out[0].lines)
    assert len(laid_out[0].lines) == 3 and laid_out[0].height == 22 + 2 * 14
    assert laid_out[1].y == laid_out[0].height and laid_out[1].lines == ("writing",)
    assert chart_height(laid_out) == laid_out[0].height + 22


def test_saturation_counts_new_classes_in_the_last_window():
    assert saturation([True] * 5 + [False] * 20 + [True, True]) == (2, 20)
    assert saturation([]) == (0, 0)
