"""Writers turn evidence into a customer message and an internal note, both with inline [E#] citations.

`LLMWriter` calls any OpenAI-compatible Chat Completions server with a JSON-schema structured
output. `TemplateWriter` needs no model: it composes account answers per capability and language
from the billing facts and key figures (bot/compose.py) and quotes the decisive sentence of the best
chunk for document questions. Every draft is verified the same way, whoever wrote it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Protocol

from billing.answers.evidence import KeyFigure as TurnKeyFigure
from bot.compose import FACTS_ONLY_UNSURE, FactItem, plan_answer
from bot.document_answers import Passage, compose
from bot.grounding import Evidence, KeyFigure
from bot.llm import ModelCallError, openai_client, structured_completion
from bot.prompt import PROMPT_VERSION, RESPONSE_SCHEMA, build_messages
from core.text import fold


@dataclass
class Draft:
    reply: str  # the customer message, with [E#] citations
    evidence_ids: list[str]
    needs_human: bool
    raw: str = ""
    usage: dict = field(default_factory=dict)
    note: str = ""  # the internal note for the agent, with [E#] citations


class WriterError(Exception):
    """The model failed, timed out or returned something that is not the agreed JSON."""

    def __init__(self, message: str, raw: str = ""):
        super().__init__(message)
        self.raw = raw


@dataclass(frozen=True)
class WriterRequest:
    query: str
    language: str
    evidence: list  # grounding.Evidence items, ids E1…En
    sources: dict  # evidence id -> {"kind": "chunk"|"fact", "doc"?, "fact_kind"?, "derivation"?…}
    history: list[tuple[str, str]] = field(default_factory=list)
    capability: str = ""  # the billing capability that produced the facts, if any
    key_figures: list[TurnKeyFigure] = field(default_factory=list)  # evidence_id: this turn's E#
    segment: str = ""  # the customer's kind ("home", "business") when billing or the customer said it
    said: str = ""  # the bot's previous reply, when the question follows up on it

    @property
    def required(self) -> list[KeyFigure]:
        """Return the primary key figures the customer message must state, for the verifier."""
        return [KeyFigure(k.figure, k.evidence_id, k.name) for k in self.key_figures if k.role == "primary"]

    @property
    def formulas(self) -> dict[str, str]:
        """Return the derivation of each computed fact, by evidence id."""
        return {eid: source["derivation"] for eid, source in self.sources.items() if source.get("derivation")}

    def note_evidence(self) -> list[Evidence]:
        """Return the evidence the internal note is checked against: facts carry their formulas."""
        formulas = self.formulas
        return [Evidence(e.id, f"{e.text}\n{formulas[e.id]}" if e.id in formulas else e.text, e.value)
                for e in self.evidence]


def fact_evidence(facts, *, first: int) -> tuple[list[Evidence], dict[str, dict]]:
    """Number billing facts as evidence E{first}…, with the source of each (kind, currency, formula)."""
    evidence, sources = [], {}
    for number, fact in enumerate(facts, start=first):
        evidence.append(Evidence(id=f"E{number}", text=fact.text, value=fact.value))
        sources[f"E{number}"] = {"kind": "fact", "fact_kind": fact.kind, "currency": fact.currency,
                                 "derivation": fact.derivation}
    return evidence, sources


def turn_key_figures(key_figures, *, first: int) -> list[TurnKeyFigure]:
    """Renumber a ToolResult's key figures (`F3` = its third fact) to the turn's ids (facts start at E{first})."""
    return [replace(figure, evidence_id=f"E{first + figure.index}") for figure in key_figures]


class Writer(Protocol):
    name: str
    prompt_version: str
    can_rewrite: bool

    def write(self, request: WriterRequest, *, problems: list[str] | None = None,
              previous: str | None = None) -> Draft: ...


class LLMWriter:
    can_rewrite = True
    prompt_version = PROMPT_VERSION

    def __init__(self, *, api_key: str, base_url: str | None, model: str, timeout: float):
        # One attempt per call: the turn decides about the single retry, so outages do not multiply load.
        self._client = openai_client(api_key=api_key, base_url=base_url, timeout=timeout)
        self.model = model
        self.name = model

    def write(self, request, *, problems=None, previous=None) -> Draft:
        messages = build_messages(query=request.query, evidence=request.evidence, language=request.language,
                                  history=request.history, problems=problems, previous=previous,
                                  formulas=request.formulas, key_figures=request.required)
        try:
            raw, usage = structured_completion(self._client, model=self.model, messages=messages,
                                               schema_name="billing_reply", schema=RESPONSE_SCHEMA)
        except ModelCallError as exc:
            raise WriterError(f"model call failed: {exc}") from exc
        return parse_draft(raw, usage=usage)


def parse_draft(raw: str, *, usage: dict | None = None) -> Draft:
    """Parse the model's JSON into a Draft; raise WriterError on anything else."""
    try:
        payload = json.loads(raw)
    except (json.JSONDecodeError, TypeError) as exc:
        raise WriterError("model output is not JSON", raw=raw) from exc
    if not isinstance(payload, dict):
        raise WriterError("model output is not a JSON object", raw=raw)
    reply, note = payload.get("customer_message"), payload.get("internal_note")
    ids, needs_human = payload.get("evidence_ids"), payload.get("needs_human")
    if not isinstance(reply, str) or not isinstance(note, str) or not isinstance(needs_human, bool) \
            or not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise WriterError("model output does not match the answer schema", raw=raw)
    if not reply.strip() and not needs_human:
        raise WriterError("model returned an empty customer message", raw=raw)
    return Draft(reply=reply.strip(), evidence_ids=ids, needs_human=needs_human, raw=raw, usage=usage or {},
                 note=note.strip())


