"""The gate on what a customer would notice: a failing must-pass case blocks, a baseline may not hold one,
a golden case answers on the date its figures were written for, and the decision holds on any date."""

import contextlib
import datetime as dt
import io
import json
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from core import clock
from evals.gate_rules import Decision, GatesFileError, evaluate, gates_from_mapping, parse_gates
from evals.golden import GoldenFileError, read_golden_rows

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def run_log(settings, tmp_path):
    """Keep every gate decision of the tests out of the repository's run log."""
    settings.GATE_RUN_LOG = str(tmp_path / "gate-runs.jsonl")


def run_gate(*args):
    """Run the command; return (exit code, stdout)."""
    out = io.StringIO()
    try:
        call_command("gate", *args, stdout=out)
    except SystemExit as exc:
        return exc.code, out.getvalue()
    return 0, out.getvalue()


def write(path, payload):
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload), encoding="utf-8")
    return str(path)


def delete_document(slug):
    from kb.editing import document_delete
    from kb.models import Document

    document_delete(document=Document.objects.get(slug=slug))


def retrieval_gates(settings, tmp_path):
    """The repository's release gates on retrieval alone (fast): same set, must-pass ids and thresholds."""
    text = (settings.BASE_DIR / "evals/fixtures/gates.toml").read_text(encoding="utf-8")
    assert "\nretrieval_only = false\n" in text
    return write(tmp_path / "gates.toml", text.replace("\nretrieval_only = false\n", "\nretrieval_only = true\n"))


def save_run(tmp_path, name="baseline.json"):
    out = io.StringIO()
    call_command("eval_run", "--golden", "sample", "--retrieval-only", "--json", stdout=out)
    return write(tmp_path / name, out.getvalue())


# --- a failing must-pass case always blocks ---------------------------------------------------------------------


def test_removing_a_must_pass_cases_document_blocks_the_gate(sample_kb, settings, tmp_path):
    gates = retrieval_gates(settings, tmp_path)
    code, out = run_gate("--gates", gates)
    assert code == 0, out
    baseline = save_run(tmp_path)

    delete_document("pago-transferencia-es")  # the one document g001 (must-pass) counts as a hit
    code, out = run_gate("--gates", gates, "--baseline", baseline)
    assert code == 1, out
    assert "  must_pass_failures: g001" in out
    assert out.rstrip().endswith("decision: block (exit 1)")


def test_a_must_pass_case_that_already_failed_in_the_baseline_still_blocks_and_the_baseline_is_refused(
        sample_kb, settings, tmp_path):
    gates = retrieval_gates(settings, tmp_path)
    assert run_gate("--gates", gates)[0] == 0
    delete_document("pago-transferencia-es")
    failing_baseline = save_run(tmp_path)  # g001 fails in it too: nothing is newly failing

    code, out = run_gate("--gates", gates, "--baseline", failing_baseline)
    assert code == 1, out
    assert "newly failing none" in out
    assert "  must_pass_failures: g001" in out
    assert "  baseline: refused: it holds failing must-pass case(s) g001" in out


def test_a_gates_file_cannot_let_a_failing_must_pass_case_through():
    loose = gates_from_mapping({"metrics": {"recall@5": {"block_below": 0.5},
                                            "must_pass_failures": {"iterate_above": 0, "optional": True}}},
                               source="loose.json")
    outcome = evaluate(loose, {"recall@5": 0.9, "must_pass_failures": ["g015"]})
    assert outcome.decision is Decision.BLOCK
    blocking = [r for r in outcome.results if r.decision is Decision.BLOCK]
    assert [r.gate.metric for r in blocking] == ["must_pass (set)"] and blocking[0].detail.startswith("g015 ")


def test_make_gate_baseline_refuses_to_write_a_run_with_a_failing_must_pass_case(sample_kb, settings, tmp_path):
    gates = retrieval_gates(settings, tmp_path)
    target = tmp_path / "written.json"
    code, out = run_gate("--gates", gates, "--save-run", str(target))
    assert code == 0 and f"to {target}" in out and json.loads(target.read_text())["per_case"]
    target.unlink()

    delete_document("pago-transferencia-es")
    with pytest.raises(CommandError, match=r"not written: must-pass case\(s\) g001 fail in run \d+"):
        run_gate("--gates", gates, "--save-run", str(target))
    assert not target.exists()


def test_the_committed_baseline_is_read_and_its_must_pass_failures_named(settings):
    from evals.gate_baseline import read_baseline_file

    base = read_baseline_file(settings.BASE_DIR / "evals/fixtures/gate_baseline.json")
    config = parse_gates((settings.BASE_DIR / "evals/fixtures/gates_ci.toml").read_text(encoding="utf-8"),
                         source="gates_ci.toml")
    # The gate refuses a baseline with any; make gate-baseline refuses to write one, so the committed one has none.
    assert base.must_pass_failing(listed=config.must_pass) == []
    outcome = evaluate(config, {"recall@5": 1.0, "mrr": 1.0, "must_pass_failures": [],
                                "corrected_pass_rate": {"value": 1.0, "lower": 1.0, "upper": 1.0}},
                       baseline_must_pass=["g015"])
    assert outcome.decision is Decision.BLOCK
    assert any(result.gate.metric == "baseline" and "g015" in result.detail for result in outcome.results)


