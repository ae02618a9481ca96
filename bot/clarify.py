"""When the bot asks one short question before answering, and how it reads the reply. Pure: no Django.

Two ambiguities, both decided from data, never from a golden set:
- a document question whose top kept chunks come from sibling documents — documents a KB editor
  marked as alternatives of one another, each with a short label ("plan mensual" / "plan anual" /
  "plan de prueba") — when the question names none of them: the siblings answer it differently;
- a "why did my bill change" question whose words name a month the account has no invoice for yet
  ("diciembre" before December's bill is issued): the customer may mean the latest bill or the one
  before it. Words that name one invoice decide without a question: "este mes" / "this month" / "la
  que me acaba de llegar" is the newest invoice (the current period's when it is issued, else the
  latest), "el mes pasado" / "last month" / "la anterior" the one before it, a month name that month
  (the most recent one on or before today), `2026-10` that period; no period words at all mean the
  newest invoice.

The bot offers the options, keeps the original question on the conversation and answers it with the
option the customer picks: a label word ("anual", "octubre"), or its position ("el segundo", "2").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from bot.compose import MONTHS, month_name
from bot.document_answers import NOT_A_WORKING_DAY
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
# A follow-up that points at "the other one" or "mine" and names nothing (bot/followups.py): the customer says which.
WHICH_ONE_QUESTION = {"es": "¿A cuál te refieres? Dime cuál (el plan, la factura o el trámite) y te respondo.",
                      "en": "Which one do you mean? Tell me which (the plan, the bill or the request) and I'll answer."}


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
    segment: str = ""  # a kind of customer option: home | business

    def as_json(self) -> dict:
        return {"label": self.label, "doc": self.doc, "period": self.period, "segment": self.segment}


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


def term_sibling(kept: list[tuple[str, str]], siblings: dict[str, Sibling], term: str) -> Option | None:
    """Return the sibling document that answers a customer whose contract term billing reports, None when none does.

    `kept` holds (document, the term its chunk is written for, "" for any) for each kept chunk, best first. The
    sibling written for the customer's term wins; else the one sibling left that names no term (the monthly rules,
    once retrieval left out the annual plan's and the trial's pages for a monthly customer)."""
    if not term:
        return None
    fitting = [(doc, written_for) for doc, written_for in kept if doc in siblings and written_for in (term, "")]
    exact = next((doc for doc, written_for in fitting if written_for == term), None)
    docs = {doc for doc, _written_for in fitting}
    theirs = exact or (next(iter(docs)) if len(docs) == 1 else None)
    return None if theirs is None else Option(siblings[theirs].label, doc=theirs)


# Words that point at the newest invoice and at the one before it (folded: no accents, lower case).
THIS_PERIOD = re.compile(
    r"\b(este mes|esta factura|mes actual|factura actual|(?:me )?acaba(?:n)? de llegar|(?:me )?acaba de (?:salir|venir)"
    r"|la (?:ultima|nueva|mas reciente)|this month|current (?:bill|invoice|month)|(?:just|recently) (?:got|came|arrived"
    r"|received)|(?:latest|newest|most recent|new) (?:bill|invoice))\b")
_PREVIOUS_WORDS = (r"mes pasado|mes anterior|factura anterior|factura pasada|recibo anterior|la anterior|la pasada"
                   r"|last month|previous (?:month|bill|invoice)|the one before|month before")
PREVIOUS_PERIOD = re.compile(r"\b(?:" + _PREVIOUS_WORDS + r")\b")
# "higher than last month" compares the newest invoice with the one before: it names the newest.
_COMPARED = re.compile(r"\b(?:than|que|vs|versus|compared (?:to|with)|comparad[oa] con|respecto a|frente a)\s+"
                       r"(?:(?:the|my|el|la|lo|del|de|al|a)\s+)*(?:" + _PREVIOUS_WORDS + r")\b")
# "the one before was lower", "la anterior fue más baja", "my previous bill was lower than this one": the earlier bill
# measured against the newest one — the change asked about is the newest one's.
# ("Why was last month's bill higher?" is not one: it may ask about last month's own change.)
_PREVIOUS_MEASURED = re.compile(r"\b(?:the one before|the previous one|previous (?:bill|invoice)|la anterior|el anterior|"
                                r"factura anterior|recibo anterior|la pasada)\b.{0,30}\b(?:higher|lower|"
                                r"more|less|cheaper|bigger|smaller|mas alta|mas baja|mas cara|mas barata|menor|mayor|"
                                r"menos)\b")
# "pero si yo pagué la del mes pasado": the bill they say they paid, not the one a question about a change asks about.
_PAID_THE_PREVIOUS = re.compile(r"\b(?:pague|pagamos|cancele|cancelamos|paid)\s+(?:(?:the|my|el|la|lo|del|de|for)\s+)*"
                                r"(?:" + _PREVIOUS_WORDS + r")\b")
_YEAR = r"(?:\s+(?:de|del|of)?\s*(\d{4}))?"
_MONTH_WORDS = {fold(name, case="lower"): number for names in MONTHS.values()
                for number, name in enumerate(names, start=1)}
_MONTH_WORDS.update({"sept": 9, "setiembre": 9, "oct": 10, "nov": 11, "dic": 12, "dec": 12})
# English "may" is mostly the verb: it names the month only beside a bill word or a preposition.
_MONTH_RE = re.compile(r"\b(" + "|".join(sorted((w for w in _MONTH_WORDS if w != "may"), key=len, reverse=True))
                       + r")\b" + _YEAR + r"|\b(?:in|of|for|from) (may)\b" + _YEAR + r"|\b(may)(?='s| bill| invoice)")
_ISO_PERIOD = re.compile(r"(?<![\d-])(\d{4})-(0[1-9]|1[0-2])(?![\d-])")


def named_periods(query: str, *, today: date) -> list[str]:
    """Return the YYYY-MM periods a question names by month (the most recent on or before today) or as text."""
    text = fold(query, case="lower")
    found = [f"{m.group(1)}-{m.group(2)}" for m in _ISO_PERIOD.finditer(text)]
    for match in _MONTH_RE.finditer(text):
        word = match.group(1) or match.group(3) or match.group(5)
        year = match.group(2) or match.group(4)
        month = _MONTH_WORDS[word]
        if year:
            found.append(f"{year}-{month:02d}")
        else:
            found.append(f"{today.year if month <= today.month else today.year - 1}-{month:02d}")
    return list(dict.fromkeys(found))


def names_a_period(query: str) -> bool:
    """Whether a question's words point at one invoice: a month, a YYYY-MM period, or the one before ("el mes
    pasado", "last month")."""
    text = fold(query, case="lower")
    return bool(_MONTH_RE.search(text) or _ISO_PERIOD.search(text) or PREVIOUS_PERIOD.search(text))


