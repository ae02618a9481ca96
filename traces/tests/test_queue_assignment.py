"""Who reviews which item of a queue: one reviewer each, two for a seeded fraction, loads kept even (pure)."""

import pytest

from traces.queue_assignment import AssignmentError, assign_reviewers, doubled_count

TRACES = list(range(101, 141))  # 40 traces


def test_the_same_seed_assigns_the_same_way_and_another_seed_differently():
    first = assign_reviewers(trace_ids=TRACES, reviewers=[3, 1, 2], double_fraction=0.25, seed=7)
    again = assign_reviewers(trace_ids=TRACES, reviewers=[1, 2, 3], double_fraction=0.25, seed=7)
    other = assign_reviewers(trace_ids=TRACES, reviewers=[1, 2, 3], double_fraction=0.25, seed=8)
    assert first == again  # the order the reviewers were given in does not matter
    assert [a.reviewers for a in first] != [a.reviewers for a in other]


@pytest.mark.parametrize("fraction, doubles", [(0.0, 0), (0.25, 10), (0.5, 20), (1.0, 40), (0.33, 13)])
def test_the_fraction_decides_how_many_items_two_people_review(fraction, doubles):
    plan = assign_reviewers(trace_ids=TRACES, reviewers=[1, 2, 3], double_fraction=fraction, seed=1)
    assert sum(a.double for a in plan) == doubles == doubled_count(len(TRACES), fraction)
    assert all(len(set(a.reviewers)) == len(a.reviewers) for a in plan)  # never the same person twice
    assert [a.trace_id for a in plan] == TRACES and [a.position for a in plan] == list(range(1, 41))


def test_every_reviewer_gets_within_one_item_of_the_others():
    plan = assign_reviewers(trace_ids=TRACES, reviewers=[1, 2, 3], double_fraction=0.25, seed=5)
    load = {r: sum(r in a.reviewers for a in plan) for r in (1, 2, 3)}
    assert sum(load.values()) == 50 and max(load.values()) - min(load.values()) <= 1


def test_single_review_needs_one_reviewer_and_double_review_two():
    plan = assign_reviewers(trace_ids=TRACES, reviewers=[4], double_fraction=0, seed=1)
    assert {a.reviewers for a in plan} == {(4,)}
    with pytest.raises(AssignmentError, match="two reviewers"):
        assign_reviewers(trace_ids=TRACES, reviewers=[4], double_fraction=0.1, seed=1)
    with pytest.raises(AssignmentError, match="at least one reviewer"):
        assign_reviewers(trace_ids=TRACES, reviewers=[], double_fraction=0, seed=1)
    with pytest.raises(AssignmentError, match="between 0 and 100"):
        assign_reviewers(trace_ids=TRACES, reviewers=[1, 2], double_fraction=1.5, seed=1)
