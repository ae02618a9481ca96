"""Uniform, reproducible sampling (pure)."""

import math
from collections import Counter
from collections.abc import Sequence

import pytest

from traces.sampling import append_tagged, draw_uniform



# The statistic the uniformity tests check the sampler with.
def chi_square(observed: Sequence[int]) -> float:
    """Return Pearson's chi-square statistic of the counts against a uniform expectation."""
    total = sum(observed)
    expected = total / len(observed)
    return sum((count - expected) ** 2 / expected for count in observed)


def chi_square_critical(degrees: int, z: float = 3.09) -> float:
    """Return the upper critical value of chi-square (Wilson–Hilferty; z=3.09 is the 0.999 quantile)."""
    k = float(degrees)
    return k * (1 - 2 / (9 * k) + z * math.sqrt(2 / (9 * k))) ** 3


def test_the_same_seed_and_population_give_the_same_draw_whatever_the_order():
    population = list(range(1, 501))
    first = draw_uniform(population_ids=population, size=30, seed=42)
    second = draw_uniform(population_ids=list(reversed(population)), size=30, seed=42)
    assert first.trace_ids == second.trace_ids and first.population == 500


def test_a_different_seed_gives_a_different_draw():
    population = range(1, 501)
    assert draw_uniform(population_ids=population, size=30, seed=1).trace_ids != \
        draw_uniform(population_ids=population, size=30, seed=2).trace_ids


@pytest.mark.parametrize("size, expected", [(0, 0), (5, 5), (10, 10), (50, 10)])
def test_a_draw_has_no_duplicates_and_never_exceeds_the_population(size, expected):
    draw = draw_uniform(population_ids=[*range(10), 3, 3], size=size, seed=7)
    assert len(draw.trace_ids) == expected == len(set(draw.trace_ids))


def test_draws_are_uniform_chi_square_on_a_fixed_set_of_seeds():
    # given 40 ids and 4000 draws of 5 (fixed seeds 0..3999: deterministic, never flaky)
    population = list(range(100, 140))
    counts = Counter()
    for seed in range(4000):
        counts.update(draw_uniform(population_ids=population, size=5, seed=seed).trace_ids)
    observed = [counts[i] for i in population]
    # then every id is drawn about 500 times: chi-square below the 0.999 critical value for 39 degrees
    assert chi_square(observed) < chi_square_critical(len(population) - 1)


def test_the_chi_square_check_rejects_a_biased_sampler():
    # a sampler that favours the first ids must fail the same check (the test above can fail)
    observed = [600] * 10 + [466] * 30
    assert chi_square(observed) > chi_square_critical(39)


def test_critical_value_matches_the_table():
    assert chi_square_critical(39) == pytest.approx(72.05, abs=0.5)  # chi2.ppf(0.999, 39) = 72.055


def test_tagged_additions_skip_traces_already_in_the_session_and_repeats():
    assert append_tagged(existing=[1, 2, 3], candidates=[3, 4, 4, 5, 1]) == [4, 5]