def period_decision(query: str, invoices: list[dict], *, today: date, language: str, about: str = "") -> Decision:
    """Decide which invoice a bill-change question is about, from its words and the account's newest invoices.

    `invoices` holds the newest invoices, newest first (the newest two are enough). `chosen` names the
    invoice to explain (compared with the one before it); a Decision with neither chosen nor options
    means the newest. Options (the newest two) only when the words name a month that has no invoice yet.
    `about` says what the question asks of that bill. About its "change", the bill before named as the one they paid
    ("¿por qué el recargo si pagué la del mes pasado?") is not the one asked about. About a "payment", the bill before
    measured against the newest ("the one before was less right? how much was that bill and the igtf") is the one
    asked about: only a question about a change compares the newest with it.
    """
    if not invoices:
        return Decision()
    newest = invoices[0]["period"]

    def option(period: str) -> Option:
        return Option(month_name(period, language), period=period)

    periods = named_periods(query, today=today)
    if periods:
        latest = max(periods)  # "why is October's higher than September's": October, against the one before it
        if latest <= newest:
            return Decision(chosen=option(latest))
        if len(invoices) < 2:
            return Decision()
        return Decision(options=(option(newest), option(invoices[1]["period"])))
    text = fold(query, case="lower")
    if about == "change":
        text = _PAID_THE_PREVIOUS.sub(" ", text)
    compared = about != "payment" and bool(_COMPARED.search(text) or _PREVIOUS_MEASURED.search(text))
    if (PREVIOUS_PERIOD.search(text) and not THIS_PERIOD.search(text) and not compared
            and len(invoices) > 1):
        return Decision(chosen=option(invoices[1]["period"]))
    return Decision(chosen=option(newest))


