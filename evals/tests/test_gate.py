"""The gate: gates files in three formats, go / iterate / block per metric, and the command's exit codes."""

import dataclasses
import io
import json
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evals.gate_rules import Decision, GatesFileError, evaluate, gates_from_mapping, parse_gates

REPORT = {"recall@5": 0.915, "mrr": 0.827, "must_pass_failures": [], "hard_negative_wins": ["g7"]}


@pytest.fixture(autouse=True)
def run_log(settings, tmp_path):
    """Keep every gate decision of the tests out of the repository's run log."""
    settings.GATE_RUN_LOG = str(tmp_path / "var" / "gate-runs.jsonl")
    return tmp_path / "var" / "gate-runs.jsonl"


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
    # (hard-negative wins: a failing must-pass case blocks whatever its gate says — see below)
    outcome = decide({"hard_negative_wins": {"block_above": 1, "iterate_above": 0}},
                     {**REPORT, "hard_negative_wins": failures})
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


@pytest.mark.parametrize(
    "optional, decision",
    [(False, Decision.BLOCK), (True, Decision.GO)],
)
def test_a_rate_nobody_has_labelled_yet_is_skipped_only_when_optional(optional, decision):
    uncalibrated = {"error": "no human-labelled pass among 0 calibration items", "human_passes": 0,
                    "human_fails": 0}
    outcome = decide({"corrected_pass_rate": {"block_below": 0.7, "optional": optional}},
                     {"corrected_pass_rate": uncalibrated})
    assert outcome.decision is decision
    assert outcome.results[0].detail == "not calibrated yet: no human-labelled pass among 0 calibration items"


def test_a_refused_calibration_blocks_with_its_reason():
    outcome = decide({"corrected_pass_rate": {"block_below": 0.7, "optional": True}},
                     {"corrected_pass_rate": {"error": "the judge is no better than chance", "human_passes": 6,
                                              "human_fails": 4}})
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
golden: evals/fixtures/golden.jsonl
metrics:
  recall@5: {block_below: 0.8, iterate_below: 0.9}
  must_pass_failures: {block_above: 0}
