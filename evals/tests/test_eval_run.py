"""Eval runs over the sample KB: retrieval-only and full runs, the judge, unreviewed variants, comparisons."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bot.writer import LLMWriter, TemplateWriter
from desk.models import Contact, Conversation, Escalation, Message
from evals.answer_checks import CaseResult, case_failures, missing_facts
from evals.judge import FaithfulnessJudge
from evals.models import EvalRun, GoldenCase, GoldenSet, JudgeVerdict
from evals.runner import EvalRunError, eval_run, run_baseline, run_compare
from evals.services import golden_case_update, golden_import, golden_set_bump
from tests.support.fake_openai import FakeOpenAI
from traces.models import Trace

RECONNECTION = {"id": "reconnect", "query": "cuanto cobran por reconexion de fibra",
                "hits": ["reconexion-fibra-es", "reconnection-en"], "hard_negatives": ["reconexion-empresarial-es"],
                "must_pass": True, "facts": ["Bs. 350,00"]}
ZELLE = {"id": "zelle", "query": "I sent a zelle to 3055550147 on saturday, when will it show as paid?",
         "hits": ["zelle-payments-en"], "hard_negatives": []}
WRONG_HIT = {"id": "wrong-hit", "query": "cuanto cobran por reconexion de fibra", "hits": ["taxes-en"],
             "hard_negatives": ["reconexion-fibra-es"]}


def make_set(tmp_path, rows, name="small"):
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in rows), encoding="utf-8")
    golden_import(name=name, path=path)
    return GoldenSet.objects.get(name=name)


def items(run):
    return {item.case_id: item for item in run.items.all()}


# --- pure checks -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fact, answer, missing",
    [
        ("Bs. 350,00", "La reconexión cuesta Bs. 350,00.", False),
        ("bs 350", "La reconexión cuesta BS. 350.00", False),  # case, punctuation, decimals as digits
        ("1.500,00 USD", "son 1500 usd", False),
        ("4 horas hábiles", "en  cuatro   HORAS habiles", False),  # accents, spaces, a number word
        ("Bs. 350,00", "La reconexión cuesta Bs. 3.500,00.", True),  # a different number
        ("35", "cuesta 350", True),  # a number is a whole token, never a prefix
        ("5 días", "en 5 dias habiles", False),
        # A fact may list alternatives; one is enough, and the failure names the whole fact.
        ("USD 23,20 | 23,20 dólares", "son 23,20 dólares al mes", False),
        ("USD 23,20 | 23,20 dólares", "son 23,20 bolívares al mes", True),
        ("10 días continuos | 10 días calendario", "tienes diez días calendario", False),
        # "%" is a token, whatever the spelling; "$" reads as USD.
        ("5 %", "el recargo es del 5% del saldo", False),
        ("5 %", "el recargo es de 5 por ciento", False),
        ("5 %", "pagas USD 5 de recargo", True),
        ("3 %", "IGTF is 3 percent", False),
        ("USD 23.20", "It comes to $23.20 a month.", False),
        ("USD 23.20", "It comes to 23.20 a month.", True),
    ],
)
def test_missing_facts_compare_words_and_numbers_loosely(fact, answer, missing):
    assert missing_facts([fact], answer) == ([fact] if missing else [])


@pytest.mark.parametrize(
    "result, failures",
    [
        (CaseResult(k=5, first_hit_rank=1, hard_negative_above=None), []),
        (CaseResult(k=5, first_hit_rank=None, hard_negative_above=None), ["no hit in top 5"]),
        (CaseResult(k=5, first_hit_rank=2, hard_negative_above="x", must_pass=True),
         ["must-pass: first hit at rank 2", "hard negative above hit: x"]),
        (CaseResult(k=5, first_hit_rank=1, hard_negative_above=None, outcome="escalated",
                    escalation_reason="NO_CONTEXT"), ["escalated: NO_CONTEXT"]),
        (CaseResult(k=5, first_hit_rank=1, hard_negative_above=None, outcome="escalated",
                    escalation_reason="NO_CONTEXT", clarification_expected=True),
         ["escalated where a clarification was expected"]),
        (CaseResult(k=5, first_hit_rank=1, hard_negative_above=None, outcome="asked",
                    clarification_expected=True), []),
        (CaseResult(k=5, first_hit_rank=1, hard_negative_above=None, outcome="clarify",
                    clarification_expected=True), []),
        (CaseResult(k=5, first_hit_rank=1, hard_negative_above=None, outcome="answered",
                    clarification_expected=True), ["answered where a clarification was expected"]),
        (CaseResult(k=5, first_hit_rank=1, hard_negative_above=None, outcome="clarify"),
         ["asked to clarify where no clarification was expected"]),
        (CaseResult(k=5, first_hit_rank=1, hard_negative_above=None, outcome="answered", grounded=True,
                    missing_facts=["Bs. 9"], judge_label="error"), ["missing fact: Bs. 9", "judge: error"]),
        (CaseResult(k=5, first_hit_rank=None, hard_negative_above=None, scored_retrieval=False,
                    outcome="answered", grounded=True, judge_label="pass"), []),
        # out of scope: no context and no answer is the pass; an escalation is the right outcome
        (CaseResult(k=5, first_hit_rank=None, hard_negative_above=None, scored_retrieval=False, out_of_scope=True,
                    has_context=False, outcome="escalated", escalation_reason="NO_CONTEXT"), []),
        (CaseResult(k=5, first_hit_rank=None, hard_negative_above=None, scored_retrieval=False, out_of_scope=True,
                    has_context=False), []),
        (CaseResult(k=5, first_hit_rank=None, hard_negative_above=None, scored_retrieval=False, out_of_scope=True,
                    has_context=True, outcome="answered", grounded=True),
         ["context for an out-of-scope question", "answered an out-of-scope question"]),
    ],
)
def test_case_failures(result, failures):
    assert case_failures(result) == failures


# --- runs against the sample knowledge base --------------------------------------------------------


@pytest.fixture
def kb(sample_kb):
    return sample_kb


@pytest.mark.django_db
def test_a_retrieval_only_run_records_ranks_metrics_and_versions(kb, tmp_path):
    golden_set = make_set(tmp_path, [RECONNECTION, ZELLE, WRONG_HIT])
    run = eval_run(golden_set=golden_set, retrieval_only=True)
    assert (run.status, run.golden_version, run.retrieval_only, run.k) == ("done", 1, True, 5)
    assert run.index_version is not None and run.embedding_model
    assert (run.prompt_version, run.model, run.judge_version) == ("", "", "")
    by_id = items(run)
    assert by_id["reconnect"].first_hit_rank == 1 and by_id["reconnect"].failures == []
    assert by_id["reconnect"].ranked_docs[0] == "reconexion-fibra-es"
    assert {"chunk_id", "doc", "section", "vector_score", "text_rank", "rrf", "kept"} == \
        set(by_id["reconnect"].retrieval[0])
    assert by_id["reconnect"].outcome == "" and by_id["reconnect"].answer == ""
    assert by_id["wrong-hit"].first_hit_rank is None and by_id["wrong-hit"].hard_negative_above is True
    assert by_id["wrong-hit"].failures == ["no hit in top 5", "hard negative above hit: reconexion-fibra-es"]
    metrics = run.metrics
    assert metrics["cases"] == 3 and metrics["failing"] == ["wrong-hit"]
    assert metrics["recall@5"] == round(2 / 3, 4)
    assert metrics["mrr"] == round((1 + 1 / by_id["zelle"].first_hit_rank) / 3, 4)
    assert metrics["must_pass_failures"] == [] and metrics["hard_negative_wins"] == ["wrong-hit"]
    assert "answered" not in metrics and "judge" not in metrics


@pytest.mark.django_db
def test_a_full_run_answers_through_the_real_path_and_writes_no_desk_rows(kb, tmp_path, healthy_billing):
    rows = [
        RECONNECTION,
        {**RECONNECTION, "id": "wrong-fact", "must_pass": False, "facts": ["Bs. 999,00", "350"]},
        {"id": "account", "query": "¿Por qué mi factura llegó más alta este mes?", "customer_id": "C-1001",
         "hits": ["ciclo-facturacion-es"], "facts": []},
        {"id": "ask-who", "query": "¿Por qué mi factura llegó más alta este mes?",
         "hits": ["ciclo-facturacion-es"], "clarification_expected": True},
        {"id": "france", "query": "¿cuál es la capital de Francia?", "hits": ["taxes-en"]},
        {"id": "human", "query": "quiero hablar con una persona", "hits": ["canales-contacto-es"]},
        {"id": "which-plan", "query": "si cancelo el servicio me devuelven el dinero?",
         "hits": ["cancelacion-servicio-es", "reembolso-plan-anual-es", "reembolso-plan-prueba-es"],
         "clarification_expected": True},
    ]
    golden_set = make_set(tmp_path, rows)
    before = [model.objects.count() for model in (Message, Escalation, Contact, Conversation, Trace)]
    run = eval_run(golden_set=golden_set, writer=TemplateWriter(), use_judge=False)
    assert [model.objects.count() for model in (Message, Escalation, Contact, Conversation, Trace)] == before
    assert (run.status, run.prompt_version, run.model) == ("done", "template-2", "template")
    by_id = items(run)

    reconnect = by_id["reconnect"]
    assert (reconnect.outcome, reconnect.grounded, reconnect.missing_facts) == ("answered", True, [])
    assert "Bs. 350,00" in reconnect.answer and "[E" not in reconnect.answer
    assert reconnect.evidence[0]["doc"] == "reconexion-fibra-es" and reconnect.verdicts[0]["grounded"] is True
    assert reconnect.failures == [] and reconnect.latency_ms > 0
    assert by_id["wrong-fact"].missing_facts == ["Bs. 999,00"]
    assert by_id["wrong-fact"].failures == ["missing fact: Bs. 999,00"]

    account = by_id["account"]
    assert account.outcome == "answered" and account.grounded is True
    assert any(e.get("fact_kind") == "invoice_delta" for e in account.evidence)

    assert (by_id["ask-who"].outcome, by_id["ask-who"].failures) == ("asked", [])
    assert "cédula" in by_id["ask-who"].answer
    # Out of scope, declined: in a case that names a hit it fails as an in-scope question would.
    assert (by_id["france"].outcome, by_id["france"].escalation_reason) == ("declined", "")
    assert "declined a question about plans, bills or payments" in by_id["france"].failures
    assert (by_id["human"].escalation_reason, by_id["human"].failures) == ("USER_REQUEST",
                                                                          ["escalated: USER_REQUEST"])
    which = by_id["which-plan"]
    assert (which.outcome, which.failures) == ("clarify", [])
    assert "plan anual" in which.answer and "plan de prueba" in which.answer and "plan mensual" in which.answer

    assert run.metrics["answered"] == round(3 / 7, 4) and run.metrics["grounded"] == 1.0
    assert run.metrics["clarified"] == round(1 / 7, 4)
    assert run.metrics["failing"] == ["france", "human", "wrong-fact"]
    assert "judge" not in run.metrics


@pytest.mark.django_db
def test_a_case_asked_by_a_known_customer_is_scored_on_what_retrieval_kept_for_them(kb, tmp_path, healthy_billing):
    """The bot searches for a known customer with their segment: the other segment's passages are not among what it
    reads, so a case with a customer is scored on that, not on a search that knows nobody."""
    asked = {"query": "¿cuánto tiempo tarda la reconexión después de pagar?", "hits": ["reconexion-fibra-es"],
             "hard_negatives": ["reconexion-empresarial-es"]}
    golden_set = make_set(tmp_path, [{**asked, "id": "home", "customer_id": "C-1049"},
                                     {**asked, "id": "business", "customer_id": "C-1008"},
                                     {**asked, "id": "anyone"}])
    by_id = items(eval_run(golden_set=golden_set, writer=TemplateWriter(), use_judge=False))

    assert "reconexion-empresarial-es" in by_id["anyone"].ranked_docs  # both kinds compete when nobody is known
    home = by_id["home"]
    assert "reconexion-empresarial-es" not in home.ranked_docs and home.hard_negative_above is False
    assert home.first_hit_rank == 1 and "cuatro horas hábiles" in home.answer
    # The case's own search record keeps the home page (whatever this embedder build's prune drops below it).
    assert "reconexion-fibra-es" in {hit["doc"] for hit in home.retrieval if hit["kept"]}
    business = by_id["business"]
    assert "reconexion-fibra-es" not in business.ranked_docs and business.first_hit_rank is None
    assert "no hit in top 5" in business.failures and "dos horas" in business.answer


@pytest.mark.django_db
def test_a_case_is_scored_on_what_the_bot_searched_when_it_reads_a_regional_word(kb, tmp_path, healthy_billing):
    """"Que me monten la fibra" is installing it: the bot searches it as meant, and the case is scored on that search,
    not on the words as written."""
    golden_set = make_set(tmp_path, [{"id": "put-in", "query": "¿cuánto sale que me monten la fibra?",
                                      "hits": ["instalacion-es"]}])
    as_written = items(eval_run(golden_set=golden_set, retrieval_only=True))["put-in"]
    item = items(eval_run(golden_set=golden_set, writer=TemplateWriter(), use_judge=False))["put-in"]

    assert item.first_hit_rank is not None and (as_written.first_hit_rank or 99) > item.first_hit_rank


def judge_reply(verdict):
    return {"reason": f"claims checked: {verdict}", "verdict": verdict}


def written(reply):
    return {"customer_message": reply, "internal_note": "Fee quoted from [E1].", "evidence_ids": ["E1"],
            "needs_human": False}


@pytest.mark.django_db
def test_a_judged_run_with_a_model_writer_records_pass_fail_and_error_never_as_pass(kb, tmp_path):
    rows = [{**RECONNECTION, "id": f"c{n}", "must_pass": False} for n in range(1, 5)]
    golden_set = make_set(tmp_path, rows)
    with FakeOpenAI() as fake:
        fake.chat_script = [
            written("Cuesta Bs. 350,00 [E1]."), judge_reply("pass"),  # c1
            written("Cuesta Bs. 3.500,00 [E1]."), written("Cuesta Bs. 350,00 [E1]."), judge_reply("fail"),  # c2
            written("Cuesta Bs. 350,00 [E1]."), "not json", '{"verdict": "maybe"}',  # c3: judge garbage twice
            *[written("Cuesta Bs. 4.500,00 [E1].")] * 3, judge_reply("pass"),  # c4: the verified quote goes out
        ]
        writer = LLMWriter(api_key="k", base_url=fake.base_url, model="writer-model", timeout=5)
        judge = FaithfulnessJudge(api_key="k", base_url=fake.base_url, model="judge-model", timeout=5)
        run = eval_run(golden_set=golden_set, writer=writer, judge=judge)
        assert fake.chat_script == []
    assert (run.model, run.judge_version, run.judge_model) == ("writer-model", judge.version, "judge-model")
    by_id = items(run)
    assert [by_id[c].judge_label for c in ("c1", "c2", "c3", "c4")] == ["pass", "fail", "error", "pass"]
    assert by_id["c1"].failures == [] and by_id["c2"].failures == ["judge: fail"]
    assert by_id["c3"].failures == ["judge: error"] and "no verdict" in by_id["c3"].judge_reason
    assert [v["grounded"] for v in by_id["c2"].verdicts] == [False, True]
    # c4's three drafts never held, so the kept chunk's verified sentence was sent and judged instead.
    assert by_id["c4"].failures == [] and by_id["c4"].outcome == "answered" and "350,00" in by_id["c4"].answer
    assert [v["grounded"] for v in by_id["c4"].verdicts] == [False, False, False, True]
    verdicts = {v.item_key: v.label for v in JudgeVerdict.objects.filter(run_item__run=run)}
    assert verdicts == {f"item:{by_id['c1'].pk}": "pass", f"item:{by_id['c2'].pk}": "fail",
                        f"item:{by_id['c3'].pk}": "error", f"item:{by_id['c4'].pk}": "pass"}
    assert run.metrics["judge"] == {"version": judge.version, "model": "judge-model", "passes": 2, "fails": 1,
                                    "errors": 1, "observed": 0.6667}
    # No human labels yet: the corrected rate is reported as undefined, with why, never as a number.
    assert "error" in run.metrics["corrected_pass_rate"] and "value" not in run.metrics["corrected_pass_rate"]


@pytest.mark.django_db
def test_unreviewed_synthetic_cases_never_count(kb, tmp_path):
    golden_set = make_set(tmp_path, [RECONNECTION, {**WRONG_HIT, "synthetic": True}])
    assert GoldenCase.objects.get(case_id="wrong-hit").reviewed is False
    run = eval_run(golden_set=golden_set, retrieval_only=True)
    assert list(items(run)) == ["reconnect"]
    assert run.metrics["cases"] == 1 and run.metrics["unreviewed_left_out"] == 1 and run.metrics["failing"] == []

    case = GoldenCase.objects.get(case_id="wrong-hit")
    golden_case_update(case=case, user=None, query=case.query, facts=[], hits=case.hits,
                       hard_negatives=case.hard_negatives, must_pass=False, clarification_expected=False,
                       synthetic=True)  # a human saved it: reviewed now
    reviewed = eval_run(golden_set=golden_set, retrieval_only=True)
    assert reviewed.golden_version == 2 and sorted(items(reviewed)) == ["reconnect", "wrong-hit"]
    assert reviewed.metrics["failing"] == ["wrong-hit"]


@pytest.mark.django_db
def test_a_crashing_run_is_saved_as_failed_with_its_error_and_no_items(kb, tmp_path):
    class BrokenWriter(TemplateWriter):
        def write(self, request, **kwargs):
            raise RuntimeError("writer exploded")

    golden_set = make_set(tmp_path, [RECONNECTION])
    with pytest.raises(EvalRunError, match="writer exploded"):
        eval_run(golden_set=golden_set, writer=BrokenWriter(), use_judge=False)
    run = EvalRun.objects.get()
    assert (run.status, run.metrics, run.items.count()) == ("failed", {}, 0)
    assert "RuntimeError: writer exploded" in run.error and run.finished_at is not None


@pytest.mark.django_db
def test_run_compare_lists_newly_failing_and_newly_passing_cases(kb, tmp_path):
    golden_set = make_set(tmp_path, [RECONNECTION, ZELLE, WRONG_HIT])
    base = eval_run(golden_set=golden_set, retrieval_only=True)
    fixed, broken = GoldenCase.objects.get(case_id="wrong-hit"), GoldenCase.objects.get(case_id="zelle")
    for case, hits in ((fixed, ["reconexion-fibra-es"]), (broken, ["pago-movil-es"])):
        golden_case_update(case=case, user=None, query=case.query, facts=[], hits=hits, hard_negatives=[],
                           must_pass=False, clarification_expected=False, synthetic=False)
    GoldenCase.objects.create(golden_set=golden_set, case_id="new", query="cuanto cobran por reconexion de fibra",
                              hits=["reconexion-fibra-es"])
    golden_set_bump(golden_set=golden_set, note="add a case")
    head = eval_run(golden_set=golden_set, retrieval_only=True)

    comparison = run_compare(base=base, head=head)
    assert comparison.newly_failing == ["zelle"] and comparison.newly_passing == ["wrong-hit"]
    assert comparison.still_failing == [] and comparison.only_in_head == ["new"] and comparison.only_in_base == []
    metrics = {name: (b, h) for name, b, h in comparison.metrics}
    assert metrics["recall@5"] == (base.metrics["recall@5"], head.metrics["recall@5"])
    assert set(metrics) == {"recall@5", "mrr", "answered", "clarified", "grounded", "judge observed", "corrected"}
    assert run_baseline(head=head) == base


# --- the command -----------------------------------------------------------------------------------


def run_command(*args):
    out = io.StringIO()
    call_command("eval_run", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_command_prints_failures_and_a_summary_line(kb, tmp_path):
    make_set(tmp_path, [RECONNECTION, ZELLE, WRONG_HIT], name="cmd")
    out = run_command("--golden", "cmd", "--retrieval-only")
    lines = out.strip().splitlines()
    assert lines[0] == "wrong-hit: fail: no hit in top 5; hard negative above hit: reconexion-fibra-es"
    run = EvalRun.objects.get()
    assert lines[-1].startswith(f"run {run.pk} · cmd v1 · retrieval only · index v")
    assert "recall@5 0.667" in lines[-1] and "must-pass failures 0" in lines[-1]


@pytest.mark.django_db
def test_command_json_has_the_run_metrics_and_per_case_rows(kb, tmp_path):
    make_set(tmp_path, [RECONNECTION, WRONG_HIT], name="cmd")
    payload = json.loads(run_command("--golden", "cmd", "--retrieval-only", "--k", "3", "--json"))
    assert payload["run"] == EvalRun.objects.get().pk and payload["status"] == "done"
    assert payload["recall@3"] == 0.5 and payload["failing"] == ["wrong-hit"]
    assert [(c["id"], c["passed"]) for c in payload["per_case"]] == [("reconnect", True), ("wrong-hit", False)]


@pytest.mark.django_db
def test_command_refuses_unknown_and_empty_sets_naming_the_known_ones(tmp_path):
    GoldenSet.objects.create(name="empty")
    GoldenSet.objects.create(name="other")
    with pytest.raises(CommandError, match=r"no golden set named 'nope'; known sets: empty, other"):
        run_command("--golden", "nope")
    with pytest.raises(CommandError, match="golden set 'empty' has no cases"):
        run_command("--golden", "empty")
    assert EvalRun.objects.count() == 0
