"""Writers: the LLM writer through the real openai client against a local OpenAI-compatible server."""

import json
from decimal import Decimal

import pytest

from bot.grounding import Evidence
from bot.prompt import PROMPT_VERSION
from bot.writer import (
    LLMWriter,
    TemplateWriter,
    WriterError,
    WriterRequest,
    decisive_sentence_scored,
    parse_draft,
)
from tests.support.fake_openai import HANG, FakeOpenAI

EVIDENCE = [
    Evidence("E1", "Reconexión fibra\nCuánto cuesta\n\nLa reconexión cuesta Bs. 350,00. Se hace en 4 horas."),
    Evidence("E2", "Diferencia factura 2026-10 vs 2026-09 = 14,00 USD", "14.00"),
]
SOURCES = {"E1": {"kind": "chunk", "language": "es"}, "E2": {"kind": "fact"}}


def request(query="¿cuánto cuesta la reconexión?", evidence=EVIDENCE[:1], sources=None):
    return WriterRequest(query=query, language="es", evidence=evidence, sources=sources or SOURCES)


def test_llm_writer_sends_evidence_lines_and_the_json_schema():
    with FakeOpenAI() as fake:
        fake.chat_script = [{"customer_message": "Cuesta Bs. 350,00 [E1].", "internal_note": "Fee from [E1].",
                             "evidence_ids": ["E1"], "needs_human": False}]
        writer = LLMWriter(api_key="k", base_url=fake.base_url, model="test-model", timeout=5)
        draft = writer.write(request())
    assert (draft.reply, draft.note, draft.evidence_ids, draft.needs_human) == (
        "Cuesta Bs. 350,00 [E1].", "Fee from [E1].", ["E1"], False)
    assert draft.usage["total_tokens"] == 15
    body = fake.requests[0]["body"]
    assert body["response_format"]["type"] == "json_schema"
    schema = body["response_format"]["json_schema"]["schema"]
    assert set(schema["properties"]) == {"customer_message", "internal_note", "evidence_ids", "needs_human"}
    system = body["messages"][0]["content"]
    assert "[E1] Reconexión fibra Cuánto cuesta La reconexión cuesta Bs. 350,00." in system
    assert "Spanish" in system and "Never promise a refund" in system and "internal_note" in system
    assert "key figures" not in system  # a document question has none
    assert writer.prompt_version == PROMPT_VERSION


def test_the_prompt_lists_formulas_and_the_key_figures_the_message_must_state():
    from billing.answers.evidence import KeyFigure as TurnKeyFigure

    figure = TurnKeyFigure("E2", Decimal("14.00"), "primary", "delta")
    sources = {"E1": {"kind": "chunk", "language": "es"}, "E2": {"kind": "fact", "derivation": "30.00 - 16.00"}}
    with FakeOpenAI() as fake:
        fake.chat_script = [{"customer_message": "Subió 14,00 USD [E2].", "internal_note": "30.00 - 16.00 [E2].",
                             "evidence_ids": ["E2"], "needs_human": False}]
        writer = LLMWriter(api_key="k", base_url=fake.base_url, model="m", timeout=5)
        writer.write(WriterRequest(query="por qué subió", language="es", evidence=EVIDENCE, sources=sources,
                                   capability="invoice_change", key_figures=[figure]))
    system = fake.requests[0]["body"]["messages"][0]["content"]
    assert "[E2] Diferencia factura 2026-10 vs 2026-09 = 14,00 USD — 14.00 (formula: 30.00 - 16.00)" in system
    assert "must state these key figures" in system and "- 14.00 (delta) [E2]" in system


def test_a_rewrite_carries_the_previous_reply_and_the_problems():
    with FakeOpenAI() as fake:
        fake.chat_script = [{"customer_message": "x [E1]", "internal_note": "", "evidence_ids": ["E1"],
                             "needs_human": False}]
        writer = LLMWriter(api_key="k", base_url=fake.base_url, model="m", timeout=5)
        writer.write(request(), problems=["4.500: not in the evidence"], previous='{"reply": "4.500"}')
    messages = fake.requests[0]["body"]["messages"]
    assert messages[-2] == {"role": "assistant", "content": '{"reply": "4.500"}'}
    assert "4.500: not in the evidence" in messages[-1]["content"]


