"""What an answer says about a bill, checked against the turn's billing findings. Pure: no Django.

A billing finding is an evidence item with a kind ("invoice_delta", "late_fee", "payment_failed"…), a text that
states it and a value. A bill explanation paraphrases findings — "tu factura de octubre subió Bs. 324,80 por el
fin de una promoción" — so it shares figures with them but few words. Reading it the way a person checks it:

- the change: a claim that the bill went up (down) by an amount needs an invoice difference of that amount
  with that sign;
- the cause: each cause it names (a promotion that ended, a late fee, a repeated charge, a reconnection, a tax,
  a credit) needs a finding of that kind;
- the month: each month it names needs an invoice of that month among the findings;
- the state: "paid" needs a settled invoice, "pending" an open balance, "did not go through" a failed payment;
- the figures next to a cause or a change belong to a finding of that cause or change.

Each check returns the problems it finds as sentences for the judge's reason (empty: nothing wrong).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.text import fold, number_key

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_PERIOD = re.compile(r"\b(20\d\d)-(0[1-9]|1[0-2])\b")
MONTHS = {name: number for names in (
    ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre",
     "diciembre"),
    ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
     "december"),
) for number, name in enumerate(names, start=1)}
MONTHS["setiembre"] = 9


@dataclass(frozen=True)
class Cause:
    """A cause of a bill change: the words that name it and the findings that show it."""

    name: str
    words: tuple[str, ...]  # folded; a word ending in "*" is a prefix
    kinds: frozenset[str]
    in_text: tuple[str, ...] = ()  # a difference by type whose text holds one of these shows it too


CAUSES = (
    Cause("the end of a promotion", ("promocion*", "bienvenida", "promotion*", "welcome discount"),
          frozenset({"promotion_ended", "promotion_value"}), ("descuent", "promoc")),
    Cause("a late fee", ("recargo por mora", "mora", "late fee", "late payment fee", "penalty"),
          frozenset({"late_fee", "late_fee_basis"}), ("mora",)),
    Cause("a repeated charge", ("repetido", "duplicad*", "dos veces", "twice", "duplicate*", "repeated", "double"),
          frozenset({"duplicate_charge"}), ()),
    Cause("a reconnection", ("reconexion*", "reconect*", "reconnect*"), frozenset({"reconnection"}), ("reconex",)),
    Cause("a tax", ("iva", "impuesto*", "tax*", "vat"),
          frozenset({"tax_computation", "tax_rate_change", "tax_rate_effect"}), ("impuest",)),
    Cause("a credit", ("credito*", "credit*", "dias sin servicio", "interrupcion*", "outage*"),
          frozenset({"outage_credit", "credit"}), ("credit",)),
    Cause("a plan change", ("prorrateo", "prorrata", "proration", "prorated", "cambio de plan", "plan change"),
          frozenset({"proration", "proration_days"}), ("prorrat",)),
)
_UP = ("subio", "aumento", "mas alta", "mas alto", "went up", "increased", "higher", "rose")
_DOWN = ("bajo", "disminuyo", "mas baja", "mas bajo", "went down", "decreased", "lower", "dropped")
_PAID = ("quedo pagada", "esta pagada", "ya esta paga", "is now paid", "is paid", "paid in full", "no debes nada")
_PENDING = ("pendiente", "sin pagar", "debes", "adeuda", "unpaid", "outstanding", "you owe", "still owe")
_IN_FAVOUR = ("a favor", "in your favour", "in your favor", "credit balance")
_FAILED = ("no se completo", "fallo", "rechaz*", "did not go through", "failed", "declined", "bounced")
_WENT_THROUGH = ("se completo", "went through", "succeeded", "fue exitoso")
CHANGE_KINDS = frozenset({"invoice_delta"})
# "la mensualidad del plan nuevo es Bs. 400,00 más alta" compares two fees, not two bills.
_FEES = ("mensualidad*", "tarifa*", "cuota*", "precio*", "monthly fee*", "fee", "fees", "price*", "rate")
_BILL = ("factura*", "recibo*", "bill", "bills", "invoice*", "statement*")


@dataclass(frozen=True)
class Finding:
    """A billing finding as the checks read it."""

    kind: str
    text: str  # folded
    numbers: frozenset  # number_key of every figure in its text and value
    value: float | None
    amount: str = ""  # number_key of the value without its sign ("" when it has none)

    @classmethod
    def of(cls, *, kind: str, text: str, value: str | None) -> Finding:
        numbers = frozenset(number_key(token) for token in _NUMBER.findall(f"{text} {value or ''}"))
        try:
            number = float(value) if value not in (None, "") else None
        except ValueError:
            number = None
        amount = number_key(str(value).lstrip("-")) if number is not None else ""
        return cls(kind=kind, text=fold(text), numbers=numbers, value=number, amount=amount)


def has_words(folded: str, words: Sequence[str]) -> bool:
    """Return whether the folded text holds one of the words (a trailing "*" matches any ending)."""
    return any(re.search(rf"\b{re.escape(word[:-1])}\w*" if word.endswith("*") else rf"\b{re.escape(word)}\b",
                         folded) for word in words)


def bill_problems(claim: str, findings: Sequence[Finding]) -> list[str]:
    """Return what a claim gets wrong about the bill in `findings` (empty when nothing, or no findings)."""
    if not findings:
        return []
    folded = fold(claim)
    problems = []
    problems += _cause_problems(folded, claim, findings)
    problems += _change_problems(folded, claim, findings)
    problems += _month_problems(folded, findings)
    problems += _state_problems(folded, findings)
    return problems


def names_the_bill(claim: str) -> bool:
    """Return whether the claim speaks of a bill's change, cause or state (the words the checks read)."""
    folded = fold(claim)
    return (has_words(folded, _UP + _DOWN + _PAID + _PENDING + _FAILED)
            or any(has_words(folded, cause.words) for cause in CAUSES))


