"""The committed human labels of answers: the file's checks, its import, the judge that reads bills measured
on them, and seed 004's hygiene (prompt examples from train only; every read of the test split recorded)."""

import hashlib
import io
import json
import re
import shutil
from collections import Counter
from html import unescape
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from evals.gate_rules import parse_gates
from evals.human_labels import calibration_report, human_labels_import, judge_labelled
from evals.judge import PROMPTS_DIR, JudgePromptError, judge_prompt_versions, load_judge_prompt
from evals.judgement import JudgeEvidence
from evals.label_file import LabelFileError, label_key, read_label_file, split_for
from evals.models import EvalRun, HumanLabel, JudgeTestRead
from evals.offline_judge import LexicalBillJudge, LexicalJudge
from evals.services import golden_import

pytestmark = pytest.mark.django_db

LABELS = Path(settings.BASE_DIR) / "evals" / "fixtures" / "judge_labels.jsonl"
GOLDEN = Path(settings.BASE_DIR) / "evals" / "fixtures" / "golden.jsonl"
SAMPLE_IDS = {json.loads(line)["id"] for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()}


def committed():
    return read_label_file(LABELS, case_ids=SAMPLE_IDS)


# --- the committed file ----------------------------------------------------------------------------------------


def test_the_committed_labels_hold_both_classes_in_every_split():
    rows = committed()
    cells = Counter((split_for(row.item_key), row.label) for row in rows)
    assert len(rows) >= 60
    for split in ("train", "dev", "test"):
        assert cells[(split, "pass")] >= 10 and cells[(split, "fail")] >= 10, cells
    # Answers of the answer path and deliberately wrong variants, each marked as what it is.
    origins = Counter(row.origin for row in rows)
    assert origins["answer"] >= 50 and all(row.variant for row in rows if row.origin == "variant")
    assert all(row.label == "fail" for row in rows if row.origin == "variant")
    assert all(row.note for row in rows)


def test_the_split_of_a_label_is_the_hash_of_its_id_in_any_database():
    assert [split_for(label_key(label_id)) for label_id in ("g060", "g060~cause", "g017")] == [
        split_for(f"label:{label_id}") for label_id in ("g060", "g060~cause", "g017")]
    shares = Counter(split_for(label_key(f"x{n}")) for n in range(5000))
    assert abs(shares["train"] / 5000 - 0.2) < 0.02 and abs(shares["dev"] / 5000 - 0.4) < 0.02


# --- a bad file: an error naming the line, and nothing imported ------------------------------------------------


def sheet(tmp_path, rows):
    path = tmp_path / "labels.jsonl"
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row, ensure_ascii=False)) + "\n"
                            for row in rows), encoding="utf-8")
    return path


GOOD = {"id": "g011", "case": "g011", "question": "cuanto cobran por reconexion de fibra",
        "answer": "La reconexión cuesta Bs. 350,00 más IVA [E1].", "label": "pass", "note": "in E1",
        "evidence": [{"id": "E1", "text": "Reactivar una línea cuesta Bs. 350,00 más IVA."}]}


@pytest.mark.parametrize("second, problem", [
    ({**GOOD, "case": "g999", "id": "x"}, "labels.jsonl:2: unknown case id 'g999'"),
    ({**GOOD, "answer": "otra respuesta [E1]."}, "labels.jsonl:2: duplicate label id 'g011' (first on line 1)"),
    ({**GOOD, "id": "again"}, "labels.jsonl:2: this answer to g011 is already labelled on line 1"),
    ({**GOOD, "id": "y", "answer": "otra", "label": "maybe"}, "labels.jsonl:2: 'label' must be pass or fail"),
    ({**GOOD, "id": "y", "answer": "otra", "label": None}, "labels.jsonl:2: 'label' must be pass or fail"),
    ({**GOOD, "id": "y", "answer": "otra", "origin": "variant"}, "labels.jsonl:2: a variant or a written answer says"),
    ({**GOOD, "id": "y", "answer": "otra", "origin": "written"}, "labels.jsonl:2: a variant or a written answer says"),
    ({**GOOD, "id": "y", "answer": "otra", "origin": "model"}, "labels.jsonl:2: 'origin' must be one of"),
    ({"id": "y", "case": "g011", "answer": "otra", "label": "fail", "evidence_of": "nope"},
     "labels.jsonl:2: 'evidence_of' names 'nope', which no earlier line has"),
    ("{not json", "labels.jsonl:2: not JSON"),
])
def test_a_bad_labels_file_names_the_line_and_nothing_is_imported(tmp_path, second, problem):
    golden_set = golden_import(name="sample", path=GOLDEN).golden_set
    path = sheet(tmp_path, [GOOD, second])
    with pytest.raises(LabelFileError) as caught:
        human_labels_import(path=path, golden_set=golden_set)
    assert problem in str(caught.value)
    assert not HumanLabel.objects.exists() and not EvalRun.objects.filter(labels_file__gt="").exists()


