"""The faithfulness judge through the real openai client against a local OpenAI-compatible server, its
versioned prompt files, and the offline lexical judge."""

import hashlib
import json
import shutil

import pytest

from bot.grounding import Evidence
from evals.judge import (
    PROMPTS_DIR,
    FaithfulnessJudge,
    JudgePromptError,
    get_judge,
    judge_prompt_versions,
    load_judge_prompt,
    parse_judgement,
)
from evals.judgement import JudgeError
from evals.offline_judge import LexicalBillJudge, LexicalJudge
from tests.support.fake_openai import FakeOpenAI

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
    assert (judgement.judge_version, judgement.model) == ("faithfulness-1", "judge-model")
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
    assert system == {"role": "system", "content": load_judge_prompt("faithfulness-1").text}
    assert "[E1] Reconexión fibra: la reconexión cuesta Bs. 350,00" in user["content"]
    assert "[E2] Diferencia factura 2026-10 vs 2026-09 = 14,00 USD (value: 14.00)" in user["content"]
    assert ANSWER in user["content"]


def test_an_answer_without_evidence_says_so_to_the_judge():
    _, fake = run_judge([{"reason": "no evidence for the fee", "verdict": "fail"}], evidence=[])
    assert "(no evidence was given)" in fake.requests[0]["body"]["messages"][1]["content"]


def test_parse_judgement_strips_the_reason():
    assert parse_judgement('{"reason": "  fine ", "verdict": "fail"}') == ("fail", "fine")



# --- Versioned prompt files -------------------------------------------------------------------------------------

# sha256 of the module constant JUDGE_SYSTEM_PROMPT that "faithfulness-1" named before prompts became files.
FAITHFULNESS_1_SHA256 = "b81665c21e486187e8c0e4687b866b773275daec9d7a02cce97273d40a1dc8fa"


def prompt_folder(tmp_path):
    folder = tmp_path / "judge_prompts"
    shutil.copytree(PROMPTS_DIR, folder)
    return folder


def release(folder, version, text):
    path = folder / f"{version}.md"
    path.write_text(text + "\n", encoding="utf-8")
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    manifest[version] = hashlib.sha256(path.read_bytes()).hexdigest()
    (folder / "MANIFEST.json").write_text(json.dumps(manifest))


def test_faithfulness_1_is_the_former_module_prompt_verbatim_and_pinned():
    prompt = load_judge_prompt("faithfulness-1")
    assert hashlib.sha256(prompt.text.encode()).hexdigest() == FAITHFULNESS_1_SHA256
    assert prompt.text.startswith("You check one thing about an answer a billing assistant gave a customer")
    manifest = json.loads((PROMPTS_DIR / "MANIFEST.json").read_text())
    assert manifest["faithfulness-1"] == hashlib.sha256((PROMPTS_DIR / "faithfulness-1.md").read_bytes()).hexdigest()
    assert set(judge_prompt_versions()) == set(manifest)  # every released file is pinned, nothing else


def test_an_edited_prompt_file_is_refused(tmp_path):
    folder = prompt_folder(tmp_path)
    path = folder / "faithfulness-1.md"
    path.write_text(path.read_text().replace("Style, tone", "Style, politeness, tone"))
    with pytest.raises(JudgePromptError, match="edited after its release.*new version"):
        load_judge_prompt("faithfulness-1", folder=folder)
    with pytest.raises(JudgePromptError):
        FaithfulnessJudge(api_key="k", base_url="http://127.0.0.1:9/v1", model="m", timeout=1, prompts_dir=folder)


def test_a_new_prompt_file_without_a_manifest_entry_is_refused(tmp_path):
    folder = prompt_folder(tmp_path)
    (folder / "faithfulness-2.md").write_text("Judge strictly.\n")
    with pytest.raises(JudgePromptError, match="not in MANIFEST.json"):
        load_judge_prompt(folder=folder)  # it is the highest, so the default, and unreleased
    with pytest.raises(JudgePromptError, match="no judge prompt 'faithfulness-7'"):
        load_judge_prompt("faithfulness-7", folder=folder)