"""
TOML = """
golden = "evals/fixtures/golden.jsonl"
[metrics."recall@5"]
block_below = 0.8
iterate_below = 0.9
[metrics.must_pass_failures]
block_above = 0
"""
JSON = json.dumps({"golden": "evals/fixtures/golden.jsonl",
                   "metrics": {"recall@5": {"block_below": 0.8, "iterate_below": 0.9},
                               "must_pass_failures": {"block_above": 0}}})


@pytest.mark.parametrize("text, source",
                         [(YAML, "g.yaml"), (YAML, "g.yml"), (TOML, "g.toml"), (JSON, "g.json")])
def test_the_three_formats_read_the_same(text, source):
    parsed = parse_gates(text, source=source)
    assert parsed.golden == "evals/fixtures/golden.jsonl" and parsed.k == 5
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


EXAMPLE = "evals/fixtures/gates.example.json"


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
    assert "report: eval_retrieval on evals/fixtures/golden.jsonl" in out
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
    golden = str(settings.BASE_DIR / "evals/fixtures/golden.jsonl")
    gates = write(tmp_path, "gates.yaml", json.dumps({"golden": golden, "metrics": metrics}))  # JSON is YAML
    exit_code, out = run_gate("--gates", gates)
    assert exit_code == code, out


# --- golden sets, listed must-pass cases, baselines and the run log ---------------------------------

SET_TOML = """
golden_set = "sample"
golden = "evals/fixtures/golden.jsonl"
retrieval_only = true
must_pass = ["g001", "g002"]
no_new_failures = true
[metrics."recall@5"]
block_below = 0.8
"""


def test_toml_reads_the_set_the_listed_must_pass_ids_and_the_baseline_rule():
    parsed = parse_gates(SET_TOML, source="g.toml")
    assert (parsed.golden_set, parsed.golden, parsed.retrieval_only) == ("sample", "evals/fixtures/golden.jsonl", True)
    assert (parsed.must_pass, parsed.no_new_failures) == (("g001", "g002"), True)
    assert parse_gates(TOML, source="g.toml").retrieval_only is None  # decided by the model settings


@pytest.mark.parametrize(
    "extra, problem",
    [
        ({"golden_set": ""}, "'golden_set' must be the name of a golden set"),
        ({"must_pass": "g001"}, "'must_pass' must be a list of case ids"),
        ({"must_pass": ["g001", 2]}, "'must_pass' must be a list of case ids"),
        ({"no_new_failures": "yes"}, "'no_new_failures' must be true or false"),
        ({"retrieval_only": 1}, "'retrieval_only' must be true or false"),
    ],
)
def test_malformed_set_keys_are_named(extra, problem):
    with pytest.raises(GatesFileError, match=re.escape(problem)):
        config({"mrr": {"block_below": 0.6}}, **extra)


@pytest.mark.parametrize(
    "listed, decision, detail",
    [
        (["g1"], Decision.GO, ""),
        (["g1", "g2"], Decision.BLOCK, "g2"),
        (["g9"], Decision.BLOCK, "g9 (not in the run)"),
    ],
)
def test_listed_must_pass_ids_block_when_they_fail_or_are_missing(listed, decision, detail):
    outcome = evaluate(config({"mrr": {"block_below": 0.6}}, must_pass=listed),
                       {**REPORT, "failing": ["g2", "g3"], "case_ids": ["g1", "g2", "g3"]})
    [_, listed_result] = outcome.results
    assert (listed_result.gate.metric, listed_result.decision, listed_result.detail) == (
        "must_pass (listed)", decision, detail)
    assert outcome.decision is decision


@pytest.mark.parametrize(
    "newly_failing, no_new_failures, decision, judged_on",
    [
        (None, True, Decision.SKIPPED, "missing"),  # no baseline: reported, not blocking
        ([], True, Decision.GO, "count"),
        (["g3", "g7"], True, Decision.BLOCK, "count"),
        (["g3"], False, Decision.BLOCK, "count"),  # a baseline was asked for: its new failures block
    ],
)
def test_newly_failing_cases_block(newly_failing, no_new_failures, decision, judged_on):
    outcome = evaluate(config({"mrr": {"block_below": 0.6}}, no_new_failures=no_new_failures), REPORT,
                       newly_failing=newly_failing)
    result = outcome.results[-1]
    assert (result.gate.metric, result.decision, result.judged_on) == ("newly_failing", decision, judged_on)
    assert result.detail == (", ".join(newly_failing) if newly_failing else
                             "" if newly_failing == [] else "no baseline run to compare with")


def log_lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.django_db
def test_the_sample_gates_toml_goes_on_retrieval_and_logs_the_decision(sample_kb, settings, run_log, tmp_path):
    from evals.models import EvalRun, GoldenSet

    # The repository's gates on retrieval alone (the whole answer path is what `make gate` and CI run).
    text = (settings.BASE_DIR / "evals/fixtures/gates.toml").read_text(encoding="utf-8")
    assert "\nretrieval_only = false\n" in text
    gates = tmp_path / "gates.toml"
    gates.write_text(text.replace("\nretrieval_only = false\n", "\nretrieval_only = true\n"), encoding="utf-8")
    code, out = run_gate("--gates", str(gates))
    assert code == 0, out
    run = EvalRun.objects.get()
    assert run.retrieval_only and run.golden_set == GoldenSet.objects.get(name="sample")
    assert "imported evals/fixtures/golden.jsonl as golden set sample v1 (77 cases)" in out
    assert f"report: eval run {run.pk} of sample" in out
    assert out.rstrip().endswith("decision: go (exit 0)")
    [line] = log_lines(run_log)
    assert (line["decision"], line["exit_code"], line["run"], line["baseline"]) == ("go", 0, run.pk, None)
    assert line["dataset"] == {"golden_set": "sample", "version": 1} and line["retrieval_only"] is True
    assert line["index"]["version"] == run.index_version and line["index"]["embedding_model"]
    assert line["recall@5"] == run.metrics["recall@5"] >= 0.9 and line["mrr"] == run.metrics["mrr"]
    assert line["must_pass_failures"] == [] and line["newly_failing"] is None and line["judge"] is None
    assert line["timestamp"].endswith("+00:00")


TINY = [
    {"id": "reconnect", "query": "cuanto cobran por reconexion de fibra", "hits": ["reconexion-fibra-es"]},
    {"id": "zelle", "query": "I sent a zelle to 3055550147 on saturday, when will it show as paid?",
     "hits": ["zelle-payments-en"]},
]


def tiny_gates(tmp_path, **extra):
    golden = tmp_path / "tiny.jsonl"
    golden.write_text("\n".join(json.dumps(row) for row in TINY), encoding="utf-8")
    gates = {"golden_set": "tiny", "golden": str(golden), "retrieval_only": True, "no_new_failures": True,
             "metrics": {"recall@5": {"block_below": 0.4, "iterate_below": 0.9}}, **extra}
    return write(tmp_path, "gates.json", gates)


def break_case(case_id, hits):
    from evals.models import GoldenCase
    from evals.services import golden_case_update

    case = GoldenCase.objects.get(case_id=case_id)
    golden_case_update(case=case, user=None, query=case.query, facts=[], hits=hits, hard_negatives=[],
                       must_pass=False, clarification_expected=False, synthetic=False)


@pytest.mark.django_db
def test_a_case_that_newly_fails_against_the_baseline_blocks_with_its_id(sample_kb, tmp_path, run_log):
    from evals.models import EvalRun

    gates = tiny_gates(tmp_path)
    code, out = run_gate("--gates", gates, "--baseline", "last")
    assert code == 0, out
    assert "no earlier finished run of tiny; nothing to compare with" in out
    [row] = [line for line in out.splitlines() if line.startswith("newly_failing ")]
    assert row.split() == ["newly_failing", "—", "missing", "—", ">", "0", "skipped"]
    base = EvalRun.objects.get()

    break_case("zelle", ["pago-movil-es"])  # recall 0.5: iterate on thresholds, but a case newly fails
    code, out = run_gate("--gates", gates, "--baseline", "last")
    assert code == 1, out
    assert "  newly_failing: zelle" in out
    assert f"baseline run {base.pk}: newly failing zelle · newly passing none" in out
    assert out.rstrip().endswith("decision: block (exit 1)")
    head = EvalRun.objects.latest("pk")
    first, second = log_lines(run_log)
    assert (first["decision"], first["newly_failing"]) == ("go", None)
    assert (second["decision"], second["run"], second["baseline"]) == ("block", head.pk, base.pk)
    assert second["newly_failing"] == ["zelle"] and second["dataset"] == {"golden_set": "tiny", "version": 2}
    assert second["gates_failed"] == ["recall@5", "newly_failing"]

    # The same run judged again, against the explicit base run, without running anything.
    code, out = run_gate("--gates", gates, "--run", str(head.pk), "--baseline", str(base.pk))
    assert code == 1 and "  newly_failing: zelle" in out
    assert EvalRun.objects.count() == 2 and len(log_lines(run_log)) == 3


@pytest.mark.django_db
def test_a_missed_threshold_without_new_failures_iterates(sample_kb, tmp_path):
    gates = tiny_gates(tmp_path)
    assert run_gate("--gates", gates)[0] == 0
    break_case("zelle", ["pago-movil-es"])
    code, out = run_gate("--gates", gates)  # no baseline: the new failure is not known to be new
    assert code == 2, out
    assert "no baseline run to compare with" in out


@pytest.mark.django_db
def test_a_listed_must_pass_case_that_fails_blocks(sample_kb, tmp_path):
    code, out = run_gate("--gates", tiny_gates(tmp_path, must_pass=["reconnect"]))
    assert code == 0, out
    break_case("reconnect", ["pago-movil-es"])
    code, out = run_gate("--gates", tiny_gates(tmp_path, must_pass=["reconnect", "ghost"]))
    assert code == 1
    assert "  must_pass (listed): reconnect, ghost (not in the run)" in out


@pytest.mark.django_db
def test_baseline_misuse_is_a_clear_error(sample_kb, tmp_path, settings):
    with pytest.raises(CommandError, match="cannot be used with --report"):
        run_gate("--gates", str(settings.BASE_DIR / EXAMPLE), "--report", write(tmp_path, "r.json", REPORT),
                 "--baseline", "last")
    with pytest.raises(CommandError, match="no eval run 999999"):
        run_gate("--gates", tiny_gates(tmp_path), "--baseline", "999999")
    with pytest.raises(CommandError, match="--run: no eval run 424242"):
        run_gate("--gates", tiny_gates(tmp_path), "--run", "424242")


# --- a baseline run file (what CI compares with) ----------------------------------------------------------------

def run_file(tmp_path, name="baseline.json"):
    """Run the tiny set once and save `eval_run --json` as a baseline file, as the README says to."""
    out = io.StringIO()
    call_command("eval_run", "--golden", "tiny", "--retrieval-only", "--json", stdout=out)
    path = tmp_path / name
    path.write_text(out.getvalue(), encoding="utf-8")
    return str(path)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "change, before_baseline, extra, code, decision",
    [
        (None, False, {}, 0, "go"),  # nothing moved: go
        ("zelle", False, {}, 1, "block"),  # a case that passed in the baseline fails now: block, whatever else
        ("reconnect", True, {"must_pass": ["reconnect"]}, 1, "block"),  # a must-pass failure, even a known one
        ("zelle", True, {}, 2, "iterate"),  # failing in the baseline too: only the recall threshold is missed
    ],
)
def test_the_gate_against_a_baseline_file(sample_kb, tmp_path, change, before_baseline, extra, code, decision):
    from evals.models import GateDecision

    assert run_gate("--gates", tiny_gates(tmp_path))[0] == 0  # imports the set
    if change and before_baseline:
        break_case(change, ["pago-movil-es"])
    baseline = run_file(tmp_path)
    if change and not before_baseline:
        break_case(change, ["pago-movil-es"])
    got, out = run_gate("--gates", tiny_gates(tmp_path, **extra), "--baseline", baseline)
    assert got == code, out
    assert out.rstrip().endswith(f"decision: {decision} (exit {code})")
    stored = GateDecision.objects.first()
    assert (stored.decision, stored.baseline, stored.golden_set.name) == (decision, f"file {baseline}", "tiny")
    if change == "zelle" and not before_baseline:
        assert f"baseline file {baseline}: newly failing zelle · newly passing none" in out
        assert stored.newly_failing == ["zelle"]
        assert [row["metric"] for row in stored.failed_gates] == ["recall@5", "newly_failing"]


@pytest.mark.django_db
def test_a_baseline_from_another_build_of_the_embedder_reports_flipped_cases_without_blocking(sample_kb, tmp_path):
    assert run_gate("--gates", tiny_gates(tmp_path))[0] == 0
    baseline = run_file(tmp_path)
    payload = json.loads(open(baseline, encoding="utf-8").read())
    assert len(payload["embedder_fingerprint"]) == 16  # the run file says how its vectors were made
    break_case("zelle", ["pago-movil-es"])
    got, out = run_gate("--gates", tiny_gates(tmp_path), "--baseline", baseline)
    assert got == 1 and "another build" not in out  # same vectors: a case that flipped blocks
    other = write(tmp_path, "other.json", payload | {"embedder_fingerprint": "0" * 16})
    got, out = run_gate("--gates", tiny_gates(tmp_path), "--baseline", other)
    assert got == 2, out  # reported (and recall@5 still judged), not blocking
    assert "was made by another build of the embedder" in out and "zelle (the baseline's vectors" in out


@pytest.mark.django_db
def test_a_baseline_file_that_is_not_a_run_is_refused_before_anything_runs(sample_kb, tmp_path):
    from evals.models import EvalRun

    with pytest.raises(CommandError, match="is none of them"):
        run_gate("--gates", tiny_gates(tmp_path), "--baseline", str(tmp_path / "missing.json"))
    with pytest.raises(CommandError, match="needs 'per_case'"):
        run_gate("--gates", tiny_gates(tmp_path), "--baseline", write(tmp_path, "r.json", REPORT))
    assert not EvalRun.objects.exists()


@pytest.mark.django_db
def test_a_baseline_file_of_another_set_is_refused(sample_kb, tmp_path):
    assert run_gate("--gates", tiny_gates(tmp_path))[0] == 0
    other = json.loads(open(run_file(tmp_path), encoding="utf-8").read()) | {"golden_set": "sample"}
    with pytest.raises(CommandError, match="is a run of golden set 'sample', not 'tiny'"):
        run_gate("--gates", tiny_gates(tmp_path), "--baseline", write(tmp_path, "other.json", other))


@pytest.mark.django_db
def test_the_run_and_set_pages_show_the_last_gate_decision(sample_kb, tmp_path, client, make_staff):
    from evals.models import GateDecision

    assert run_gate("--gates", tiny_gates(tmp_path))[0] == 0
    break_case("zelle", ["pago-movil-es"])
    assert run_gate("--gates", tiny_gates(tmp_path))[0] == 2
    decision = GateDecision.objects.first()
    client.force_login(make_staff("ana", "analyst"))
    for url in (f"/traces/runs/{decision.run_id}/", f"/traces/golden/{decision.golden_set_id}/"):
        page = client.get(url).content.decode()
        assert "Release gate" in page and ">Iterate</strong>" in page, url
        assert "Iterate on recall@5: 0.5" in re.sub(r"<[^>]+>", "", page), url


def test_the_ci_gates_are_the_release_gates_and_require_the_corrected_rate(settings):
    """gates_ci.toml follows gates.toml — must-pass cases and labels included — with one difference: the
    judge-corrected pass rate, calibrated on the committed human labels, is required (never skipped)."""
    release = parse_gates((settings.BASE_DIR / "evals/fixtures/gates.toml").read_text(encoding="utf-8"),
                          source="gates.toml")
    ci = parse_gates((settings.BASE_DIR / "evals/fixtures/gates_ci.toml").read_text(encoding="utf-8"),
                     source="gates_ci.toml")
    relaxed = [dataclasses.replace(gate, optional=False) for gate in release.gates]
    assert ci.gates == relaxed
    assert (ci.golden_set, ci.golden, ci.k, ci.retrieval_only, ci.must_pass, ci.no_new_failures, ci.labels) == (
        release.golden_set, release.golden, release.k, release.retrieval_only, release.must_pass,
        release.no_new_failures, release.labels)
    corrected = next(gate for gate in ci.gates if gate.metric == "corrected_pass_rate")
    assert not corrected.optional and corrected.judge_on == "bound"
    assert ci.retrieval_only is False and ci.no_new_failures and ci.labels == "evals/fixtures/judge_labels.jsonl"