def test_importing_the_committed_labels_is_all_or_nothing_and_idempotent():
    golden_set = golden_import(name="sample", path=GOLDEN).golden_set
    first = human_labels_import(path=LABELS, golden_set=golden_set, shown="evals/fixtures/judge_labels.jsonl")
    again = human_labels_import(path=LABELS, golden_set=golden_set, shown="evals/fixtures/judge_labels.jsonl")
    rows = committed()
    assert first.created and not again.created and again.run == first.run
    assert HumanLabel.objects.count() == len(rows)
    stored = {label.item_key: (label.label, label.split) for label in HumanLabel.objects.all()}
    assert stored == {row.item_key: (row.label, split_for(row.item_key)) for row in rows}
    assert "already imported" in again.summary


# --- the judge that reads bills, measured against the labels --------------------------------------------------


def test_the_offline_judge_in_use_agrees_with_the_labels_on_dev_as_docs_evals_says():
    """The dev figures docs/evals.md reports; a changed judge with the same version name fails here."""
    golden_set = golden_import(name="sample", path=GOLDEN).golden_set
    human_labels_import(path=LABELS, golden_set=golden_set)
    for judge in (LexicalJudge(), LexicalBillJudge()):
        judge_labelled(judge=judge, limit=1000)
    old = calibration_report(judge_version="lexical-support-1", split="dev")
    new = calibration_report(judge_version="lexical-support-6", split="dev")
    assert (new["true_passes"], new["human_passes"], new["true_fails"], new["human_fails"]) == (41, 45, 37, 41)
    assert (old["true_passes"], old["true_fails"]) == (33, 29)
    assert not JudgeTestRead.objects.exists()  # dev only: the test split was not read


FINDINGS = [
    JudgeEvidence("E8", "Diferencia factura 2026-10 vs 2026-09 = Bs. 324,80 (descuento promocional terminó: 280,00; "
                        "impuestos: 44,80)", "324.80", "invoice_delta"),
    JudgeEvidence("E10", "Variación de impuestos 2026-10 vs 2026-09 = Bs. 44,80 (224,00 − 179,20)", "44.80",
                  "delta_by_type"),
    JudgeEvidence("E12", "Promoción «Descuento de bienvenida» valía Bs. 280,00 al mes = 20 % × mensualidad",
                  "280.00", "promotion_value"),
]
RIGHT = ("Tu factura de octubre subió Bs. 324,80 [E8] respecto a la de septiembre por el fin de una promoción que "
         "te descontaba Bs. 280,00 [E12] al mes. El resto, Bs. 44,80 [E10], corresponde al IVA.")


@pytest.mark.parametrize("answer, verdict, why", [
    (RIGHT, "pass", ""),
    (RIGHT.replace("subió", "bajó"), "fail", "says the bill went down"),
    (RIGHT.replace("por el fin de una promoción", "por un recargo por mora"), "fail", "names a late fee"),
    (RIGHT.replace("septiembre", "octubre", 1), "fail", "compares with octubre"),
    (RIGHT.replace("de octubre", "de noviembre"), "fail", "names noviembre"),
    (RIGHT.replace("324,80", "280,00", 1), "fail", "no invoice difference has"),
    (RIGHT.replace("Bs. 280,00", "Bs. 324,80"), "fail", "which its findings do not give"),
])
def test_a_correct_bill_explanation_passes_and_a_wrong_one_fails(answer, verdict, why):
    judgement = LexicalBillJudge().judge(answer=answer, evidence=FINDINGS, question="¿por qué subió mi factura?")
    assert judgement.verdict == verdict, judgement.reason
    assert why in judgement.reason
    assert LexicalJudge().judge(answer=RIGHT, evidence=FINDINGS).verdict == "fail"  # version 1 cannot read it


def test_figures_the_verifier_derived_count_as_supported():
    answer = "Pagaste Bs. 560,00 [E1][E2] entre las dos facturas."
    evidence = [JudgeEvidence("E1", "Pago de Bs. 280,00 aplicado a la factura 2026-09", "280.00", "payment"),
                JudgeEvidence("E2", "Pago de Bs. 280,00 aplicado a la factura 2026-10", "280.00", "payment")]
    assert LexicalBillJudge().judge(answer=answer, evidence=evidence).verdict == "fail"
    # The verifier's derived figures are its tokens: the digits as the answer writes them.
    assert LexicalBillJudge().judge(answer=answer, evidence=evidence, verified=["560,00"]).verdict == "pass"


