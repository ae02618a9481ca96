"""The gate: gates files in three formats, go / iterate / block per metric, and the command's exit codes."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from traces.gates import Decision, GatesFileError, evaluate, gates_from_mapping, parse_gates

REPORT = {"recall@5": 0.915, "mrr": 0.827, "must_pass_failures": [], "hard_negative_wins": ["g7"]}


def config(metrics, **extra):
    return gates_from_mapping({"metrics": metrics, **extra}, source="gates.json")


def decide(metrics, report=REPORT):
    return evaluate(config(metrics), report)


@pytest.mark.parametrize(
    "thresholds, decision",
    [
        ({"block_below": 0.8, "iterate_below": 0.9}, Decision.GO),
        ({"block_below": 0.8, "iterate_below": 0.95}, Decision.ITERATE),
        ({"block_below": 0.92, "iterate_below": 0.95}, Decision.BLOCK),
        ({"block_below": 0.915}, Decision.GO),  # at the threshold is not below it
        ({"iterate_below": 0.95}, Decision.ITERATE),
    ],
)
def test_higher_is_better_thresholds(thresholds, decision):
    outcome = decide({"recall@5": thresholds})
    assert outcome.decision is decision
    assert outcome.results[0].value == 0.915 and outcome.results[0].judged_on == "value"


@pytest.mark.parametrize(
    "failures, decision",
    [([], Decision.GO), (["g001"], Decision.ITERATE), (["g001", "g002"], Decision.BLOCK)],
)
def test_lower_is_better_counts_a_list(failures, decision):
    outcome = decide({"must_pass_failures": {"block_above": 1, "iterate_above": 0}},
                     {**REPORT, "must_pass_failures": failures})
    assert outcome.decision is decision
    assert outcome.results[0].value == len(failures) and outcome.results[0].judged_on == "count"
    assert outcome.results[0].detail == ", ".join(failures)


def test_the_worst_metric_decides():
    outcome = decide({"recall@5": {"iterate_below": 0.95}, "mrr": {"block_below": 0.9},
                      "must_pass_failures": {"block_above": 0}})
    assert [r.decision for r in outcome.results] == [Decision.ITERATE, Decision.BLOCK, Decision.GO]
    assert outcome.decision is Decision.BLOCK and outcome.decision.exit_code == 1


CORRECTED = {"value": 0.88, "lower": 0.81, "upper": 0.93, "observed_pass_rate": 0.9}


@pytest.mark.parametrize(
    "judge_on, value, judged_on, decision",
    [("bound", 0.81, "lower bound", Decision.ITERATE), ("value", 0.88, "value", Decision.GO)],
)
def test_corrected_pass_rate_is_judged_on_its_lower_bound_by_default(judge_on, value, judged_on, decision):
    gate = {"block_below": 0.7, "iterate_below": 0.85, "judge_on": judge_on}
    outcome = decide({"corrected_pass_rate": gate},
                     {**REPORT, "corrected_pass_rate": CORRECTED})
    result = outcome.results[0]
    assert (result.value, result.judged_on, result.decision) == (value, judged_on, decision)


def test_a_lower_is_better_interval_is_judged_on_its_upper_bound():
    outcome = decide({"hallucination_rate": {"block_above": 0.1}},
                     {"hallucination_rate": {"value": 0.05, "lower": 0.02, "upper": 0.12}})
    assert (outcome.results[0].value, outcome.decision) == (0.12, Decision.BLOCK)


def test_a_point_estimate_without_interval_is_judged_as_is():
    outcome = decide({"corrected_pass_rate": {"block_below": 0.7}}, {"corrected_pass_rate": {"value": 0.75}})
    assert (outcome.results[0].value, outcome.results[0].judged_on, outcome.decision) == (0.75, "value",
                                                                                            Decision.GO)


@pytest.mark.parametrize(
    "optional, decision",
    [(False, Decision.BLOCK), (True, Decision.GO)],
)
def test_a_missing_metric_blocks_unless_optional(optional, decision):
    outcome = decide({"corrected_pass_rate": {"block_below": 0.7, "optional": optional}})
    assert outcome.results[0].judged_on == "missing"
    assert outcome.decision is decision


def test_a_refused_calibration_blocks_with_its_reason():
    outcome = decide({"corrected_pass_rate": {"block_below": 0.7, "optional": True}},
                     {"corrected_pass_rate": {"error": "the judge is no better than chance"}})
    assert outcome.decision is Decision.BLOCK
    assert outcome.results[0].detail == "the judge is no better than chance"


@pytest.mark.parametrize(
    "raw, problem",
    [
        ([], "top level must be an object"),
        ({"metrics": {}}, "non-empty mapping"),
        ({"metrics": {"mrr": {"block_below": 0.6}}, "treshold": 1}, "unknown key(s) treshold"),
        ({"metrics": {"mrr": {"block_bellow": 0.6}}}, "metric 'mrr': unknown key(s) block_bellow"),
        ({"metrics": {"mrr": {}}}, "metric 'mrr': needs at least one of"),
        ({"metrics": {"mrr": 0.6}}, "metric 'mrr': thresholds must be a mapping"),
        ({"metrics": {"mrr": {"block_below": "0.6"}}}, "block_below must be a number"),
        ({"metrics": {"mrr": {"block_below": True}}}, "block_below must be a number"),
        ({"metrics": {"mrr": {"block_below": 0.6, "block_above": 0.9}}}, "mixes *_below and *_above"),
        ({"metrics": {"mrr": {"block_below": 0.8, "iterate_below": 0.6}}}, "must be ≥ block_below"),
        ({"metrics": {"x": {"block_above": 0, "iterate_above": 2}}}, "must be ≤ block_above"),
        ({"metrics": {"mrr": {"block_below": 0.6, "judge_on": "mean"}}}, "judge_on must be"),
        ({"metrics": {"mrr": {"block_below": 0.6}}, "k": 0}, "'k' must be a positive integer"),
        ({"metrics": {"mrr": {"block_below": 0.6}}, "golden": 3}, "'golden' must be a file path"),
    ],
)
def test_malformed_gates_name_the_file_and_the_problem(raw, problem):
    with pytest.raises(GatesFileError) as caught:
        gates_from_mapping(raw, source="ci/gates.json")
    assert str(caught.value).startswith("ci/gates.json: ")
    assert problem in str(caught.value)


YAML = """
golden: kb/fixtures/golden.jsonl
metrics:
  recall@5: {block_below: 0.8, iterate_below: 0.9}
  must_pass_failures: {block_above: 0}