_WORD = re.compile(r"\w+", re.UNICODE)
# A sentence ends at . ! ? followed by a capital or an opening mark — not inside "Bs. 350,00" or "Sr. Pérez".
_SENTENCE = re.compile(r"(?<![A-Z][a-z]\.)(?<=[.!?。！？])\s+(?=[A-ZÁÉÍÓÚÑ¿¡\"(])|\n+")
_STOP = {
    "el", "la", "los", "las", "de", "del", "que", "por", "para", "con", "una", "uno", "unos", "unas", "y", "o",
    "en", "mi", "me", "se", "su", "sus", "es", "al", "lo", "le", "si", "no", "ya", "como", "cuanto", "cuando",
    "the", "a", "an", "of", "to", "in", "on", "for", "my", "is", "are", "and", "or", "it", "do", "i", "you",
    "how", "what", "much", "does", "can", "your", "be", "if", "at", "este", "esta", "hay",
}
_ASKS_AMOUNT = re.compile(r"\b(cuanto|cuesta|cobran|precio|monto|how much|cost|price|fee|charge)", re.I)


def _stems(text: str) -> set[str]:
    return {w[:5] for w in _WORD.findall(fold(text, case="lower")) if w not in _STOP and len(w) > 2}


# When no composition fits the capability: the facts that answer "why did my bill change" first.
_FACT_PRIORITY = {kind: rank for rank, kind in enumerate([
    "invoice_delta", "duplicate_charge", "promotion_ended", "promotion_value", "proration", "proration_days",
    "late_fee", "late_fee_basis", "reconnection", "tax_rate_change", "tax_rate_effect", "outage_credit",
    "payment_failed", "payments_vs_total", "days_overdue", "days_until_due", "invoice_total", "payment",
    "plan", "plan_price", "promotion_active",
])}

QUOTE_NOTE = ("Answered from the knowledge base: {article} {kind} question, answered with the sentences of {cited} that "
              "hold that kind of fact and the question's words. No figure was computed.\nUnsure: the bot matched "
              "words, not meaning — check that this document applies to the customer.")


