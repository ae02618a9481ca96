"""A set's own gates, the pure part: validation wording, the stored shape, defaults from a gates file."""

import pytest

from evals.gate_rules import (
    ThresholdRow,
    default_set_gates,
    evaluate,
    gates_from_mapping,
    metric_label,
    set_gates_mapping,
    set_gates_problems,
    threshold_rows,
    with_set_gates,
)

FILE = gates_from_mapping({"golden_set": "sample", "golden": "g.jsonl", "must_pass": ["g018"],
                           "no_new_failures": True,
                           "metrics": {"recall@5": {"block_below": 0.8, "iterate_below": 0.9},
                                       "must_pass_failures": {"block_above": 0},
                                       "corrected_pass_rate": {"block_below": 0.7, "optional": True}}},
                          source="gates.toml")


def rate(iterate=None, block=None, metric="recall@5"):
    return ThresholdRow(metric=metric, higher_is_better=True, iterate=iterate, block=block)


def count(iterate=None, block=None):
    return ThresholdRow(metric="must_pass_failures", higher_is_better=False, iterate=iterate, block=block)


@pytest.mark.parametrize("rows, must_pass, problem", [
    ([rate(block=-0.1)], [], "Recall@5: thresholds are rates between 0 and 1; the block threshold -0.1 is not."),
    ([rate(iterate=1.01)], [], "Recall@5: thresholds are rates between 0 and 1; the iterate threshold 1.01 is not."),
    ([count(block=-1)], [], "Must-pass failures: thresholds are counts of 0 or more; the block threshold -1 is not."),
    ([rate(iterate=0.7, block=0.8)], [], "Recall@5: iterate below 0.7 must not be lower than block below 0.8"),
    ([count(iterate=3, block=1)], [], "Must-pass failures: iterate above 3 must not be higher than block above 1"),
    ([rate()], [], "Keep at least one threshold"),
    ([rate(block=0.5)], ["c1", "zz", "zz"], "Must-pass ids must be cases of this set; not in it: zz."),
])
def test_set_gates_problems_name_the_metric_and_the_rule(rows, must_pass, problem):
    problems = set_gates_problems(rows=rows, must_pass=must_pass, case_ids={"c1"})
    assert len(problems) == 1 and problems[0].startswith(problem)


@pytest.mark.parametrize("rows", [[rate(block=0), rate(iterate=1, block=1, metric="mrr")], [count(block=250)],
                                  [rate(iterate=0.9, block=0.8)]])
def test_rates_at_their_ends_and_large_counts_are_fine(rows):
    assert set_gates_problems(rows=rows, must_pass=["c1"], case_ids={"c1"}) == []


def test_the_stored_shape_round_trips_through_the_gates_file_reader():
    rows = threshold_rows(FILE)
    mapping = set_gates_mapping(rows=rows, must_pass=["g018"], no_new_failures=True, k=5)
    assert mapping["metrics"]["corrected_pass_rate"] == {"block_below": 0.7, "optional": True}
    assert threshold_rows(gates_from_mapping(mapping, source="set")) == rows
    dropped = set_gates_mapping(rows=[rows[0], count()], must_pass=[], no_new_failures=False, k=5)
    assert list(dropped["metrics"]) == ["recall@5"]  # a metric with no threshold is not gated


def test_a_gates_files_listed_must_pass_ids_hold_only_the_set_it_names():
    assert default_set_gates(FILE, set_name="sample")["must_pass"] == ["g018"]
    other = default_set_gates(FILE, set_name="billing")
    assert other["must_pass"] == [] and other["no_new_failures"] is True


def test_a_sets_own_gates_replace_the_files_thresholds_but_not_what_to_run():
    own = {"k": 5, "metrics": {"mrr": {"block_below": 0.9}}, "must_pass": [], "no_new_failures": False}
    config = with_set_gates(FILE, own, source="set's own")
    assert (config.golden_set, config.golden, config.must_pass, config.no_new_failures) == ("sample", "g.jsonl",
                                                                                          (), False)
    report = evaluate(config, {"recall@5": 0.1, "mrr": 0.5, "must_pass_failures": ["g018"]})
    # The set's own gates replace the thresholds; they cannot let a failing must-pass case through.
    assert [(r.gate.metric, r.decision.value) for r in report.results] == [("mrr", "block"),
                                                                           ("must_pass (set)", "block")]


def test_metric_labels_are_for_people():
    assert [metric_label(m) for m in ("recall@5", "mrr", "must_pass_failures", "corrected_pass_rate")] == [
        "Recall@5", "MRR", "Must-pass failures", "Corrected pass rate"]