def _numbers(text: str) -> list:
    return [number_key(token) for token in _NUMBER.findall(text)]


def _shows(cause: Cause, finding: Finding) -> bool:
    return finding.kind in cause.kinds or (finding.kind in ("delta_by_type", "invoice_delta")
                                           and any(word in finding.text.split("=")[0] for word in cause.in_text))


def _cause_problems(folded: str, claim: str, findings: Sequence[Finding]) -> list[str]:
    """Each cause named needs a finding of its kind; a claim that names causes and no change of the bill gives
    only figures of those findings."""
    named = [cause for cause in CAUSES if has_words(folded, cause.words)]
    problems = []
    showing = []
    for cause in named:
        found = [finding for finding in findings if _shows(cause, finding)]
        # A finding that names the cause in its own words ("… Bs. 1.400,00 al mes antes de IVA") supports naming it,
        # though not a figure put on it.
        if not found and not any(has_words(fold(finding.text), cause.words) for finding in findings):
            problems.append(f"names {cause.name}, which no billing finding shows")
        showing += found
    if named and showing and not has_words(folded, _UP + _DOWN):
        known = set().union(*(finding.numbers for finding in showing))
        stray = [token for token in _NUMBER.findall(claim) if number_key(token) not in known]
        if stray:
            problems.append(f"puts {', '.join(stray)} on {' and '.join(c.name for c in named)}, which its findings "
                            f"do not give")
    return problems