# --- a gates file that names a metric no report has ----------------------------------------------------------------


def test_a_gates_file_naming_a_missing_metric_is_refused_naming_the_line():
    text = 'golden_set = "sample"\nk = 5\n\n[metrics."recall@5"]\nblock_below = 0.8\n\n[metrics.corected_pass_rate]\n' \
           'block_below = 0.7\n'
    with pytest.raises(GatesFileError) as caught:
        parse_gates(text, source="gates.toml")
    assert str(caught.value).startswith("gates.toml:7: metric 'corected_pass_rate' is not in any report")
    assert "did you mean 'corrected_pass_rate'?" in str(caught.value)
    with pytest.raises(GatesFileError, match=r"^g\.json:1: metric 'recall@10'"):
        parse_gates(json.dumps({"k": 5, "metrics": {"recall@10": {"block_below": 0.8}}}), source="g.json")


def test_the_command_refuses_such_a_file_before_running_anything(tmp_path):
    from evals.models import EvalRun

    gates = write(tmp_path / "gates.yaml", "golden_set: sample\nmetrics:\n  recall@5: {block_below: 0.8}\n"
                                           "  grounded_rate: {block_below: 0.9}\n")
    with pytest.raises(CommandError, match=r"gates\.yaml:4: metric 'grounded_rate'"):
        run_gate("--gates", gates)
    assert not EvalRun.objects.exists()


# --- as_of: the date a case's figures were written for --------------------------------------------------------------


@pytest.mark.parametrize("as_of", ["2026-02-30", "next tuesday", "2026-1-5", 20261020])
def test_an_impossible_as_of_is_refused_naming_the_line_and_nothing_is_imported(tmp_path, as_of):
    from evals.models import GoldenSet
    from evals.services import golden_import

    path = tmp_path / "golden.jsonl"
    path.write_text(json.dumps({"id": "a", "query": "q", "hits": ["x"]}) + "\n"
                    + json.dumps({"id": "b", "query": "q", "customer_id": "C-1010", "as_of": as_of}) + "\n",
                    encoding="utf-8")
    with pytest.raises(GoldenFileError, match=rf"^{re.escape(str(path))}:2: as_of must be a real date"):
        golden_import(name="dated", path=path)
    assert not GoldenSet.objects.filter(name="dated").exists()


def test_the_account_cases_carry_the_date_their_figures_were_worked_out_for(settings):
    rows = {row["id"]: row for row in read_golden_rows(settings.BASE_DIR / "evals/fixtures/golden.jsonl")}
    dated = sorted(case for case, row in rows.items() if row["as_of"])
    assert dated == [f"g{n:03d}" for n in range(60, 72)] + ["g077"]
    assert {rows[case]["as_of"] for case in dated} == {"2026-10-20"}


def account_gates(tmp_path):
    """A set of two dated account cases and a document case, through the whole answer path, judged offline."""
    from django.conf import settings

    sample = {row["id"]: row for row in read_golden_rows(settings.BASE_DIR / "evals/fixtures/golden.jsonl")}
    golden = tmp_path / "dated.jsonl"
    golden.write_text("".join(json.dumps(sample[case], ensure_ascii=False) + "\n"
                              for case in ("g011", "g062", "g069")), encoding="utf-8")
    return write(tmp_path / "gates.json", {"golden_set": "dated", "golden": str(golden), "retrieval_only": False,
                                           "metrics": {"recall@5": {"block_below": 0.5}}})


def test_a_dated_case_answers_on_its_date_and_the_decision_is_the_same_on_another_day(
        sample_kb, healthy_billing, tmp_path):
    from evals.models import EvalRun

    gates = account_gates(tmp_path)
    decisions = []
    for today in (None, dt.date(2027, 1, 31)):
        with clock.pinned(today) if today else contextlib.nullcontext():
            code, out = run_gate("--gates", gates)
        run = EvalRun.objects.latest("pk")
        items = {item.case_id: item for item in run.items.all()}
        decisions.append((code, {case: item.failures for case, item in items.items()}))
        overdue = items["g062"].evidence
        assert any("hoy es 2026-10-20" in row.get("text", "") for row in overdue), out
        assert items["g069"].outcome == "answered" and "Bs. 1.705,20" in items["g069"].answer
    assert decisions[0] == decisions[1]


def test_the_gate_says_when_the_set_in_the_database_is_not_the_golden_file_it_names(sample_kb, settings, tmp_path):
    from evals.models import GoldenCase
    from evals.services import golden_case_update, golden_set_bump

    gates = retrieval_gates(settings, tmp_path)
    code, out = run_gate("--gates", gates)
    assert code == 0 and "differs from" not in out
    case = GoldenCase.objects.get(golden_set__name="sample", case_id="g060")
    golden_case_update(case=case, user=None, query=case.query, facts=case.facts, hits=[], hard_negatives=[],
                       must_pass=False, clarification_expected=False, synthetic=False)  # its as_of stays
    GoldenCase.objects.filter(pk=case.pk).update(as_of=None)  # as a set imported before cases had dates
    golden_set_bump(golden_set=case.golden_set)
    code, out = run_gate("--gates", gates)
    assert ("golden set sample differs from evals/fixtures/golden.jsonl in 1 case(s) (g060): it runs as the "
            "database holds it") in out
