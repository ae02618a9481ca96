"""A faithfulness judge with one criterion: is every claim of the answer supported by the evidence given?

Calls any OpenAI-compatible Chat Completions server through the `openai` client with a JSON-schema
structured output. The prompt is versioned by JUDGE_VERSION: a changed prompt is a new version, so a
calibration (TPR/TNR) measured for one version is never applied to another.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from bot.llm import ModelCallError, openai_client, structured_completion

JUDGE_VERSION = "faithfulness-1"

JUDGE_SYSTEM_PROMPT = """\
You check one thing about an answer a billing assistant gave a customer: is every factual claim in \
the answer supported by the evidence passages given with it? Style, tone, helpfulness and \
completeness do not matter; only support does.

The answer FAILS if any of these is true:
1. It makes a claim that no passage makes.
2. It makes a claim that contradicts a passage.
3. It states a rule that a passage gives for one plan, customer type or case as if it applied to all.
4. It draws a conclusion by stitching two passages together when neither passage states it.
5. It gives a number, amount, date or deadline with a tighter or looser bound than the passage \
(e.g. "within 3 days" where the passage says "within 5 business days").

Otherwise the answer PASSES. An answer that only says it cannot help, or hands over to a person, \
makes no factual claim and passes. Citation markers like [E3] are not claims.

Work in this order: list the factual claims of the answer; for each, quote the decisive words of the \
passage that supports it, or say that none does; then decide. Put that work in "reason" (short), \
then the verdict: "pass" or "fail". Reply with the JSON object only."""

# The reason comes first so the model writes its check before it commits to a verdict.
RESPONSE_SCHEMA = {
    "type": "object",
    "properties": {
        "reason": {"type": "string"},
        "verdict": {"type": "string", "enum": ["pass", "fail"]},
    },
    "required": ["reason", "verdict"],
    "additionalProperties": False,
}

ATTEMPTS = 2  # one call and one retry on an error or unreadable output


class EvidenceItem(Protocol):
    id: str
    text: str


@dataclass(frozen=True)
class Judgement:
    verdict: Literal["pass", "fail"]
    reason: str
    judge_version: str
    model: str
    attempts: int
    raw: str

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"


class JudgeError(Exception):
    """The judge gave no usable verdict after its retry: record it as a judge error, never as a pass."""

    def __init__(self, message: str, *, raw: str = "", attempts: int = 0):
        super().__init__(message)
        self.raw = raw
        self.attempts = attempts


def build_judge_messages(*, answer: str, evidence: Sequence[EvidenceItem], question: str = "") -> list[dict]:
    """Return the chat messages that put the evidence and the answer before the judge."""
    passages = "\n".join(_passage(item) for item in evidence) or "(no evidence was given)"
    asked = f"Customer question:\n{question}\n\n" if question else ""
    return [
        {"role": "system", "content": JUDGE_SYSTEM_PROMPT},
        {"role": "user", "content": f"{asked}Evidence passages:\n{passages}\n\nAnswer to check:\n{answer}"},
    ]


def parse_judgement(raw: str) -> tuple[str, str]:
    """Return (verdict, reason) from the judge's JSON; raise JudgeError on anything else."""
    try:
        payload = json.loads(raw)
    except (json.JSONDecodeError, TypeError) as exc:
        raise JudgeError("judge output is not JSON", raw=raw) from exc
    if not isinstance(payload, dict):
        raise JudgeError("judge output is not a JSON object", raw=raw)
    verdict, reason = payload.get("verdict"), payload.get("reason")
    if verdict not in ("pass", "fail") or not isinstance(reason, str):
        raise JudgeError("judge output does not match the verdict schema", raw=raw)
    return verdict, reason.strip()


class FaithfulnessJudge:
    version = JUDGE_VERSION

    def __init__(self, *, api_key: str, base_url: str | None, model: str, timeout: float):
        # The client never retries on its own: the judge's single retry is the only one, so it is counted.
        self._client = openai_client(api_key=api_key, base_url=base_url, timeout=timeout)
        self.model = model

    def judge(self, *, answer: str, evidence: Sequence[EvidenceItem], question: str = "") -> Judgement:
        """Return the verdict on whether `evidence` supports every claim of `answer`."""
        messages = build_judge_messages(answer=answer, evidence=evidence, question=question)
        failure: JudgeError | None = None
        for attempt in range(1, ATTEMPTS + 1):
            try:
                raw = self._complete(messages)
                verdict, reason = parse_judgement(raw)
            except JudgeError as exc:
                failure = exc
                continue
            return Judgement(verdict=verdict, reason=reason, judge_version=JUDGE_VERSION, model=self.model,
                             attempts=attempt, raw=raw)
        raise JudgeError(f"no verdict after {ATTEMPTS} attempts: {failure}", raw=failure.raw,
                         attempts=ATTEMPTS)

    def _complete(self, messages: list[dict]) -> str:
        try:
            raw, _ = structured_completion(self._client, model=self.model, messages=messages,
                                           schema_name="faithfulness_verdict", schema=RESPONSE_SCHEMA)
        except ModelCallError as exc:
            raise JudgeError(f"judge call failed: {exc}") from exc
        return raw


def get_judge() -> FaithfulnessJudge | None:
    """Return the judge when a model is configured (JUDGE_MODEL, else OPENAI_MODEL), None otherwise."""
    from django.conf import settings

    if not (settings.OPENAI_API_KEY or settings.OPENAI_BASE_URL):
        return None
    model = getattr(settings, "JUDGE_MODEL", None) or settings.OPENAI_MODEL
    return FaithfulnessJudge(api_key=settings.OPENAI_API_KEY, base_url=settings.OPENAI_BASE_URL, model=model,
                             timeout=settings.OPENAI_TIMEOUT_S)


def _passage(item: EvidenceItem) -> str:
    value = getattr(item, "value", None)
    return f"[{item.id}] {item.text}" + (f" (value: {value})" if value not in (None, "") else "")