@pytest.mark.parametrize("step", [500, "not json at all", json.dumps({"customer_message": 3}), "[1, 2]",
                                  json.dumps({"reply": "Cuesta 350,00", "evidence_ids": [], "needs_human": False}),
                                  json.dumps({"customer_message": "", "internal_note": "", "evidence_ids": [],
                                              "needs_human": False})])
def test_model_failures_and_garbage_raise_writer_error(step):
    with FakeOpenAI() as fake:
        fake.chat_script = [step]
        writer = LLMWriter(api_key="k", base_url=fake.base_url, model="m", timeout=5)
        with pytest.raises(WriterError):
            writer.write(request())


def test_a_timeout_is_a_writer_error():
    with FakeOpenAI() as fake:
        fake.chat_script = [HANG]
        writer = LLMWriter(api_key="k", base_url=fake.base_url, model="m", timeout=0.3)
        with pytest.raises(WriterError, match="Timeout"):
            writer.write(request())


def test_an_unreachable_server_is_a_writer_error():
    writer = LLMWriter(api_key="k", base_url="http://127.0.0.1:9/v1", model="m", timeout=0.5)
    with pytest.raises(WriterError, match="model call failed"):
        writer.write(request())


def test_parse_draft_keeps_the_raw_output():
    raw = json.dumps({"customer_message": " ok [E1] ", "internal_note": " why [E1] ", "evidence_ids": ["E1"],
                      "needs_human": False})
    draft = parse_draft(raw)
    assert (draft.reply, draft.note, draft.raw) == ("ok [E1]", "why [E1]", raw)


def test_template_writer_copies_facts_when_no_composition_fits_the_capability():
    draft = TemplateWriter().write(request(query="por qué subió mi factura", evidence=EVIDENCE))
    assert draft.reply == "Diferencia factura 2026-10 vs 2026-09 = 14,00 USD. [E2]"
    assert draft.note.startswith("No composed answer for capability ?: the facts were copied as they are [E2].")


def test_template_writer_answers_with_the_decisive_sentence_of_the_best_chunk():
    draft = TemplateWriter().write(request())
    assert draft.reply == "La reconexión cuesta Bs. 350,00. [E1]"
    assert draft.note.startswith("Answered from the knowledge base: an amount question, answered with the sentences "
                                 "of ? § ? [E1]")


def test_template_writer_asks_for_a_human_when_no_sentence_matches():
    draft = TemplateWriter().write(request(query="¿venden teléfonos?"))
    assert draft.needs_human


def test_decisive_sentence_prefers_numbers_when_the_question_asks_an_amount():
    text = "T\nH\n\nLa reconexión se solicita por WhatsApp. La reconexión cuesta Bs. 350,00."
    assert decisive_sentence_scored("¿cuánto cuesta la reconexión?", text)[0] == "La reconexión cuesta Bs. 350,00."


def test_a_clock_time_is_not_an_amount():
    text = "Reconexión\nHorario\n\nLas reconexiones se hacen de 8:00 a 18:00. Reactivar la línea cuesta Bs. 350,00."
    assert decisive_sentence_scored("¿cuánto cobran por la reconexión?", text)[0] == "Reactivar la línea cuesta Bs. 350,00."


def test_the_decisive_sentence_may_come_from_a_lower_ranked_chunk():
    evidence = [
        Evidence("E1", "Reconnecting a Home Line\nWhat reconnection costs\n\nA home line costs Bs. 350.00 to reactivate."),
        Evidence("E2", "Business plans\nBilling and collections\n\nBusiness accounts pay a reconnection fee of USD 10.00."),
    ]
    sources = {"E1": {"kind": "chunk", "language": "en"}, "E2": {"kind": "chunk", "language": "en"}}
    draft = TemplateWriter().write(WriterRequest(query="What is the reconnection fee for business plans?",
                                                 language="en", evidence=evidence, sources=sources))
    assert draft.reply == "Business accounts pay a reconnection fee of USD 10.00. [E2]"
