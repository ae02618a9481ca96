"""When the bot asks one short question before answering, and how it reads the reply. Pure: no Django.

Two ambiguities, both decided from data, never from a golden set:
- a document question whose top kept chunks come from sibling documents — documents a KB editor
  marked as alternatives of one another, each with a short label ("plan mensual" / "plan anual" /
  "plan de prueba") — when the question names none of them: the siblings answer it differently;
- a "why did my bill change" question that names no period while the account has more than one
  candidate invoice: the latest one is issued but not yet due (status "open"), so the customer may be
  reading it or the one before.

The bot offers the options, keeps the original question on the conversation and answers it with the
option the customer picks: a label word ("anual", "octubre"), or its position ("el segundo", "2").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.compose import month_name
from core.text import fold

_WORD = re.compile(r"[^\W\d_]+|\d+")
_STEM = 5  # "anual" / "anuales", "prueba" / "pruebas": compare the first letters of a word
_SHARED = frozenset({"plan", "del", "los", "las", "the", "for", "con", "sin", "per", "por"})
ORDINALS = {
    "primero": 0, "primera": 0, "first": 0, "1": 0,
    "segundo": 1, "segunda": 1, "second": 1, "2": 1,
    "tercero": 2, "tercera": 2, "third": 2, "3": 2,
}
DOCUMENT_QUESTION = {"es": "Para responderte bien, ¿cuál es tu caso: {options}?",
                     "en": "To answer you properly, which one is yours: {options}?"}
PERIOD_QUESTION = {"es": "¿Te refieres a tu factura de {first} o a la de {second}?",
                   "en": "Do you mean your {first} bill or the {second} one?"}
OR = {"es": " o ", "en": " or "}


@dataclass(frozen=True)
class Sibling:
    """A KB document that has alternatives: its label and the slugs of the others."""

    doc: str
    label: str
    language: str
    alternatives: tuple[str, ...]


@dataclass(frozen=True)
class Option:
    label: str
    doc: str = ""  # a document option
    period: str = ""  # an invoice option (YYYY-MM)

    def as_json(self) -> dict:
        return {"label": self.label, "doc": self.doc, "period": self.period}


@dataclass(frozen=True)
class Decision:
    """Ask (`options`), or answer with one option the question already names (`chosen`), or neither."""

    options: tuple[Option, ...] = ()
    chosen: Option | None = None


def _stems(text: str) -> set[str]:
    return {word[:_STEM] for word in _WORD.findall(fold(text, case="lower")) if len(word) > 2 or word.isdigit()}


def _distinctive(options: tuple[Option, ...]) -> list[set[str]]:
    """Return, per option, the stems of its label that no other option's label has."""
    stems = [_stems(option.label) - _SHARED for option in options]
    return [own - set().union(*(other for j, other in enumerate(stems) if j != i)) for i, own in enumerate(stems)]


def named(text: str, options: tuple[Option, ...]) -> list[Option]:
    """Return the options a text names by a word of their label that tells them apart."""
    words = _stems(text)
    return [option for option, own in zip(options, _distinctive(options), strict=True) if own & words]


def choose(reply: str, options: tuple[Option, ...]) -> Option | None:
    """Return the option a reply picks (by label word, else by position), None when it picks none or several."""
    picked = named(reply, options)
    if len(picked) == 1:
        return picked[0]
    if picked:
        return None
    positions = {ORDINALS[word] for word in _WORD.findall(fold(reply, case="lower")) if word in ORDINALS}
    if len(positions) == 1 and (position := positions.pop()) < len(options):
        return options[position]
    return None


# Siblings must hold most of what retrieval kept: measured on the sample golden set, the refund questions
# that name no plan keep 4 or 5 of 5 chunks from the refund siblings, while questions about something else
# that merely touch refunds ("if I downgrade mid month do I get money back", "quiero bajar de plan") keep
# 2 or 3 — asking them "annual or trial?" would be a wrong question.
SIBLING_SHARE = 2 / 3


def document_decision(query: str, ranked_docs: list[str], siblings: dict[str, Sibling], *, language: str,
                      share: float = SIBLING_SHARE) -> Decision:
    """Decide for a document question from the document of each kept chunk, best first.

    `siblings` holds the labelled documents among them and their alternatives (retrieved or not).
    """
    labelled = [doc for doc in dict.fromkeys(ranked_docs) if doc in siblings]
    first = next((doc for doc in labelled if siblings[doc].language == language), labelled[0] if labelled else None)
    if first is None:
        return Decision()
    lead = siblings[first]
    group = [first] + [doc for doc in lead.alternatives if doc in siblings and siblings[doc].language == lead.language]
    # Offered in the order of their labels, not of retrieval: near-ties reorder the ranking from one index to
    # the next, and the same question should read the same way every time it is asked.
    ordered = sorted(dict.fromkeys(group), key=lambda doc: (fold(siblings[doc].label, case="lower"), doc))
    options = tuple(Option(siblings[doc].label, doc=doc) for doc in ordered)
    picked = named(query, options)
    if len(picked) == 1:
        return Decision(chosen=picked[0])
    held = [doc for doc in ranked_docs if doc in group]
    if picked or len(set(held)) < 2 or len(held) < share * len(ranked_docs):
        return Decision()  # a comparison of the options, or the siblings are not what retrieval found
    return Decision(options=options)


def period_decision(query: str, invoices: list[dict], *, language: str) -> Decision:
    """Decide for a bill-change question from the account's latest invoices (newest first)."""
    if len(invoices) < 2:
        return Decision()
    options = tuple(Option(month_name(invoice["period"], language), period=invoice["period"])
                    for invoice in invoices[:2])
    picked = named(query, options) + [o for o in options if o.period in query]
    if len(picked) == 1:
        return Decision(chosen=picked[0])
    if picked or invoices[0].get("status") != "open":
        return Decision()
    return Decision(options=options)


def question(kind: str, options: tuple[Option, ...], language: str) -> str:
    """Return the one short question that offers the options."""
    language = language if language in OR else "es"
    labels = [option.label for option in options]
    if kind == "period":
        return PERIOD_QUESTION[language].format(first=labels[0], second=labels[1])
    offered = ", ".join(labels[:-1]) + OR[language] + labels[-1]
    return DOCUMENT_QUESTION[language].format(options=offered)


def pending(kind: str, query: str, options: tuple[Option, ...], language: str) -> dict:
    """Return what the conversation keeps while the question is open."""
    return {"kind": kind, "query": query, "language": language, "options": [o.as_json() for o in options]}


def pending_options(stored: dict) -> tuple[Option, ...]:
    return tuple(Option(o["label"], doc=o.get("doc", ""), period=o.get("period", "")) for o in stored["options"])
