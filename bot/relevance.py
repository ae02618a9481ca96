"""Does a reply answer the question asked? The check beside the number check. Pure: no Django.

A grounded reply can still miss: a true sentence about the installation deposit sent to "can I pay my bill in
installments", a worked example sent to "what is the late fee?". The check reads what the question asks for
(bot/document_answers.py: an amount, a time, a list, steps, a definition, a condition, an address or a number) and
refuses a reply that does not hold that kind of fact when the kind is one a text can show: an amount, a time, a
list, an e-mail address, phone number or web address. A reply that
fails is not sent: the writer tries again, then the turn hands off (or declines, when the message is not about
plans, bills or payments).

On the topic, the bar is the lowest there is: the reply and the passages it cites hold at least one of the
question's topical words (not the words every billing question shares: bill, pay, plan…). "Can I pay my bill in
installments?" answered from the installation page holds none. Finer bars were measured and not used: neither the
share of the question's words a reply holds nor the embedder's question–reply cosine separated right from wrong
replies on the dev splits (docs/bot.md gives the figures).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.document_answers import AMOUNT, CONTACT, DURATION, LIST, PRICE_VERBS, STOPWORDS, Sentence, asked_kinds
from core.text import fold


@dataclass(frozen=True)
class Relevance:
    ok: bool
    topic_share: float
    kind: str
    reason: str = ""


# Words every billing question shares: they say nothing about which topic it is on. The verbs a price is asked
# with ("¿cuánto cuesta…?", "¿cuánto cobra…?") are among them, as they are for the writer: "¿cuánto cobra un
# plomero?" shares "cobra" with "se cobra su valor de reposición" and nothing else.
_GENERIC_WORDS_TEXT = (
    "factura facturas bill bills invoice invoices pago pagos pagar payment payments pay plan planes cuenta account "
    "servicio service conectia internet cobra cobrar cobran cobro charge charged cuanto much dinero plata money "
    "tiempo time quiero want need necesito saber know please favor ayuda help")


_WORD = re.compile(r"\w+", re.UNICODE)
# Longer than the writer's five letters: "installments" is not "installation", "descuenten" still "descuenta".
_PREFIX = 8


def _words(text: str) -> set[str]:
    """Return a text's content words, folded, without a plural s and cut to eight letters."""
    found = set()
    for word in _WORD.findall(fold(text, case="lower")):
        if len(word) > 2 and word not in STOPWORDS:
            found.add((word[:-1] if len(word) > 4 and word.endswith("s") else word)[:_PREFIX])
    return found


_GENERIC_WORDS = frozenset(_words(" ".join((_GENERIC_WORDS_TEXT, *PRICE_VERBS))))


def on_topic(query: str, text: str) -> bool:
    """Return whether a text holds one of the question's topical words (True for a question with none)."""
    topical = _words(query) - _GENERIC_WORDS
    return not topical or bool(topical & _words(text))


# The kinds a reply shows on its face, and why a reply without one is refused.
_MISSING = {AMOUNT: "the question asks for an amount and the reply states none",
            DURATION: "the question asks for a time and the reply states none",
            CONTACT: "the question asks where to write or call and the reply gives no address or number"}


def relevance(query: str, reply: str, *, cited: list[str] | None = None, kind: str | None = None) -> Relevance:
    """Return whether a reply addresses the question: one of its topical words in the reply or the passages it cites
    (`cited`), and the kind of fact it asks for. `topic_share` is recorded for the trace."""
    kinds = (kind,) if kind else asked_kinds(query)
    kind = kinds[0]
    topical = _words(query) - _GENERIC_WORDS
    held = _words(reply) | set().union(*(_words(text) for text in cited or []))
    share = len(topical & held) / len(topical) if topical else 1.0
    if topical and not topical & held:
        return Relevance(False, share, kind, "neither the reply nor the passages it cites hold a word of what the "
                                             "question is about: it does not answer what was asked")
    probe = Sentence(passage="", text=reply, heading="", order=0)
    # A question asking two of these ("¿cuánto cuesta y en cuántos días?") is answered in part by either.
    if kind in _MISSING and not any(probe.has(k) for k in kinds if k in _MISSING):
        return Relevance(False, share, kind, _MISSING[kind])
    if kind == LIST and reply.count(",") + reply.count(";") < 1:
        return Relevance(False, share, kind, "the question asks for a list and the reply names one thing")
    return Relevance(True, share, kind)
