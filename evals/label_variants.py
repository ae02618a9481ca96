"""Deliberately wrong copies of real answers, for a person to label beside the answers as they are. Pure.

Real answers of a working answer path are mostly faithful, so a labelled set of them alone has too few fails
to measure how often a judge catches one. Each function here makes one kind of mistake a billing assistant
makes — a figure changed, the cause of a bill change swapped, the direction or the month of the change
turned, a payment's status reversed, a rule negated, a sentence from an unrelated document added — or returns
None when the answer gives it nothing to change. The copies go to a person unlabelled, marked as variants with
what was changed; the person decides whether the copy is still supported (a change can land where it changes
nothing) and labels it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.text import fold, number_key

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_AMOUNT = re.compile(r"\d{1,3}(?:[.,]\d{3})*[.,]\d{2}")  # an amount with cents: 1.624,00, 23.20
_MONTHS = {
    "es": ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
           "noviembre", "diciembre"],
    "en": ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"],
}
# (as written in an answer, what a wrong answer says instead): causes of a bill change.
_CAUSES = [
    ("el fin de una promoción", "un recargo por mora"),
    ("el fin de la promoción", "el cobro de la reconexión"),
    ("un recargo por mora", "la reconexión del servicio"),
    ("la reconexión del servicio", "el fin de una promoción"),
    ("es un cargo que aparece repetido", "es un recargo por mora"),
    ("es un cambio en la tasa de un impuesto", "es un cargo que aparece repetido"),
    ("un crédito de", "un recargo de"),
    ("corresponde al IVA", "corresponde a la reconexión"),
    ("the end of a promotion", "a late payment fee"),
    ("the end of the “", "a late payment fee instead of the “"),
    ("a late payment fee", "the end of a promotion"),
    ("is VAT", "is a reconnection fee"),
]
_DIRECTIONS = [("subió", "bajó"), ("bajó", "subió"), ("más alta", "más baja"), ("went up", "went down"),
               ("went down", "went up")]
_STATUS = [("quedó pagada", "sigue pendiente de pago"), ("no se completó", "se completó"),
           ("is now paid", "is still unpaid"), ("did not go through", "went through"),
           ("saldo pendiente", "saldo a favor")]
_NEGATIONS = [(" se cobra ", " no se cobra "), (" puedes ", " no puedes "), (" debes ", " no debes "),
              (" tiene ", " no tiene "), (" incluye ", " no incluye "), (" se aplica ", " no se aplica "),
              (" es ", " no es "), (" can ", " cannot "), (" is ", " is not "), (" are ", " are not "),
              (" must ", " must not "), (" will ", " will not ")]


@dataclass(frozen=True)
class Variant:
    """A wrong copy of an answer: its text and what was changed (for the labeller's note)."""

    kind: str
    text: str
    change: str


def changed_figure(answer: str, evidence: Sequence[dict]) -> Variant | None:
    """Change the first figure to one the evidence does not state."""
    known = _evidence_numbers(evidence)
    match = next((m for m in _NUMBER.finditer(_without_markers_positions(answer)) if len(m.group()) > 1), None)
    if match is None:
        return None
    token = match.group()
    first = next(i for i, ch in enumerate(token) if ch.isdigit())
    for bump in range(1, 10):
        candidate = token[:first] + str((int(token[first]) + bump) % 10 or 9) + token[first + 1:]
        if number_key(candidate) not in known:
            return Variant("figure", answer[:match.start()] + candidate + answer[match.end():],
                           f"{token} changed to {candidate}")
    return None


def swapped_figures(answer: str, evidence: Sequence[dict]) -> Variant | None:
    """Swap the first two different amounts of the answer (each still in the evidence, each on the wrong thing)."""
    matches = [m for m in _NUMBER.finditer(_without_markers_positions(answer)) if _AMOUNT.fullmatch(m.group())]
    pair = next(((a, b) for i, a in enumerate(matches) for b in matches[i + 1:]
                 if number_key(a.group()) != number_key(b.group())), None)
    if pair is None:
        return None
    a, b = pair
    text = answer[:a.start()] + b.group() + answer[a.end():b.start()] + a.group() + answer[b.end():]
    return Variant("swap", text, f"{a.group()} and {b.group()} swapped")


def swapped_cause(answer: str, evidence: Sequence[dict]) -> Variant | None:
    """Give the bill change another cause than the one the billing finding shows."""
    return _replace_first(answer, _CAUSES, "cause")


def turned_direction(answer: str, evidence: Sequence[dict]) -> Variant | None:
    """Say the bill went down where it went up, or the reverse."""
    return _replace_first(answer, _DIRECTIONS, "direction")


def reversed_status(answer: str, evidence: Sequence[dict]) -> Variant | None:
    """Say a payment or an invoice is in the other state (paid ↔ pending, failed ↔ went through)."""
    return _replace_first(answer, _STATUS, "status")


def moved_month(answer: str, evidence: Sequence[dict]) -> Variant | None:
    """Name the month after the one the answer names."""
    for names in _MONTHS.values():
        for number, name in enumerate(names):
            found = re.search(rf"\b{name}\b", answer)
            if found:
                later = names[(number + 1) % 12]
                return Variant("month", answer[:found.start()] + later + answer[found.end():],
                               f"{name} changed to {later}")
    return None


def negated_rule(answer: str, evidence: Sequence[dict]) -> Variant | None:
    """Negate the first rule the answer states ("se cobra" → "no se cobra"), never one already negated."""
    for written, wrong in _NEGATIONS:
        for found in re.finditer(re.escape(written), answer):
            before = answer[:found.start()].split()[-1:] or [""]
            after = answer[found.end():].split()[:1] or [""]
            if fold(before[0]) in ("no", "not", "ni") or fold(after[0]) in ("decir", "not"):
                continue
            return Variant("negation", answer[:found.start()] + wrong + answer[found.end():],
                           f"“{written.strip()}” → “{wrong.strip()}”")
    return None


def foreign_sentence(answer: str, evidence: Sequence[dict], *, elsewhere: Sequence[str] = (),
                     turn: int = 0) -> Variant | None:
    """Add a sentence of another document, true there but said by no passage of this turn."""
    own = fold(" ".join(str(item.get("text", "")) for item in evidence))
    usable = [sentence for sentence in elsewhere if fold(sentence) not in own and len(sentence.split()) >= 6]
    if not usable:
        return None
    sentence = usable[turn % len(usable)].strip()
    return Variant("foreign", f"{answer.rstrip()} {sentence}", f"added: {sentence}")


BILL_MAKERS: tuple[Callable[..., Variant | None], ...] = (
    swapped_cause, turned_direction, moved_month, reversed_status, changed_figure, swapped_figures)
DOCUMENT_MAKERS: tuple[Callable[..., Variant | None], ...] = (
    changed_figure, negated_rule, foreign_sentence, swapped_figures)


def variants_of(answer: str, evidence: Sequence[dict], *, turn: int, count: int = 1,
                elsewhere: Sequence[str] = ()) -> list[Variant]:
    """Return up to `count` wrong copies of `answer`, each of another kind: mistakes about a bill when the
    evidence holds billing findings, mistakes about a rule otherwise; the kinds start at `turn`, so a set of
    answers gets every kind in turn."""
    makers = BILL_MAKERS if any(item.get("fact_kind") for item in evidence) else DOCUMENT_MAKERS
    made: list[Variant] = []
    for offset in range(len(makers)):
        maker = makers[(turn + offset) % len(makers)]
        variant = (maker(answer, evidence, elsewhere=elsewhere, turn=turn) if maker is foreign_sentence
                   else maker(answer, evidence))
        if variant is not None and variant.text != answer:
            made.append(variant)
        if len(made) == count:
            break
    return made


def _replace_first(answer: str, pairs: list[tuple[str, str]], kind: str) -> Variant | None:
    for written, wrong in pairs:
        at = answer.find(written)
        if at >= 0:
            return Variant(kind, answer[:at] + wrong + answer[at + len(written):], f"“{written.strip()}” → "
                                                                                    f"“{wrong.strip()}”")
    return None


def _evidence_numbers(evidence: Sequence[dict]) -> set:
    known = set()
    for item in evidence:
        for token in _NUMBER.findall(f"{item.get('text', '')} {item.get('value') or ''}"):
            known.add(number_key(token))
    return known


def _without_markers_positions(answer: str) -> str:
    """Return the answer with its [E#] markers blanked out (same length), so their digits are never changed."""
    return re.sub(r"\[E\d+(?:\s*[,;]\s*E\d+)*\]", lambda m: " " * len(m.group()), answer)
