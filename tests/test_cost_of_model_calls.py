"""Cost beside quality: every model call's tokens and cost recorded — writer and judge against a local server
that speaks the OpenAI protocol — and shown per trace, per day and per configuration on the dashboard."""

import re
import uuid

import pytest
from django.urls import reverse

from bot.turn import run_turn
from bot.writer import LLMWriter, TemplateWriter
from core import clock
from core.model_costs import Price
from desk.models import Message
from evals.human_labels import judge_verdict_record
from evals.judge import FaithfulnessJudge
from tests.support.factories import conversation_start
from tests.support.fake_openai import FakeOpenAI
from traces.rollups import rollups_rebuild

pytestmark = pytest.mark.django_db

PRICES = {"test-model": Price(input=1.0, output=2.0), "judge-model": Price(input=3.0, output=4.0)}
# The fake server reports 10 prompt and 5 completion tokens per call.
WRITER_CALL_COST = (10 * 1.0 + 5 * 2.0) / 1_000_000


@pytest.fixture(autouse=True)
def _kb(sample_kb, settings):
    settings.MODEL_PRICES = PRICES
    return sample_kb


def _say(text, writer):
    conversation = conversation_start(name="Cost", customer_id="C-1001", inbound_at=None)
    message = Message.objects.create(conversation=conversation, direction="in", author="customer", text=text,
                                     provider_message_id=f"wamid.{uuid.uuid4().hex}")
    return run_turn(message_id=message.pk, writer=writer)


def _reply(text):
    return {"customer_message": text, "internal_note": "Root cause: the fee is in the document [E1].",
            "evidence_ids": ["E1"], "needs_human": False}


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_a_scripted_writer_call_records_its_tokens_and_cost_on_the_trace(client, make_staff):
    with FakeOpenAI() as fake:
        fake.chat_script = [_reply("La reconexión cuesta Bs. 3.500,00 [E1]."),  # refused: a rewrite costs too
                            _reply("La reconexión cuesta Bs. 350,00 [E1].")]
        writer = LLMWriter(api_key="k", base_url=fake.base_url, model="test-model", timeout=2)
        trace = _say("cuanto cobran por reconexion de fibra", writer)
    assert len(fake.requests) == 2
    assert [(c["role"], c["model"], c["tokens_in"], c["tokens_out"]) for c in trace.model_calls] == [
        ("writer", "test-model", 10, 5), ("writer", "test-model", 10, 5)]
    assert trace.cost == pytest.approx(2 * WRITER_CALL_COST)
    client.force_login(make_staff("ana", "analyst"))
    page = _text(client.get(reverse("traces:detail", args=[trace.pk])).content.decode())
    assert "This turn cost 0.000040 USD" in page


def test_the_template_writer_costs_nothing(client, make_staff):
    trace = _say("cuanto cobran por reconexion de fibra", TemplateWriter())
    assert trace.outcome == "answered" and trace.model_calls == [] and trace.cost == 0
    client.force_login(make_staff("ana", "analyst"))
    page = _text(client.get(reverse("traces:detail", args=[trace.pk])).content.decode())
    assert "this turn cost 0 tokens" in page


def test_the_judges_calls_are_priced_on_its_verdict():
    trace = _say("cuanto cobran por reconexion de fibra", TemplateWriter())
    with FakeOpenAI() as fake:
        fake.chat_script = ["not json", {"reason": "The fee is in E1.", "verdict": "pass"}]  # a retry costs too
        judge = FaithfulnessJudge(api_key="k", base_url=fake.base_url, model="judge-model", timeout=2)
        judgement = judge.judge(question=trace.query, answer=trace.final_text, evidence=[])
    verdict = judge_verdict_record(trace=trace, judgement=judgement, judge=judge)
    assert (verdict.tokens_in, verdict.tokens_out) == (20, 10)
    assert verdict.cost == pytest.approx((20 * 3.0 + 10 * 4.0) / 1_000_000)


def test_the_dashboard_shows_each_days_cost_and_a_configurations_cost_per_answered_turn(client, make_staff):
    with FakeOpenAI() as fake:
        fake.chat_script = [_reply("La reconexión cuesta Bs. 350,00 [E1].")]
        model_trace = _say("cuanto cobran por reconexion de fibra",
                           LLMWriter(api_key="k", base_url=fake.base_url, model="test-model", timeout=2))
    template_trace = _say("cuanto cobran por reconexion de fibra", TemplateWriter())
    now = clock.now()
    rollups_rebuild(start=now.replace(hour=0, minute=0), end=now, now=now)
    client.force_login(make_staff("ana", "analyst"))
    page = _text(client.get(reverse("dashboard:page"), {"range": "today"}).content.decode())
    assert f"{model_trace.configuration_id} {WRITER_CALL_COST:.6f} 1 {WRITER_CALL_COST:.6f}" in page
    assert f"{template_trace.configuration_id} 0.000000 1 0.000000" in page


def test_a_runs_cost_is_recorded_beside_its_numbers(client, make_staff):
    from evals.models import GoldenCase, GoldenSet
    from evals.runner import eval_run
    from evals.services import golden_set_bump

    golden_set = GoldenSet.objects.create(name=f"cost-{uuid.uuid4().hex[:6]}")
    GoldenCase.objects.create(golden_set=golden_set, case_id="c1", query="cuanto cobran por reconexion de fibra",
                              hits=["reconexion-fibra-es"])
    golden_set_bump(golden_set=golden_set)
    with FakeOpenAI() as fake:
        fake.chat_script = [_reply("La reconexión cuesta Bs. 350,00 [E1].")]
        writer = LLMWriter(api_key="k", base_url=fake.base_url, model="test-model", timeout=2)
        run = eval_run(golden_set=golden_set, writer=writer, use_judge=False)
    assert run.metrics["cost"] == {"writer": pytest.approx(WRITER_CALL_COST), "judge": 0.0,
                                   "total": pytest.approx(WRITER_CALL_COST), "answered": 1,
                                   "per_answered": pytest.approx(WRITER_CALL_COST)}
    client.force_login(make_staff("ana", "analyst"))
    page = _text(client.get(reverse("evals:run", args=[run.pk])).content.decode())
    assert f"Cost of the model calls: {WRITER_CALL_COST:.6f} USD" in page
    assert f"{WRITER_CALL_COST:.6f}" in _text(client.get(reverse("evals:runs")).content.decode())