SEGMENT_LABELS = {"es": {"home": "hogar", "business": "empresa"}, "en": {"home": "home", "business": "business"}}
SEGMENT_QUESTION = {"es": "Para responderte bien: ¿tu servicio es de {home} o de {business}?",
                    "en": "To answer you properly: is your service a {home} or a {business} account?"}
# After a reply that gave each kind's rule: the question that lets the next reply state theirs alone.
SEGMENT_QUESTION_AFTER = {"es": "¿Tu servicio es de {home} o de {business}? Así te confirmo el que te aplica.",
                          "en": "Is your service a {home} or a {business} account? Then I can confirm the one "
                                "that applies to you."}
_NAMES_SEGMENT = {
    "business": re.compile(r"\b(empresa\w*|negocio\w*|comercio|oficina|local|compania|pyme|business\w*|company|"
                           r"companies|corporate|office|empresarial\w*)\b" + NOT_A_WORKING_DAY),
    # A home plan's name says whose the question is: "el plan de 300 megas", "Fibra 600", "Hogar Básico".
    "home": re.compile(r"\b(hogar|casa|residencial\w*|residential|home|house|household|domestic|personal|particular|"
                       r"fibra|fiber|(100|300|600|1000) ?(megas|mb|mbps|gigas?))\b"),
}


def segment_decision(query: str, segments: list[str], *, language: str, docs: list[str] | None = None) -> Decision:
    """Decide for a question the help center answers differently for home and business customers.

    `segments` holds the segment each kept chunk is written for ("" for everyone), best first; `docs`, when given,
    the document of each. A question that names one kind of customer (or a plan only one kind has) gets it; when
    passages for both kinds rank in the first three and the question names neither, ask. A second passage of a
    document for the same kind of customer counts once: two sections of the business late-fee page are one rule,
    and must not push the home page's rule out of the first three.
    """
    language = language if language in SEGMENT_LABELS else "es"
    labels = SEGMENT_LABELS[language]
    folded = fold(query, case="lower")
    named_segments = [segment for segment, cue in _NAMES_SEGMENT.items() if cue.search(folded)]
    if len(named_segments) == 1:
        return Decision(chosen=Option(labels[named_segments[0]], segment=named_segments[0]))
    # Both kinds of customer have their own rule among the first three passages: the answer depends on which
    # customer asks. A kind further down only touches the subject.
    if docs is not None:
        segments = [segment for _doc, segment in dict.fromkeys(zip(docs, segments, strict=True))]
    top = segments[:3]
    if named_segments or not {"home", "business"} <= set(top):
        return Decision()
    return Decision(options=segment_options(language))


def segment_options(language: str) -> tuple[Option, Option]:
    """The two kinds of customer, home first, labelled in the customer's language."""
    labels = SEGMENT_LABELS[language if language in SEGMENT_LABELS else "es"]
    return Option(labels["home"], segment="home"), Option(labels["business"], segment="business")


def question(kind: str, options: tuple[Option, ...], language: str, *, after_answer: bool = False) -> str:
    """Return the one short question that offers the options (`after_answer`: a segment question put after a reply
    that gave each kind's rule); `which_one` offers none: the customer names the thing."""
    language = language if language in OR else "es"
    labels = [option.label for option in options]
    if kind == "segment":
        asked = SEGMENT_QUESTION_AFTER if after_answer else SEGMENT_QUESTION
        return asked[language].format(home=labels[0], business=labels[1])
    if kind == "period":
        return PERIOD_QUESTION[language].format(first=labels[0], second=labels[1])
    if kind == "which_one":
        return WHICH_ONE_QUESTION[language]
    offered = ", ".join(labels[:-1]) + OR[language] + labels[-1]
    return DOCUMENT_QUESTION[language].format(options=offered)


def pending(kind: str, query: str, options: tuple[Option, ...], language: str) -> dict:
    """Return what the conversation keeps while the question is open."""
    return {"kind": kind, "query": query, "language": language, "options": [o.as_json() for o in options]}


def pending_options(stored: dict) -> tuple[Option, ...]:
    return tuple(Option(o["label"], doc=o.get("doc", ""), period=o.get("period", ""), segment=o.get("segment", ""))
                 for o in stored["options"])