def test_a_rule_of_one_plan_given_without_naming_it_fails_unless_the_question_names_it():
    passage = JudgeEvidence("E1", "Plan de prueba de 30 días\nQué pasa al cumplirse los 30 días\n\nSi no cancelas "
                                  "antes del día 30, el servicio pasa a Fibra 100 mensual.")
    answer = "Si no cancelas antes del día 30, el servicio pasa a Fibra 100 mensual [E1]."
    judge = LexicalBillJudge()
    assert judge.judge(answer=answer, evidence=[passage], question="¿cuánto cuesta instalar?").verdict == "fail"
    assert judge.judge(answer=answer, evidence=[passage], question="¿y el plan de prueba?").verdict == "pass"


def test_a_figure_put_on_the_wrong_thing_fails_and_a_list_written_label_first_is_not_misread():
    passage = JudgeEvidence("E1", "Depósito de equipos\nReposición\n\nSe cobra su valor: USD 45,00 por el router, "
                                  "USD 35,00 por la ONT y USD 40,00 por la antena.")
    judge = LexicalBillJudge()
    right = "Se cobra su valor: USD 45,00 por el router y USD 35,00 por la ONT [E1]."
    swapped = "Se cobra su valor: USD 35,00 por el router y USD 45,00 por la ONT [E1]."
    assert judge.judge(answer=right, evidence=[passage]).verdict == "pass"
    judgement = judge.judge(answer=swapped, evidence=[passage])
    assert judgement.verdict == "fail" and "puts 35 on «route»" in judgement.reason
    listed = JudgeEvidence("E1", "Reposición de equipos\nValores\n\nRouter: USD 45,00, ONT: USD 35,00.")
    assert judge.judge(answer="La ONT cuesta USD 35,00 de reposición y el router USD 45,00 [E1].",
                       evidence=[listed]).verdict == "pass"


def test_a_rule_given_without_the_exception_the_question_asks_about_fails():
    passage = JudgeEvidence("E1", "Reembolso del plan anual\nCancelación dentro de los primeros 14 días\n\nSi cancelas "
                                  "dentro de los 14 días te devolvemos el 100 % de lo pagado. Lo único que no se "
                                  "devuelve es el IGTF, si pagaste en divisas. El depósito se devuelve aparte.")
    judge = LexicalBillJudge()
    rule = "Si cancelas el plan anual dentro de los 14 días te devolvemos el 100 % de lo pagado [E1]."
    asked = judge.judge(answer=rule, evidence=[passage], question="si pagué el anual por zelle, ¿me devuelven el igtf también?")
    assert asked.verdict == "fail" and "leaves out the exception" in asked.reason
    # The question's own verb is in the rule too ("devuelve"): asked only that, the rule is the answer.
    assert judge.judge(answer=rule, evidence=[passage],
                       question="si cancelo el plan anual a la semana, ¿me devuelven todo?").verdict == "pass"
    both = rule[:-1] + " Lo único que no se devuelve es el IGTF, si pagaste en divisas [E1]."
    assert judge.judge(answer=both, evidence=[passage],
                       question="si pagué el anual por zelle, ¿me devuelven el igtf también?").verdict == "pass"


def test_a_fee_that_went_up_is_not_read_as_the_bills_change_and_a_due_date_is_bill_wording():
    findings = [JudgeEvidence("E1", "Diferencia factura 2026-10 vs 2026-09 = Bs. 634,14", "634.14", "invoice_delta"),
                JudgeEvidence("E2", "Mensualidad Fibra 300 Bs. 1.400,00; Fibra 600 Bs. 1.800,00", "1800.00",
                              "plan_fee"),
                JudgeEvidence("E3", "Saldo pendiente factura 2026-10 = Bs. 2.204,00, vencimiento 2026-10-26",
                              "2204.00", "open_balance")]
    judge = LexicalBillJudge()
    fee = "Tu factura de octubre subió Bs. 634,14 [E1]. Además, la mensualidad del plan nuevo es Bs. 400,00 más alta."
    assert judge.judge(answer=fee, evidence=findings, verified=["400,00"]).verdict == "pass"
    # The bill's own change still needs an invoice difference of that amount.
    wrong = "Tu factura de octubre subió Bs. 400,00 respecto a la de septiembre."
    assert "no invoice difference has" in judge.judge(answer=wrong, evidence=findings, verified=["400,00"]).reason
    due = "Esta factura tiene un saldo pendiente de Bs. 2.204,00 y vence en 6 días."
    assert judge.judge(answer=due, evidence=findings, verified=["6"]).verdict == "pass"