def test_the_highest_released_version_is_the_default_and_is_recorded_on_each_judgement(tmp_path):
    folder = prompt_folder(tmp_path)
    release(folder, "faithfulness-2", "Judge strictly, version two.")
    release(folder, "faithfulness-10", "Judge strictly, version ten.")
    assert judge_prompt_versions(folder=folder)[-2:] == ["faithfulness-2", "faithfulness-10"]  # numeric order
    with FakeOpenAI() as fake:
        fake.chat_script = [{"reason": "ok", "verdict": "pass"}, {"reason": "ok", "verdict": "pass"}]
        newest = FaithfulnessJudge(api_key="k", base_url=fake.base_url, model="m", timeout=5, prompts_dir=folder)
        pinned = FaithfulnessJudge(api_key="k", base_url=fake.base_url, model="m", timeout=5, prompts_dir=folder,
                                   prompt_version="faithfulness-2")
        assert newest.judge(answer=ANSWER, evidence=EVIDENCE).judge_version == "faithfulness-10"
        assert pinned.judge(answer=ANSWER, evidence=EVIDENCE).judge_version == "faithfulness-2"
    systems = [request["body"]["messages"][0]["content"] for request in fake.requests]
    assert systems == ["Judge strictly, version ten.", "Judge strictly, version two."]


def test_get_judge_is_offline_without_a_model_and_follows_the_settings_with_one(settings):
    settings.OPENAI_API_KEY, settings.OPENAI_BASE_URL, settings.JUDGE_PROMPT_VERSION = "", "", ""
    offline = get_judge()
    assert isinstance(offline, LexicalBillJudge)  # the offline judge that reads bills
    assert (offline.version, offline.model) == ("lexical-support-6", "offline")
    settings.OPENAI_BASE_URL, settings.OPENAI_MODEL = "http://127.0.0.1:9/v1", "writer-model"
    assert (get_judge().model, get_judge().version) == ("writer-model", judge_prompt_versions()[-1])
    settings.JUDGE_MODEL, settings.JUDGE_PROMPT_VERSION = "judge-model", "faithfulness-1"
    assert (get_judge().model, get_judge().version) == ("judge-model", "faithfulness-1")
    settings.JUDGE_PROMPT_VERSION = "faithfulness-99"
    with pytest.raises(JudgePromptError, match="faithfulness-99"):
        get_judge()


# --- The offline judge ------------------------------------------------------------------------------------------

EN_EVIDENCE = [
    Evidence("E1", "Reconnection fee: reconnecting a fibre line costs USD 10.00 and takes 4 business hours."),
    Evidence("E2", "Invoice total 2026-10", "1.234,56"),
]


@pytest.mark.parametrize("answer, evidence, verdict", [
    (ANSWER, EVIDENCE, "pass"),  # two claims, each cited to the passage that makes it
    ("La reconexion cuesta 350 bolivares y se hace en 4 horas habiles [E1].", EVIDENCE, "pass"),  # accents, 350,00
    ("Reconnecting a fibre line costs 10 USD [E1]. Your invoice total is 1234.56 [E2].", EN_EVIDENCE, "pass"),
    ("La reconexión se hace en 2 horas [E1].", EVIDENCE, "fail"),  # a number no passage has
    ("Reconnection costs USD 12.00 [E1].", EN_EVIDENCE, "fail"),
    ("El plan incluye llamadas ilimitadas a todo el país [E1].", EVIDENCE, "fail"),  # a claim no passage makes
    ("La reconexión cuesta Bs. 350,00 [E1]. Además le regalamos un mes gratis de televisión.", EVIDENCE, "fail"),
    ("Gracias por escribirnos. Te paso con una persona de nuestro equipo, que te responderá por aquí en breve.",
     EVIDENCE, "pass"),  # the bot's hand-over notice: no claim
    ("Thanks! An agent from our team will reply here shortly.", [], "pass"),
    ("", [], "pass"),
    ("Reconnection costs USD 10.00 [E1].", [], "fail"),  # a claim with no evidence at all
])
def test_the_offline_judge_passes_only_supported_claims(answer, evidence, verdict):
    judgement = LexicalJudge().judge(answer=answer, evidence=evidence, question="¿cuánto cuesta?")
    assert judgement.verdict == verdict, judgement.reason
    assert (judgement.judge_version, judgement.model, judgement.attempts) == ("lexical-support-1", "offline", 1)


def test_the_offline_judge_names_each_unsupported_sentence_and_why():
    answer = ("La reconexión cuesta Bs. 350,00 [E1]. La reconexión se hace en 2 horas [E1]. "
              "El plan incluye llamadas ilimitadas a todo el país.")
    judgement = LexicalJudge().judge(answer=answer, evidence=EVIDENCE)
    assert judgement.verdict == "fail"
    assert judgement.reason.startswith("2 of 3 claims unsupported")
    assert "«La reconexión se hace en 2 horas»: numbers not in the evidence: 2" in judgement.reason
    assert "«El plan incluye llamadas ilimitadas a todo el país.»" in judgement.reason
    assert "350" not in judgement.reason  # the supported claim is not listed