class TemplateWriter:
    """No model: account answers composed per capability and language, or the chunk sentence that best matches."""

    name = "template"
    prompt_version = "template-2"
    can_rewrite = False

    def __init__(self, *, fallback_reason: str = ""):
        # Set when the template stands in for a model whose drafts failed: the note says so. No figures in it
        # (the note is verified, and the failed drafts' figures are exactly the ones that did not check out).
        self.fallback_reason = fallback_reason

    def write(self, request, *, problems=None, previous=None) -> Draft:
        facts = [e for e in request.evidence if request.sources.get(e.id, {}).get("kind") == "fact"]
        if facts:
            return self._account(request, facts)
        chunks = [e for e in request.evidence if request.sources.get(e.id, {}).get("kind") == "chunk"]
        passages = [Passage(e.id, e.text, doc=request.sources[e.id].get("doc", ""),
                            language=request.sources[e.id].get("language", ""),
                            segment=request.sources[e.id].get("segment", ""),
                            term=request.sources[e.id].get("term", "")) for e in chunks]
        # The sentences that answer the question's kind, from up to two passages (bot/document_answers.py): the
        # answer may sit in the second or third chunk ("business reconnection fee" lives in the business-plans
        # page, not in the home reconnection page that ranks first).
        composed = compose(request.query, passages, language=request.language, segment=request.segment,
                           said=request.said)
        if composed is None:
            return Draft(reply="", evidence_ids=[], needs_human=True, raw="")
        cited = ", ".join(f"{request.sources[i].get('doc', '?')} § {request.sources[i].get('section', '?')} [{i}]"
                          for i in composed.evidence_ids)
        article = "an" if composed.kind[0] in "aeiou" else "a"
        note = QUOTE_NOTE.format(article=article, kind=composed.kind, cited=cited)
        return Draft(reply=composed.reply, evidence_ids=composed.evidence_ids, needs_human=False, raw=composed.reply,
                     note=self._noted(note))

    def _noted(self, note: str) -> str:
        return f"{note}\nFallback: {self.fallback_reason}" if self.fallback_reason else note

    def _account(self, request, facts) -> Draft:
        items = [FactItem(e.id, request.sources[e.id].get("fact_kind", ""), e.value,
                          request.sources[e.id].get("currency"), e.text, request.sources[e.id].get("derivation"))
                 for e in facts]
        composed = plan_answer(capability=request.capability, facts=items, figures=request.key_figures,
                               language=request.language, query=request.query)
        if composed is not None:
            return Draft(reply=composed.customer_message, evidence_ids=composed.evidence_ids, needs_human=False,
                         raw=composed.customer_message, note=self._noted(composed.internal_note))
        # No composition for this capability: the facts themselves, most telling first.
        chosen = sorted(facts, key=lambda e: _FACT_PRIORITY.get(request.sources[e.id].get("fact_kind"), 99))[:3]
        reply = " ".join(f"{_sentence(e.text)} [{e.id}]" for e in chosen)
        note = (f"No composed answer for capability {request.capability or '?'}: the facts were copied as they are "
                f"{''.join(f'[{e.id}]' for e in chosen)}.\nUnsure: {FACTS_ONLY_UNSURE}")
        return Draft(reply=reply, evidence_ids=[e.id for e in chosen], needs_human=False, raw=reply,
                     note=self._noted(note))


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?")) else text + "."


# Money, not any digit: "8:00 a 18:00" is no answer to "¿cuánto cobran?".
_AMOUNT = re.compile(r"(?:Bs\.?|USD|US\$|\$)\s?\d|\d[\d.,]*\s?(?:USD|Bs\b|bol[ií]vares|d[oó]lares|%)|\b\d+[.,]\d{2}\b",
                     re.IGNORECASE)


def decisive_sentence_scored(query: str, chunk_text: str) -> tuple[str, float]:
    """Return the best sentence of a chunk for the query and its score (('', 0) when nothing relates).

    Words shared with the query count; when the query asks for an amount, a sentence holding a
    number counts double, provided the chunk's title and heading are about the query.
    """
    head, body = chunk_text.split("\n\n", 1) if "\n\n" in chunk_text else ("", chunk_text)
    wanted = _stems(query)
    heading_overlap = len(wanted & _stems(head))
    heading_matches = bool(heading_overlap)
    wants_amount = bool(_ASKS_AMOUNT.search(query))
    best, best_score = "", 0.0
    for sentence in (s.strip() for s in _SENTENCE.split(body)):
        if len(sentence) < 12 or sentence.startswith("#"):
            continue
        overlap = len(wanted & _stems(sentence))
        if not overlap and not heading_matches:
            continue
        # The heading says what the whole section is about: it counts for each of its sentences.
        score = overlap + heading_overlap + (2.0 if wants_amount and _AMOUNT.search(sentence) else 0.0)
        if score > best_score:
            best, best_score = sentence, score
    return (_sentence(best.lstrip("-• ")), best_score) if best else ("", 0.0)


def get_writer() -> Writer:
    """Return the LLM writer when a model is configured, the template writer otherwise."""
    from django.conf import settings

    if settings.OPENAI_API_KEY or settings.OPENAI_BASE_URL:
        return LLMWriter(api_key=settings.OPENAI_API_KEY, base_url=settings.OPENAI_BASE_URL,
                         model=settings.OPENAI_MODEL, timeout=settings.OPENAI_TIMEOUT_S)
    return TemplateWriter()
