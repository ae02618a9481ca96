"""Fixed-bucket histograms, percentiles read off them, and the two-proportion interval (no database)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traces.rollup_stats import (
    LATENCY_EDGES_MS,
    STAGES,
    Percentile,
    Proportion,
    bucket_of,
    difference_interval,
    histogram,
    merge,
    percentile,
    stage_histograms,
)

EDGES = (10, 20, 50)


@pytest.mark.parametrize("value, bucket", [(0, 0), (9.99, 0), (10, 1), (19, 1), (20, 2), (49.9, 2), (50, 3),
                                           (10_000, 3)])
def test_a_value_lands_in_the_bucket_whose_lower_edge_it_reaches(value, bucket):
    assert bucket_of(value, EDGES) == bucket


def test_merged_histograms_equal_the_histogram_of_all_values():
    hours = [[1, 5, 12], [25, 60], [], [19, 20, 21, 99]]
    assert merge((histogram(h, EDGES) for h in hours), EDGES) == histogram(sum(hours, []), EDGES)
    assert merge([None, [1, 0, 0, 2]], EDGES) == [1, 0, 0, 2]


def test_histograms_of_other_edges_do_not_merge():
    with pytest.raises(ValueError):
        merge([[1, 2]], EDGES)


@pytest.mark.parametrize("counts, q, expected", [
    ([0, 10, 0, 0], 0.5, 15.0),  # half of the bucket 10–20
    ([0, 10, 0, 0], 1.0, 20.0),
    ([10, 0, 0, 0], 0.5, 5.0),  # the first bucket starts at 0
    ([5, 0, 5, 0], 0.6, 26.0),  # 6th of 10 values: first of the five in 20–50
    ([0, 0, 0, 0], 0.5, None),
])
def test_percentile_interpolates_inside_its_bucket(counts, q, expected):
    assert percentile(counts, EDGES, q).value == expected


def test_a_percentile_in_the_overflow_bucket_says_so():
    result = percentile([1, 0, 0, 9], EDGES, 0.95)
    assert result == Percentile(50.0, above_last_edge=True)
    assert result.text("ms") == "over 50 ms" and Percentile(None).text("ms") == "—"


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=59_999, allow_nan=False), min_size=1, max_size=200),
       st.sampled_from([0.5, 0.9, 0.95, 0.99]))
def test_the_estimate_lies_in_the_same_bucket_as_the_exact_percentile(values, q):
    counts = histogram(values, LATENCY_EDGES_MS)
    exact = sorted(values)[max(0, math.ceil(q * len(values)) - 1)]
    estimate = percentile(counts, LATENCY_EDGES_MS, q).value
    bucket = bucket_of(exact, LATENCY_EDGES_MS)
    low = 0 if bucket == 0 else LATENCY_EDGES_MS[bucket - 1]
    assert low <= estimate <= LATENCY_EDGES_MS[bucket]


def test_newcombe_interval_matches_the_published_example():
    # Newcombe (1998), Statistics in Medicine 17:873, table II example (a): 56/70 vs 48/80 → 0.0524 to 0.3339.
    interval = difference_interval(Proportion(48, 80), Proportion(56, 70))
    assert interval.difference == pytest.approx(0.2)
    assert (round(interval.low, 4), round(interval.high, 4)) == (0.0524, 0.3339)
    assert interval.excludes_zero


def test_interval_near_zero_stays_in_range_and_includes_no_change_when_counts_are_tiny():
    interval = difference_interval(Proportion(0, 10), Proportion(1, 10))
    assert -1 <= interval.low < 0 < interval.high <= 1 and not interval.excludes_zero


def test_no_interval_without_trials():
    assert difference_interval(Proportion(0, 0), Proportion(3, 10)) is None


def test_the_flat_stage_array_splits_into_one_histogram_per_stage():
    width = len(LATENCY_EDGES_MS) + 1
    flat = [0] * (width * len(STAGES))
    flat[width * STAGES.index("write") + bucket_of(700, LATENCY_EDGES_MS)] = 3
    split = stage_histograms(flat)
    assert list(split) == list(STAGES) and sum(split["write"]) == 3 and sum(split["gate"]) == 0
    assert percentile(split["write"], LATENCY_EDGES_MS, 0.5).value == pytest.approx(625.0)  # in 500–750
    with pytest.raises(ValueError):
        stage_histograms(flat[:-1])