def _change_problems(folded: str, claim: str, findings: Sequence[Finding]) -> list[str]:
    """A claim that the bill went up or down by an amount needs an invoice difference of that amount and sign."""
    up, down = has_words(folded, _UP), has_words(folded, _DOWN)
    changes = [finding for finding in findings if finding.kind in CHANGE_KINDS and finding.value is not None]
    if not (up or down) or not changes or (has_words(folded, _FEES) and not has_words(folded, _BILL)):
        return []  # no change named, no difference to check it on, or a fee that went up, not the bill
    amounts = set(_numbers(claim))
    matching = [change for change in changes if change.amount in amounts]
    problems = []
    if amounts and not matching:
        problems.append("gives the change of the bill an amount no invoice difference has")
    matching = matching or changes
    if up and all(change.value < 0 for change in matching):
        problems.append("says the bill went up; the invoice difference is a decrease")
    if down and all(change.value > 0 for change in matching):
        problems.append("says the bill went down; the invoice difference is an increase")
    return problems


_COMPARED = re.compile(r"\b(respecto a la de|respecto al de|respecto a|frente a la de|comparad[ao] con la de|"
                       r"compared with|compared to|than in|than|vs)\s+(?:the\s+|tu\s+|your\s+)?(\w+)")
_DELTA_PERIODS = re.compile(r"(20\d\d)-(0[1-9]|1[0-2])\s+vs\s+(20\d\d)-(0[1-9]|1[0-2])")


def _month_problems(folded: str, findings: Sequence[Finding]) -> list[str]:
    """Each month named needs an invoice of that month among the findings; a bill that went up or down is the
    later invoice of a difference, and the one it is compared with the earlier."""
    months = {int(month) for finding in findings for _, month in _PERIOD.findall(finding.text)}
    if not months:
        return []
    named = [name for name in MONTHS if re.search(rf"\b{name}\b", folded)]
    problems = [f"names {name}, and no invoice of the findings is of that month" for name in named
                if MONTHS[name] not in months]
    pairs = [(int(later), int(earlier)) for finding in findings if finding.kind in CHANGE_KINDS
             for _, later, _, earlier in _DELTA_PERIODS.findall(finding.text)]
    if not pairs or problems:
        return problems
    compared = next((match.group(2) for match in _COMPARED.finditer(folded) if match.group(2) in MONTHS), None)
    if compared and MONTHS[compared] not in {earlier for _, earlier in pairs}:
        problems.append(f"compares with {compared}; the invoice difference compares with an earlier invoice")
    moved = re.search(r"\b(\w+)\b[^.]*?\b(" + "|".join(_UP + _DOWN) + r")\b", folded)
    before = [name for name in named if moved and re.search(rf"\b{name}\b", folded[:moved.start(2)])
              and name != compared]
    if before and not any(MONTHS[name] in {later for later, _ in pairs} for name in before):
        problems.append(f"says the bill of {before[0]} changed; the invoice difference is of a later invoice")
    return problems


def _state_problems(folded: str, findings: Sequence[Finding]) -> list[str]:
    """"Paid" needs a settled invoice, "pending" an open balance, "did not go through" a failed payment."""
    balances = [finding.value for finding in findings if finding.kind == "payments_vs_total"
                and finding.value is not None]
    open_balance = any(value > 0 for value in balances) or any(
        finding.kind in ("days_overdue", "late_fee_basis") for finding in findings)
    problems = []
    if has_words(folded, _PAID) and balances and not any(value == 0 for value in balances):
        problems.append("says the invoice is paid; the findings show no settled invoice")
    if has_words(folded, _PENDING) and not has_words(folded, _PAID) and (balances or open_balance) \
            and not open_balance:
        problems.append("speaks of an open balance; the findings show every invoice settled")
    if has_words(folded, _IN_FAVOUR) and not any("a favor" in finding.text and finding.numbers & set(_numbers(folded))
                                                  for finding in findings):
        problems.append("speaks of a balance in the customer's favour that no finding gives")
    failed = [finding for finding in findings if finding.kind == "payment_failed"]
    if has_words(folded, _FAILED) and not failed:
        problems.append("says a payment failed; no failed payment is among the findings")
    if has_words(folded, _WENT_THROUGH) and not has_words(folded, _FAILED) and failed \
            and not any(finding.kind == "payment" for finding in findings):
        problems.append("says a payment went through; the findings show it failed")
    return problems