# --- seed 004's hygiene, in code ---------------------------------------------------------------------------------


def release(folder, name, text):
    (folder / f"{name}.md").write_text(text + "\n", encoding="utf-8")
    manifest = json.loads((folder / "MANIFEST.json").read_text(encoding="utf-8"))
    manifest[name] = hashlib.sha256((text + "\n").encode("utf-8")).hexdigest()
    (folder / "MANIFEST.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_every_released_judge_prompts_examples_come_from_the_train_split():
    for version in judge_prompt_versions():
        load_judge_prompt(version)  # raises on an example of dev or test


def test_a_judge_prompt_with_an_example_from_dev_or_test_is_refused(tmp_path):
    folder = tmp_path / "judge_prompts"
    shutil.copytree(PROMPTS_DIR, folder)
    by_split = {}
    for row in committed():
        by_split.setdefault(split_for(row.item_key), row.id)
    release(folder, "faithfulness-7", f"Judge strictly.\n\n## Example {by_split['train']}\nAnswer: …\nVerdict: pass")
    assert load_judge_prompt("faithfulness-7", folder=folder).version == "faithfulness-7"
    for split in ("dev", "test"):
        release(folder, "faithfulness-8", f"Judge strictly.\n\n## Example {by_split[split]}\nVerdict: fail")
        with pytest.raises(JudgePromptError, match=rf"example '{re.escape(by_split[split])}' is in the {split} "
                                                    r"split; a judge prompt's examples come from the train"):
            load_judge_prompt("faithfulness-8", folder=folder)
    release(folder, "faithfulness-9", "Judge strictly.\n\n## Example made-up-id\nVerdict: pass")
    with pytest.raises(JudgePromptError, match="example 'made-up-id' is not a human label"):
        load_judge_prompt("faithfulness-9", folder=folder)


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html))).strip()


def test_each_read_of_the_test_split_is_recorded_and_a_second_is_not_final(client, make_staff):
    golden_set = golden_import(name="sample", path=GOLDEN).golden_set
    human_labels_import(path=LABELS, golden_set=golden_set)
    judge_labelled(judge=LexicalBillJudge(), limit=1000)
    client.force_login(make_staff("ana", "analyst"))
    url = reverse("evals:calibration")

    dev = text_of(client.get(url, {"judge_version": "lexical-support-6", "split": "dev"}).content.decode())
    assert "The test split has not been read for lexical-support-6" in dev and not JudgeTestRead.objects.exists()

    first = text_of(client.get(url, {"judge_version": "lexical-support-6", "split": "test"}).content.decode())
    assert "The test split's first read for lexical-support-6: these figures are final" in first
    second = text_of(client.get(url, {"judge_version": "lexical-support-6", "split": "test"}).content.decode())
    assert "The test split was already read for lexical-support-6" in second
    assert "2 reads with this one. These figures are not final (the same labels and verdicts as the first read)" \
        in second
    reads = list(JudgeTestRead.objects.filter(judge_version="lexical-support-6"))
    assert [read.purpose for read in reads] == ["calibration page"] * 2 and reads[0].reader.username == "ana"
    assert "final" in second and "not final" in second
    dev = text_of(client.get(url, {"judge_version": "lexical-support-6", "split": "dev"}).content.decode())
    assert "The test split was read 2 times for lexical-support-6" in dev
    assert JudgeTestRead.objects.count() == 2  # showing dev reads nothing of test


def test_the_gate_prints_the_judges_figures_and_records_its_read_of_the_test_split(tmp_path, settings):
    from evals.management.commands.gate import Command

    settings.GATE_RUN_LOG = str(tmp_path / "log.jsonl")
    golden_set = golden_import(name="sample", path=GOLDEN).golden_set
    config = parse_gates((settings.BASE_DIR / "evals/fixtures/gates_ci.toml").read_text(encoding="utf-8"),
                         source="gates_ci.toml")
    command = Command(stdout=io.StringIO())
    command._calibrate(config, golden_set=golden_set)
    out = command.stdout._out.getvalue()
    assert "human labels evals/fixtures/judge_labels.jsonl: 254 labels" in out
    assert re.search(r"judge lexical-support-6 against the labels: dev TPR 0\.911 \(41/45\) TNR 0\.902 \(37/41\) · "
                     r"test TPR \d\.\d{3} \(\d+/\d+\) TNR \d\.\d{3} \(\d+/\d+\) · the test split's first read", out)
    assert JudgeTestRead.objects.get().purpose == "gate, gates_ci.toml"
