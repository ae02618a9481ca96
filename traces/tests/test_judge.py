"""The faithfulness judge through the real openai client against a local OpenAI-compatible server."""

import pytest

from bot.grounding import Evidence
from tests.fake_openai import FakeOpenAI
from traces.judge import (
    JUDGE_SYSTEM_PROMPT,
    JUDGE_VERSION,
    FaithfulnessJudge,
    JudgeError,
    get_judge,
    parse_judgement,
)

EVIDENCE = [
    Evidence("E1", "Reconexión fibra: la reconexión cuesta Bs. 350,00 y se hace en 4 horas hábiles."),
    Evidence("E2", "Diferencia factura 2026-10 vs 2026-09 = 14,00 USD", "14.00"),
]
ANSWER = "La reconexión cuesta Bs. 350,00 [E1] y su factura subió 14,00 USD [E2]."


def run_judge(script, *, answer=ANSWER, evidence=EVIDENCE):
    with FakeOpenAI() as fake:
        fake.chat_script = list(script)
        judge = FaithfulnessJudge(api_key="k", base_url=fake.base_url, model="judge-model", timeout=5)
        try:
            return judge.judge(answer=answer, evidence=evidence), fake
        except JudgeError as exc:
            return exc, fake


def test_a_supported_answer_passes():
    judgement, fake = run_judge([{"reason": "Bs. 350,00: E1 'cuesta Bs. 350,00'.", "verdict": "pass"}])
    assert (judgement.verdict, judgement.passed, judgement.attempts) == ("pass", True, 1)
    assert judgement.reason == "Bs. 350,00: E1 'cuesta Bs. 350,00'."
    assert (judgement.judge_version, judgement.model) == (JUDGE_VERSION, "judge-model")
    assert len(fake.requests) == 1


def test_an_unsupported_claim_fails():
    judgement, _ = run_judge([{"reason": "'en 2 horas': E1 says 4 horas hábiles.", "verdict": "fail"}],
                             answer="La reconexión se hace en 2 horas.")
    assert (judgement.verdict, judgement.passed) == ("fail", False)
    assert "4 horas" in judgement.reason


@pytest.mark.parametrize(
    "garbage",
    [
        "The answer looks fine to me.",  # not JSON
        '["pass"]',  # JSON, not an object
        {"reason": "ok", "verdict": "maybe"},  # verdict outside the enum
        {"verdict": "pass"},  # no reason
        "",  # empty content
    ],
)
def test_garbage_twice_is_a_judge_error_not_a_pass(garbage):
    error, fake = run_judge([garbage, garbage])
    assert isinstance(error, JudgeError)
    assert error.attempts == 2
    assert "no verdict after 2 attempts" in str(error)
    assert len(fake.requests) == 2


def test_garbage_then_a_verdict_is_retried_once():
    judgement, fake = run_judge(["not json", {"reason": "all supported", "verdict": "pass"}])
    assert (judgement.verdict, judgement.attempts) == ("pass", 2)
    assert len(fake.requests) == 2


def test_a_server_error_then_a_verdict_is_retried_once():
    judgement, fake = run_judge([500, {"reason": "E1 supports the fee", "verdict": "pass"}])
    assert (judgement.verdict, judgement.attempts) == ("pass", 2)
    assert len(fake.requests) == 2  # max_retries=0: the client itself did not retry


def test_two_server_errors_give_up_after_two_calls():
    error, fake = run_judge([500, 503, {"reason": "never reached", "verdict": "pass"}])
    assert isinstance(error, JudgeError) and "judge call failed" in str(error)
    assert len(fake.requests) == 2


def test_the_request_carries_the_schema_the_evidence_and_the_answer():
    _, fake = run_judge([{"reason": "ok", "verdict": "pass"}])
    body = fake.requests[0]["body"]
    assert fake.requests[0]["path"].endswith("/chat/completions")
    assert body["model"] == "judge-model" and body["temperature"] == 0
    schema = body["response_format"]["json_schema"]
    assert body["response_format"]["type"] == "json_schema" and schema["strict"] is True
    assert schema["schema"]["properties"]["verdict"]["enum"] == ["pass", "fail"]
    assert schema["schema"]["required"] == ["reason", "verdict"]
    system, user = body["messages"]
    assert system == {"role": "system", "content": JUDGE_SYSTEM_PROMPT}
    assert "[E1] Reconexión fibra: la reconexión cuesta Bs. 350,00" in user["content"]
    assert "[E2] Diferencia factura 2026-10 vs 2026-09 = 14,00 USD (value: 14.00)" in user["content"]
    assert ANSWER in user["content"]


def test_an_answer_without_evidence_says_so_to_the_judge():
    _, fake = run_judge([{"reason": "no evidence for the fee", "verdict": "fail"}], evidence=[])
    assert "(no evidence was given)" in fake.requests[0]["body"]["messages"][1]["content"]


def test_parse_judgement_strips_the_reason():
    assert parse_judgement('{"reason": "  fine ", "verdict": "fail"}') == ("fail", "fine")


def test_no_model_configured_means_no_judge(settings):
    settings.OPENAI_API_KEY, settings.OPENAI_BASE_URL = "", ""
    assert get_judge() is None
    settings.OPENAI_BASE_URL, settings.OPENAI_MODEL = "http://127.0.0.1:9/v1", "writer-model"
    assert get_judge().model == "writer-model"
    settings.JUDGE_MODEL = "judge-model"
    assert get_judge().model == "judge-model"
