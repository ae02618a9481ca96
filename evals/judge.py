"""A faithfulness judge with one criterion: is every claim of the answer supported by the evidence given?

`FaithfulnessJudge` calls any OpenAI-compatible Chat Completions server through the `openai` client with a
JSON-schema structured output. Its system prompt is a versioned file, `evals/judge_prompts/<version>.md`,
whose sha256 is pinned in `evals/judge_prompts/MANIFEST.json`: an edited file is refused, so a changed
prompt is a new file and a new manifest entry, and a calibration (TPR/TNR) measured for one version is never
applied to another. `LexicalJudge` is the offline judge used when no model is configured.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from bot.escalation import ASK_FOR_IDENTITY, CUSTOMER_NOTICE
from bot.llm import ModelCallError, openai_client, structured_completion
from core.text import fold, number_key

PROMPTS_DIR = Path(__file__).resolve().parent / "judge_prompts"
MANIFEST_NAME = "MANIFEST.json"
_PROMPT_VERSION_RE = re.compile(r"(?P<name>[a-z][a-z0-9_]*(?:-[a-z][a-z0-9_]*)*)-(?P<number>\d+)")

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


class JudgePromptError(Exception):
    """A judge prompt version that is missing, unlisted in the manifest, or edited after its release."""


@dataclass(frozen=True)
class JudgePrompt:
    version: str
    text: str
    sha256: str


def judge_prompt_versions(*, folder: Path = PROMPTS_DIR) -> list[str]:
    """Return the prompt versions (`<name>-<N>.md` files) in the folder, lowest number first."""
    found = []
    for path in folder.glob("*.md"):
        match = _PROMPT_VERSION_RE.fullmatch(path.stem)
        if match:
            found.append((int(match["number"]), match["name"], path.stem))
    return [version for _, _, version in sorted(found)]


def load_judge_prompt(version: str | None = None, *, folder: Path = PROMPTS_DIR) -> JudgePrompt:
    """Return the prompt of `version` (default: the highest number), refusing a file the manifest does not pin."""
    versions = judge_prompt_versions(folder=folder)
    if not version:
        if not versions:
            raise JudgePromptError(f"no judge prompt (<name>-<N>.md) in {folder}")
        version = versions[-1]
    if version not in versions:
        raise JudgePromptError(f"no judge prompt {version!r} in {folder}; there are: {', '.join(versions) or 'none'}")
    path = folder / f"{version}.md"
    try:
        manifest = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise JudgePromptError(f"cannot read {folder / MANIFEST_NAME}: {exc}") from exc
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    pinned = manifest.get(version) if isinstance(manifest, dict) else None
    if pinned is None:
        raise JudgePromptError(f"judge prompt {version!r} is not in {MANIFEST_NAME}: add "
                               f'"{version}": "{digest}" to release it')
    if pinned != digest:
        raise JudgePromptError(
            f"judge prompt {path.name} was edited after its release (sha256 {digest[:12]}…, {MANIFEST_NAME} pins "
            f"{str(pinned)[:12]}…): a changed prompt is a new version — restore the file, save the change as a "
            f"new <name>-<N+1>.md and add its hash to {MANIFEST_NAME}")
    # The file ends with a newline; the prompt does not.
    return JudgePrompt(version=version, text=data.decode("utf-8").removesuffix("\n"), sha256=digest)


def build_judge_messages(*, prompt: str, answer: str, evidence: Sequence[EvidenceItem],
                         question: str = "") -> list[dict]:
    """Return the chat messages that put the evidence and the answer before the judge."""
    passages = "\n".join(_passage(item) for item in evidence) or "(no evidence was given)"
    asked = f"Customer question:\n{question}\n\n" if question else ""
    return [
        {"role": "system", "content": prompt},
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
    """The model judge; its version is the prompt file's version (e.g. "faithfulness-1")."""

    def __init__(self, *, api_key: str, base_url: str | None, model: str, timeout: float,
                 prompt_version: str | None = None, prompts_dir: Path = PROMPTS_DIR):
        prompt = load_judge_prompt(prompt_version, folder=prompts_dir)  # refuses an edited prompt up front
        self.version, self.prompt = prompt.version, prompt.text
        # The client never retries on its own: the judge's single retry is the only one, so it is counted.
        self._client = openai_client(api_key=api_key, base_url=base_url, timeout=timeout)
        self.model = model

    def judge(self, *, answer: str, evidence: Sequence[EvidenceItem], question: str = "") -> Judgement:
        """Return the verdict on whether `evidence` supports every claim of `answer`."""
        messages = build_judge_messages(prompt=self.prompt, answer=answer, evidence=evidence, question=question)
        failure: JudgeError | None = None
        for attempt in range(1, ATTEMPTS + 1):
            try:
                raw = self._complete(messages)
                verdict, reason = parse_judgement(raw)
            except JudgeError as exc:
                failure = exc
                continue
            return Judgement(verdict=verdict, reason=reason, judge_version=self.version, model=self.model,
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


# --- The offline judge ------------------------------------------------------------------------------------------

LEXICAL_JUDGE_VERSION = "lexical-support-1"
# A claim is supported when at least this share of its content words occurs in ONE passage.
LEXICAL_MIN_SHARE = 0.6
_STEM = 5  # words compare on their first 5 letters: "reconexion" ~ "reconexiones", "cobran" ~ "cobrar"

_STOP_WORDS = frozenset("""
a al algo algun alguna algunas alguno algunos ante antes aqui asi aun bien cada como con contra cual cuales cuando
de del desde donde dos durante e el ella ellas ellos en entre era es esa esas ese eso esos esta estan estar estas
este esto estos fue ha hay hasta la las le les lo los mas me mi mis muy nada ni no nos nuestra nuestro o otra otro
para pero poco por porque puede pueden que se sea ser si sin sobre solo son su sus tambien te tiene tienen tu tus
un una unas uno unos usted ustedes va y ya
about after all also am an and any are as at be been before but by can could did do does each for from had has
have he her his how i if in into is it its just may me more most my no not now of on once only or other our out
over own same she should so some such than that the their them then there these they this those through to too
under until up very was we were what when where which while who why will with would you your
hola gracias saludos favor buenos buenas dias tardes noches estimado estimada hello hi thanks thank please dear
""".split())
_CITATION_RE = re.compile(r"\[\s*E\d+(?:\s*[,;]\s*E\d+)*\s*\]")
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
_WORD_RE = re.compile(r"[^\W\d_]+")
# A sentence ends at . ! ? followed by a capital or an opening mark — not inside "Bs. 350,00"; or at a newline.
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[¿¡\"“(A-ZÁÉÍÓÚÑ])|\n+")
_PEOPLE_RE = re.compile(r"\b(persona|personas|agente|agentes|asesor|asesora|operador|equipo|humano|person|people|"
                        r"agent|agents|representative|team|human|colleague|colega)\b")
_HANDOVER_RE = re.compile(r"\b(paso|pasamos|pasar|comunic\w*|transfier\w*|transfer\w*|deriv\w*|contactar\w*|"
                          r"respond\w*|atender\w*|atendera|confirm\w*|pass\w*|connect\w*|reply|get back|"
                          r"follow up|will help|ayudar\w*)\b")


def _numbers(text: str) -> set[str]:
    return {number_key(token) for token in _NUMBER_RE.findall(text)}


def _content_stems(text: str) -> set[str]:
    return {w[:_STEM] for w in _WORD_RE.findall(fold(text)) if len(w) > 2 and w not in _STOP_WORDS}


def _claim_sentences(answer: str) -> list[str]:
    """Return the answer's claims: its sentences, cut after each citation marker (the writer cites each claim)."""
    text = answer
    # The bot's own hand-over and identity requests make no claim about billing.
    for notice in (*CUSTOMER_NOTICE.values(), *ASK_FOR_IDENTITY.values()):
        text = text.replace(notice, "\n")
    pieces = (piece for segment in _CITATION_RE.split(text) for piece in _SENTENCE_RE.split(segment))
    sentences = []
    for sentence in (piece.strip(" \t\n,;:") for piece in pieces):
        folded = fold(sentence)
        if not sentence or (not _NUMBER_RE.search(sentence) and len(_content_stems(sentence)) < 2):
            continue  # a greeting or a word of thanks
        if not _NUMBER_RE.search(sentence) and _PEOPLE_RE.search(folded) and _HANDOVER_RE.search(folded):
            continue  # "a person on our team will reply here": a hand-over, not a claim
        sentences.append(sentence)
    return sentences


class LexicalJudge:
    """An offline faithfulness judge by word overlap, for when no model is configured (the demo and CI).

    It passes an answer only when every claim — a sentence, cut after each citation marker since the writer
    cites claim by claim; markers removed — is supported by the evidence: every number in the claim occurs
    somewhere in the evidence (text or value, compared as values: "350,00" = "350.00" = "350"), and at least
    LEXICAL_MIN_SHARE (0.6) of its content words — accent-folded, lowercase, Spanish and English stop words
    and greetings dropped, compared on their first five letters — occur in ONE passage. Sentences that only hand over to a person, ask for the customer's
    identity or greet make no claim, so an answer that only hands over passes. The reason lists the
    unsupported sentences and why.

    It is a measuring instrument like any judge, with its own blind spots (a paraphrase with new words fails,
    a contradiction built from the passage's own words passes): its TPR/TNR are measured against human labels
    under its own version, "lexical-support-1", and its pass rate is corrected with them like a model judge's.
    """

    version = LEXICAL_JUDGE_VERSION
    model = "offline"

    def judge(self, *, answer: str, evidence: Sequence[EvidenceItem], question: str = "") -> Judgement:
        """Return pass when every claim of `answer` is supported by some passage of `evidence`."""
        passages = [(item.id, f"{item.text}\n{getattr(item, 'value', None) or ''}") for item in evidence]
        evidence_numbers = set().union(*(_numbers(text) for _, text in passages)) if passages else set()
        passage_stems = [(passage_id, _content_stems(text)) for passage_id, text in passages]
        claims = _claim_sentences(answer)
        unsupported = []
        for sentence in claims:
            problems = []
            missing = sorted(_numbers(sentence) - evidence_numbers)
            if missing:
                problems.append(f"numbers not in the evidence: {', '.join(missing)}")
            stems = _content_stems(sentence)
            if stems:
                best_id, best = max(((pid, len(stems & words) / len(stems)) for pid, words in passage_stems),
                                    key=lambda pair: pair[1], default=("", 0.0))
                if best < LEXICAL_MIN_SHARE:
                    where = f"best passage {best_id}" if best_id else "no evidence"
                    problems.append(f"{best:.0%} of its content words in one passage ({where}; "
                                    f"needs {LEXICAL_MIN_SHARE:.0%})")
            if problems:
                unsupported.append(f"«{sentence}»: {'; '.join(problems)}")
        if not claims:
            verdict, reason = "pass", "no factual claim (a hand-over, a greeting or an empty answer)"
        elif unsupported:
            verdict = "fail"
            reason = f"{len(unsupported)} of {len(claims)} claims unsupported: " + " | ".join(unsupported)
        else:
            verdict, reason = "pass", f"all {len(claims)} claims supported by the evidence"
        return Judgement(verdict=verdict, reason=reason, judge_version=self.version, model=self.model,
                         attempts=1, raw="")


def get_judge() -> FaithfulnessJudge | LexicalJudge:
    """Return the model judge when a model is configured (JUDGE_MODEL, else OPENAI_MODEL), the offline one otherwise."""
    from django.conf import settings

    if not (settings.OPENAI_API_KEY or settings.OPENAI_BASE_URL):
        return LexicalJudge()
    model = getattr(settings, "JUDGE_MODEL", None) or settings.OPENAI_MODEL
    return FaithfulnessJudge(api_key=settings.OPENAI_API_KEY, base_url=settings.OPENAI_BASE_URL, model=model,
                             timeout=settings.OPENAI_TIMEOUT_S,
                             prompt_version=getattr(settings, "JUDGE_PROMPT_VERSION", "") or None)


def _passage(item: EvidenceItem) -> str:
    value = getattr(item, "value", None)
    return f"[{item.id}] {item.text}" + (f" (value: {value})" if value not in (None, "") else "")