"""
TOML = """
golden = "kb/fixtures/golden.jsonl"
[metrics."recall@5"]
block_below = 0.8
iterate_below = 0.9
[metrics.must_pass_failures]
block_above = 0
"""
JSON = json.dumps({"golden": "kb/fixtures/golden.jsonl",
                   "metrics": {"recall@5": {"block_below": 0.8, "iterate_below": 0.9},
                               "must_pass_failures": {"block_above": 0}}})


@pytest.mark.parametrize("text, source",
                         [(YAML, "g.yaml"), (YAML, "g.yml"), (TOML, "g.toml"), (JSON, "g.json")])
def test_the_three_formats_read_the_same(text, source):
    parsed = parse_gates(text, source=source)
    assert parsed.golden == "kb/fixtures/golden.jsonl" and parsed.k == 5
    assert [(g.metric, g.block_below, g.iterate_below, g.block_above) for g in parsed.gates] == [
        ("recall@5", 0.8, 0.9, None), ("must_pass_failures", None, None, 0.0)]


@pytest.mark.parametrize(
    "text, source, kind",
    [("{not json", "g.json", "JSON"), ("metrics: [unclosed", "g.yaml", "YAML"),
     ("metrics = ", "g.toml", "TOML")],
)
def test_unparseable_files_say_which_format_failed(text, source, kind):
    with pytest.raises(GatesFileError, match=rf"^{source}: not valid {kind}"):
        parse_gates(text, source=source)


# --- the command ---------------------------------------------------------------------------------


def run_gate(*args):
    """Run the command; return (exit code, stdout)."""
    out = io.StringIO()
    try:
        call_command("gate", *args, stdout=out)
    except SystemExit as exc:
        return exc.code, out.getvalue()
    return 0, out.getvalue()


def write(tmp_path, name, payload):
    path = tmp_path / name
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload), encoding="utf-8")
    return str(path)


EXAMPLE = "traces/fixtures/gates.example.json"


@pytest.mark.parametrize(
    "report, code, decision",
    [
        (REPORT, 0, "go"),
        ({**REPORT, "mrr": 0.7}, 2, "iterate"),
        ({**REPORT, "must_pass_failures": ["g001"]}, 1, "block"),
        ({**REPORT, "recall@5": 0.5}, 1, "block"),
    ],
)
def test_command_exit_codes_from_a_report_file(tmp_path, settings, report, code, decision):
    exit_code, out = run_gate("--gates", str(settings.BASE_DIR / EXAMPLE), "--report",
                              write(tmp_path, "report.json", report))
    assert exit_code == code
    assert out.rstrip().endswith(f"decision: {decision} (exit {code})")


def test_command_prints_a_table_and_the_failing_must_pass_ids(tmp_path, settings):
    code, out = run_gate("--gates", str(settings.BASE_DIR / EXAMPLE), "--report",
                         write(tmp_path, "report.json", {**REPORT, "must_pass_failures": ["g001", "g014"]}))
    lines = out.splitlines()
    assert lines[1].split() == ["metric", "value", "judged", "on", "iterate", "if", "block", "if", "verdict"]
    assert lines[2].split() == ["recall@5", "0.915", "value", "<", "0.9", "<", "0.8", "go"]
    assert lines[4].split() == ["must_pass_failures", "2", "count", "—", ">", "0", "block"]
    assert lines[5].split() == ["corrected_pass_rate", "—", "missing", "<", "0.85", "<", "0.7", "skipped"]
    assert "  must_pass_failures: g001, g014" in lines
    assert code == 1


def test_command_merges_a_calibration_and_judges_its_lower_bound(tmp_path, settings):
    calibration = write(tmp_path, "calibration.json", {"corrected_pass_rate": CORRECTED})
    code, out = run_gate("--gates", str(settings.BASE_DIR / EXAMPLE), "--report",
                         write(tmp_path, "report.json", REPORT), "--calibration", calibration)
    assert code == 2  # point 0.88 would go; the lower bound 0.81 is under iterate_below 0.85
    assert "corrected_pass_rate  0.81" in out and "lower bound" in out
    assert "point 0.88, interval [0.81, 0.93]" in out


@pytest.mark.parametrize(
    "gates, problem",
    [
        ("{\"metrics\": {\"mrr\": {\"block_bellow\": 0.6}}}", "metric 'mrr': unknown key(s) block_bellow"),
        ("{oops", "not valid JSON"),
    ],
)
def test_command_rejects_a_malformed_gates_file_naming_it(tmp_path, gates, problem):
    path = write(tmp_path, "gates.json", gates)
    with pytest.raises(CommandError) as caught:
        run_gate("--gates", path, "--report", write(tmp_path, "report.json", REPORT))
    assert str(caught.value).startswith(f"{path}: ") and problem in str(caught.value)


def test_command_rejects_a_missing_gates_file_and_a_bad_report(tmp_path, settings):
    with pytest.raises(CommandError, match="no such gates file"):
        run_gate("--gates", str(tmp_path / "absent.json"))
    with pytest.raises(CommandError, match="the report is not valid JSON"):
        run_gate("--gates", str(settings.BASE_DIR / EXAMPLE), "--report", write(tmp_path, "r.json", "nope"))


def test_command_without_report_needs_a_golden_file(tmp_path):
    path = write(tmp_path, "gates.json", {"metrics": {"mrr": {"block_below": 0.6}}})
    with pytest.raises(CommandError, match="names no 'golden' file"):
        run_gate("--gates", path)


# --- against the real sample knowledge base -------------------------------------------------------


@pytest.mark.django_db
def test_the_example_gates_pass_on_the_sample_kb(sample_kb, settings):
    code, out = run_gate("--gates", str(settings.BASE_DIR / EXAMPLE))
    assert code == 0, out
    assert "report: eval_retrieval on kb/fixtures/golden.jsonl" in out
    assert out.rstrip().endswith("decision: go (exit 0)")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "metrics, code",
    [
        ({"recall@5": {"block_below": 0.5, "iterate_below": 0.99},
          "must_pass_failures": {"block_above": 0}}, 2),
        ({"mrr": {"block_below": 0.99}, "recall@5": {"iterate_below": 0.99}}, 1),
        ({"hard_negative_wins": {"block_above": -1}}, 1),  # any count, even zero, is above −1
    ],
)
def test_stricter_gates_iterate_or_block_on_the_sample_kb(sample_kb, settings, tmp_path, metrics, code):
    golden = str(settings.BASE_DIR / "kb/fixtures/golden.jsonl")
    gates = write(tmp_path, "gates.yaml", json.dumps({"golden": golden, "metrics": metrics}))  # JSON is YAML
    exit_code, out = run_gate("--gates", gates)
    assert exit_code == code, out
