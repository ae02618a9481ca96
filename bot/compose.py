"""Answers without a model: the customer message and the agent's note, composed from billing facts. Pure.

Decide first, word after. `plan_answer` reads the facts and key figures a billing capability returned
and decides what the answer says — the headline figure and its cause, at most one follow-up fact — as
`Line`s naming a phrase and the cited figures it needs; per-language tables (`PHRASES`, es and en) word
them. Every figure is written in the one money notation (`billing.money.money_text`) and followed by
the citation of the fact that holds it, so the draft goes through the same verifier as a model's (each
figure against the citation after it); the customer sees it without the markers. No field names, no
formulas and no evidence ids reach the customer: those go into the internal note, in English, for the
agent — root cause, the items it rests on, each derived figure's formula, what was left out.

Periods (`2026-10`) and line types are read from the facts' machine forms (a fact's text always names
its period as YYYY-MM; a derivation names its line type), never from customer wording.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from billing.answers.evidence import PRIMARY, KeyFigure
from billing.answers.money import money_text, rate_text
from billing.answers.phrases import PHRASES as BILLING_PHRASES
from bot.joined import own_words
from bot.routing.records import WHICH_PLAN
from core.text import fold


@dataclass(frozen=True)
class FactItem:
    """One billing fact of the turn under its evidence id (key figures point at it: `KeyFigure.evidence_id`
    is the turn's E#, see `bot.writer.turn_key_figures`)."""

    id: str
    kind: str
    value: str | None
    currency: str | None
    text: str
    derivation: str | None = None


@dataclass(frozen=True)
class Composition:
    customer_message: str  # with [E#] citations; the turn strips them for the customer
    internal_note: str  # for the agent, every figure cited
    evidence_ids: list[str] = field(default_factory=list)


# --- per-language tables -------------------------------------------------------------------

MONTHS = {
    "es": ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
           "noviembre", "diciembre"),
    "en": ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"),
}

# Causes of a bill change, by the key figure that names them: "noun" states the amount, "same" is used
# when the amount is the whole change already stated in the headline.
PHRASES = {
    "es": {
        "up": "Tu factura de {month} subió {delta} respecto a la de {previous}",
        "down": "Tu factura de {month} bajó {delta} respecto a la de {previous}",
        "same": "Tu factura de {month} es igual a la de {previous}: {total} en ambas.",
        "first": "Tu factura de {month} es de {total}",
        "because": " por {noun}.",
        "because_same": ": es {noun}.",
        "includes": " e incluye {noun}.",
        "also": "También incluye {noun}.",
        "discount_ended": "el fin de una promoción que te descontaba {amount} al mes",
        "discount_ended_same": "el fin de una promoción que te descontaba ese monto cada mes",
        "discount_ended_named": "el fin de la promoción «{name}», que te descontaba {amount} al mes",
        "discount_ended_named_same": "el fin de la promoción «{name}», que te descontaba ese monto cada mes",
        "overcharge": "un cargo repetido: lo cobrado de más, con IVA, es {amount}",
        "overcharge_same": "un cargo que aparece dos veces; esa diferencia, con IVA, es lo cobrado de más",
        "late_fee": "un recargo por mora de {amount}, calculado sobre {basis} que seguían sin pagar de una "
                    "factura anterior al terminar el plazo de gracia",
        "late_fee_same": "un recargo por mora, calculado sobre {basis} que seguían sin pagar de una factura "
                         "anterior al terminar el plazo de gracia",
        "late_fee_rate": "un recargo por mora de {amount}: el {rate} de {basis} que seguían sin pagar de una "
                         "factura anterior al terminar el plazo de gracia",
        "late_fee_rate_same": "un recargo por mora del {rate} sobre {basis} que seguían sin pagar de una factura "
                              "anterior al terminar el plazo de gracia",
        "late_fee_short": "un recargo por mora de {amount}",
        "reconnection": "la reconexión del servicio, de {amount}",
        "technical_visit": "una visita técnica, de {amount}",
        "installation": "la instalación del servicio, de {amount}",
        "credit": "un crédito a tu favor de {amount}",
        "charge_same": {"reconnection": "la reconexión del servicio", "technical_visit": "una visita técnica",
                        "installation": "la instalación del servicio", "credit": "un crédito a tu favor"},
        "prorated_amount": "el prorrateo de tu cambio de plan: {amount} por {days} días con el plan nuevo",
        "prorated_amount_same": "el prorrateo de tu cambio de plan por {days} días con el plan nuevo",
        "tax_change_effect": "un cambio en la tasa de un impuesto{rates}, que suma {amount}",
        "tax_change_effect_same": "un cambio en la tasa de un impuesto{rates}",
        "rates": ", de {old} a {new}",
        "outage_credit": "un crédito de {amount} por la interrupción del servicio",
        "outage_credit_same": "un crédito por la interrupción del servicio",
        "tax_rest": "El resto, {amount}, corresponde al IVA.",
        "new_fee": "Además, la mensualidad del plan nuevo es {amount} más alta.",
        "promotion_end": "La promoción terminó el {date}.",
        "owed_overdue": "Esta factura tiene un saldo pendiente de {balance} y lleva {days} días vencida.",
        "owed_due": "Esta factura tiene un saldo pendiente de {balance} y vence en {days} días.",
        "payment_ok": "Sí, tu pago de {amount} del {date} se aplicó a tu factura de {month}",
        "payment_ok_paid": ", que quedó pagada.",
        "payment_applied": "Tu pago de {amount} del {date} se aplicó a tu factura de {month}",
        "igtf_paid": "El IGTF de ese pago fue de {igtf}: va en el recibo, no en la factura.",
        "igtf_none": "Ese pago no lleva IGTF en el recibo.",
        "payment_failed": "Tu último intento de pago, de {amount} del {date}, no se aplicó a tu factura de "
                          "{month}: el pago no se completó{reason}.",
        "still_owed": "Tu factura de {month} aún tiene un saldo pendiente de {balance}.",
        "in_favour": "Tu factura de {month} quedó con un saldo a tu favor de {balance}.",
        "failed_before": "Antes hubo un intento de pago de {amount} del {date} que no se completó{reason}.",
        "reason": " ({reason})",
        "was_before": "La de {month} fue de {total}.",
        "summary_paid": "Tu factura de {month}, de {total}, está pagada: recibimos tu pago de {amount} del {date}.",
        "summary_partial": "Recibimos tu pago de {amount} del {date}, pero tu factura de {month}",
        "summary_owed": "Tu factura de {month}",
        "owes_overdue": " tiene un saldo pendiente de {balance} y venció el {date}.",
        "owes_due": " tiene un saldo pendiente de {balance} y vence el {date}.",
        "partial_owes_overdue": " aún tiene un saldo pendiente de {balance} y venció el {date}.",
        "partial_owes_due": " aún tiene un saldo pendiente de {balance} y vence el {date}.",
        "plan": "Tu plan actual cuesta {price} al mes antes de IVA.",
        "plan_named": "Tu plan actual es {name}: cuesta {price} al mes antes de IVA.",
        "latest_invoice": "Tu última factura, la de {month}, es de {total}.",
        "one_invoice": "Tu factura de {month} es de {total}.",
        "earlier_invoice": "La anterior, de {month}, fue de {total}.",
        "line": "La línea de {amount} de tu factura de {month} es «{description}».",
        "tax": "El IVA de tu factura de {month} es de {computed}: el {rate} sobre una base de {base}.",
        "includes_cause": "Tu factura de {month} incluye {noun}.",
        "paid_late": "Tu factura de {month} quedó pagada el {date}, {days} días después de su vencimiento.",
        "line_off": "Los {amount} que se restan en tu factura de {month} son «{description}».",
        "computed": "Se calcula así: {formula}.",
    },
    "en": {
        "up": "Your {month} bill went up by {delta} compared with {previous}",
        "down": "Your {month} bill went down by {delta} compared with {previous}",
        "same": "Your {month} bill is the same as {previous}'s: {total} both times.",
        "first": "Your {month} bill is {total}",
        "because": " because of {noun}.",
        "because_same": ": that is {noun}.",
        "includes": " and includes {noun}.",
        "also": "It also includes {noun}.",
        "discount_ended": "the end of a promotion that took {amount} off each month",
        "discount_ended_same": "the end of a promotion that took that amount off each month",
        "discount_ended_named": "the end of the “{name}” promotion, which took {amount} off each month",
        "discount_ended_named_same": "the end of the “{name}” promotion, which took that amount off each month",
        "overcharge": "a repeated charge: the overcharge, VAT included, is {amount}",
        "overcharge_same": "a charge that appears twice; that difference, VAT included, is the overcharge",
        "late_fee": "a late fee of {amount}, worked out on the {basis} of an earlier bill still unpaid when the "
                    "grace period ended",
        "late_fee_same": "a late fee, worked out on the {basis} of an earlier bill still unpaid when the grace "
                         "period ended",
        "late_fee_rate": "a late fee of {amount}: {rate} of the {basis} of an earlier bill still unpaid when the "
                         "grace period ended",
        "late_fee_rate_same": "a late fee of {rate} on the {basis} of an earlier bill still unpaid when the grace "
                              "period ended",
        "late_fee_short": "a late fee of {amount}",
        "reconnection": "the service reconnection, {amount}",
        "technical_visit": "a technical visit, {amount}",
        "installation": "the service installation, {amount}",
        "credit": "a credit in your favour of {amount}",
        "charge_same": {"reconnection": "the service reconnection", "technical_visit": "a technical visit",
                        "installation": "the service installation", "credit": "a credit in your favour"},
        "prorated_amount": "the proration of your plan change: {amount} for {days} days on the new plan",
        "prorated_amount_same": "the proration of your plan change for {days} days on the new plan",
        "tax_change_effect": "a change in a tax rate{rates}, which adds {amount}",
        "tax_change_effect_same": "a change in a tax rate{rates}",
        "rates": ", from {old} to {new}",
        "outage_credit": "an outage credit of {amount} for the days without service",
        "outage_credit_same": "an outage credit for the days without service",
        "tax_rest": "The rest, {amount}, is VAT.",
        "new_fee": "Your new plan's monthly fee is also {amount} higher.",
        "promotion_end": "The promotion ended on {date}.",
        "owed_overdue": "This bill has {balance} outstanding and is {days} days overdue.",
        "owed_due": "This bill has {balance} outstanding and is due in {days} days.",
        "payment_ok": "Yes, your payment of {amount} on {date} was applied to your {month} bill",
        "payment_ok_paid": ", which is now paid.",
        "payment_applied": "Your payment of {amount} on {date} was applied to your {month} bill",
        "igtf_paid": "The IGTF on that payment was {igtf}: it is on the receipt, not on the invoice.",
        "igtf_none": "That payment carries no IGTF on its receipt.",
        "payment_failed": "Your last payment attempt, {amount} on {date}, was not applied to your {month} bill: "
                          "the payment did not go through{reason}.",
        "still_owed": "Your {month} bill still has {balance} outstanding.",
        "in_favour": "Your {month} bill has {balance} in your favour.",
        "failed_before": "An earlier attempt of {amount} on {date} did not go through{reason}.",
        "reason": " ({reason})",
        "was_before": "The {month} bill was {total}.",
        "summary_paid": "Your {month} bill, {total}, is paid: we received your payment of {amount} on {date}.",
        "summary_partial": "We received your payment of {amount} on {date}, but your {month} bill",
        "summary_owed": "Your {month} bill",
        "owes_overdue": " has {balance} outstanding and was due on {date}.",
        "owes_due": " has {balance} outstanding and is due on {date}.",
        "partial_owes_overdue": " still has {balance} outstanding and was due on {date}.",
        "partial_owes_due": " still has {balance} outstanding and is due on {date}.",
        "plan": "Your current plan costs {price} a month before VAT.",
        "plan_named": "Your current plan is {name}: it costs {price} a month before VAT.",
        "latest_invoice": "Your latest bill, for {month}, is {total}.",
        "one_invoice": "Your {month} bill is {total}.",
        "earlier_invoice": "The one before, for {month}, was {total}.",
        "line": "The {amount} line on your {month} bill is “{description}”.",
        "tax": "The VAT on your {month} bill is {computed}: {rate} of a taxable base of {base}.",
        "includes_cause": "Your {month} bill includes {noun}.",
        "paid_late": "Your {month} bill was paid on {date}, {days} days after its due date.",
        "line_off": "The {amount} taken off your {month} bill is “{description}”.",
        "computed": "It is worked out as {formula}.",
    },
}

# What the agent reads about each cause (English, like every agent-facing text).
CAUSE_LABELS = {
    "discount_ended": "a promotion ended and its monthly discount stopped",
    "overcharge": "a charge is repeated on the bill (overcharge, VAT included)",
    "late_fee": "a late fee on an earlier unpaid balance",
    "charge": "a one-off charge on the bill",
    "prorated_amount": "a mid-cycle plan change was prorated",
    "tax_change_effect": "a tax rate changed",
    "outage_credit": "an outage credit",
}
CAUSES = tuple(CAUSE_LABELS)
CHARGE_KINDS = ("reconnection", "technical_visit", "installation", "credit")

# What a composed answer was unsure of: nothing, since it only copies figures.
FACTS_ONLY_UNSURE = "nothing; every figure is copied from the billing system's facts."

_PERIOD = re.compile(r"(?<![\d-])(\d{4})-(\d{2})(?![\d-])")
_LINE_TYPE = re.compile(r"sum\((\w+) lines")
_RATE = re.compile(r"\) = (-?\d+(?:\.\d+)?)")
# The plan's name in billing's plan fact ("Plan actual: Hogar Básico (30/10 Mbps) a …"): the customer knows their plan
# by it, and "¿qué plan tengo?" is answered with it.
_PLAN_NAME = re.compile(r"^[^:]{1,30}:\s*([^()\d][^()]{0,40}?)\s*\(\d")
_LINE_NAME = re.compile(r"[«“]([^»”]{1,80})[»”]")  # the name a line fact quotes
_CITED = re.compile(r"\[(E\d+)\]")
_FEE_RATE = re.compile(r"(\d+(?:\.\d+)?)% x ")  # a late fee's derivation: "5.00% x (1624.00 - 0.00) = 81.20 …"


# --- notation ------------------------------------------------------------------------------


def _language(language: str) -> str:
    return language if language in PHRASES else "es"


def money(amount: Decimal, currency: str | None, language: str) -> str:
    """Return an amount in the one notation, without its sign (the sentence says up, down or in favour)."""
    return money_text(abs(amount), currency, language) if currency else f"{abs(amount):.2f}"


def day_text(day: date, language: str) -> str:
    """Return a date the verifier can match: 08/10/2026 in Spanish, 2026-10-08 in English."""
    return day.strftime("%d/%m/%Y") if language == "es" else day.isoformat()


def month_name(period: str, language: str) -> str:
    """Return the month of a YYYY-MM period in words (`octubre`); the period itself when it is not one."""
    match = _PERIOD.fullmatch(period)
    if not match or not 1 <= int(match.group(2)) <= 12:
        return period
    return MONTHS[language][int(match.group(2)) - 1]


def periods_of(fact: FactItem) -> list[str]:
    """Return the YYYY-MM periods a fact's text names, in order (dates are not periods)."""
    return [m.group() for m in _PERIOD.finditer(fact.text)]


# --- the plan of an answer -----------------------------------------------------------------


class _Answer:
    """Sentences with their citations, and what the agent's note needs to know about them."""

    def __init__(self, language: str, facts: list[FactItem], *, asks_before: bool = False,
                 amounts: tuple[Decimal, ...] = (), line_types: tuple[str, ...] = (), asks_igtf: bool = False,
                 asks_days_late: bool = False, asks_plan: bool = False, asks_computed: bool = False):
        self.language = language
        self.table = PHRASES[language]
        self.facts = {fact.id: fact for fact in facts}
        self.sentences: list[str] = []
        self.used: list[str] = []  # evidence ids the customer message rests on, in order
        self.cause = ""
        self.cause_ids: list[str] = []
        self.asks_before = asks_before  # the question asks what the bill was before ("y antes cuánto pagaba?")
        self.amounts = amounts  # the amounts the question quotes as asked about ("250 de q?"), not as paid
        self.line_types = line_types  # the kinds of bill line the question names ("ese descuento", "the late fee")
        self.asks_igtf = asks_igtf  # the question asks about the IGTF paid
        self.asks_days_late = asks_days_late  # the question asks how late a bill was paid
        self.asks_plan = asks_plan  # the question asks which plan the customer has: it is said first
        self.asks_computed = asks_computed  # the question asks how a line was worked out ("¿cómo sacan esos 140?")

    def cite(self, text: str, *ids: str) -> str:
        """Return a figure followed by its citation group, and remember the ids."""
        ids = tuple(dict.fromkeys(i for i in ids if i))
        for evidence_id in ids:
            if evidence_id not in self.used:
                self.used.append(evidence_id)
        return f"{text} [{']['.join(ids)}]" if ids else text

    def amount(self, fact: FactItem, value: Decimal | None = None, *ids: str) -> str:
        value = Decimal(fact.value) if value is None else value
        return self.cite(money(value, fact.currency, self.language), fact.id, *ids)

    def date(self, day: date, *ids: str) -> str:
        return self.cite(day_text(day, self.language), *ids)

    def say(self, key: str, **fields) -> str:
        return self.table[key].format(**fields)

    def month(self, fact: FactItem, position: int = 0) -> str:
        periods = periods_of(fact)
        return month_name(periods[position] if len(periods) > position else "", self.language)


def _primary(figures: list[KeyFigure]) -> dict[str, KeyFigure]:
    found: dict[str, KeyFigure] = {}
    for figure in figures:
        if figure.role == PRIMARY:
            found.setdefault(figure.name, figure)
    return found


def _secondary_cause(figures: list[KeyFigure]) -> KeyFigure | None:
    return next((f for f in figures if f.role != PRIMARY and f.name in CAUSES), None)


def _companion(figures: list[KeyFigure], name: str, role: str) -> KeyFigure | None:
    return next((f for f in figures if f.name == name and f.role == role), None)


def _cause_noun(answer: _Answer, cause: KeyFigure, figures: list[KeyFigure], *, same: bool, short: bool = False) -> str:
    """Word a cause as a noun phrase: its amount cited, or without it when the headline already said it."""
    fact = answer.facts[cause.evidence_id]
    name = cause.name
    fields = {}
    if not same:
        fields["amount"] = answer.amount(fact, cause.value)
    if name == "late_fee":
        basis = _companion(figures, "late_fee_basis", cause.role)
        if basis is None or short:  # a follow-up late fee is told with its amount only
            return answer.say("late_fee_short", amount=fields.get("amount") or answer.amount(fact, cause.value))
        fields["basis"] = answer.amount(answer.facts[basis.evidence_id], basis.value)
        rate = _FEE_RATE.match(fact.derivation or "")
        if rate:  # a home late fee is a rate of what was unpaid; a business one is flat, and said as before
            fields["rate"] = answer.cite(rate_text(Decimal(rate.group(1)), answer.language), fact.id)
            return answer.say("late_fee_rate_same" if same else "late_fee_rate", **fields)
    if name == "prorated_amount":
        days = _companion(figures, "prorated_days", cause.role)
        fields["days"] = answer.cite(str(days.value), days.evidence_id) if days else "—"
    if name == "tax_change_effect":
        fields["rates"] = _rates(answer)
    if name == "charge":
        kind = fact.kind if fact.kind in CHARGE_KINDS else "technical_visit"
        return answer.table["charge_same"][kind] if same else answer.say(kind, **fields)
    if name == "discount_ended" and (promotion := _promotion_name(answer)):
        # Named as the invoices and the customer's contract name it ("Descuento de bienvenida").
        return answer.say(f"{name}_named{'_same' if same else ''}", name=promotion, **fields)
    return answer.say(f"{name}_same" if same else name, **fields)


_QUOTED_NAME = re.compile(r"[«“]([^»”\d]{1,60})[»”]")


def _promotion_name(answer: _Answer) -> str:
    """Return the name billing gives the promotion that ended (quoted in its fact), or ""."""
    ended = next((f for f in answer.facts.values() if f.kind == "promotion_ended"), None)
    found = _QUOTED_NAME.search(ended.text) if ended is not None else None
    return found.group(1).strip() if found else ""


def _rates(answer: _Answer) -> str:
    """Return ", de 8 % a 16 % [E#]" from the rate-change fact's derivation (old rate, then new), or ""."""
    change = next((f for f in answer.facts.values() if f.kind == "tax_rate_change"), None)
    rates = _RATE.findall(change.derivation or "") if change is not None else []
    if len(rates) != 2:
        return ""
    old, new = (rate_text(Decimal(rate), answer.language) for rate in rates)
    return answer.say("rates", old=old, new=answer.cite(new, change.id))


def _changes_by_type(answer: _Answer) -> dict[str, FactItem]:
    """Return the per-line-type changes of a bill by their machine line type (read from the derivation)."""
    changes = {}
    for fact in answer.facts.values():
        match = _LINE_TYPE.search(fact.derivation or "") if fact.kind == "delta_by_type" else None
        if match:
            changes.setdefault(match.group(1), fact)
    return changes


def _follow_up(answer: _Answer, figures: list[KeyFigure], headline: KeyFigure | None, cause: KeyFigure | None,
               current_period: str) -> str:
    """Return at most one sentence after the lead: another cause, what is owed, the tax part, or a date."""
    other = _secondary_cause(figures)
    if other is not None:
        return answer.say("also", noun=_cause_noun(answer, other, figures, same=False, short=True))
    owed = next((f for f in answer.facts.values() if f.kind in ("days_overdue", "days_until_due")), None)
    balance = next((f for f in reversed(answer.facts.values())
                    if f.kind == "payments_vs_total" and current_period in periods_of(f)), None)
    if owed is not None and balance is not None and Decimal(balance.value) > 0:
        key = "owed_overdue" if owed.kind == "days_overdue" else "owed_due"
        return answer.say(key, balance=answer.amount(balance), days=answer.cite(owed.value, owed.id))
    changes = _changes_by_type(answer)
    if cause is not None and headline is not None and headline.name == "delta":
        tax = changes.get("tax")
        # "The rest is VAT" only when the cause and the VAT are the whole change.
        if tax is not None and cause.name != "tax_change_effect" and Decimal(tax.value) != 0 and \
                abs(Decimal(cause.value)) + abs(Decimal(tax.value)) == abs(headline.value):
            return answer.say("tax_rest", amount=answer.amount(tax))
        recurring = changes.get("recurring")
        if cause.name == "prorated_amount" and recurring is not None and Decimal(recurring.value) > 0:
            return answer.say("new_fee", amount=answer.amount(recurring))
    if cause is not None and cause.name == "discount_ended":
        ended = next((f for f in answer.facts.values() if f.kind == "promotion_ended"), None)
        if ended is not None:
            return answer.say("promotion_end", date=answer.date(date.fromisoformat(ended.value), ended.id))
    return ""


def _line_of_kind(answer: _Answer, lines: list[FactItem], figures: list[KeyFigure]) -> FactItem | None:
    """The line of the kind the question names ("y ese descuento qué es?") when the bill has one line of that kind
    and the bill's change does not already explain it (a late fee that is what moved the bill is told as its
    cause); None otherwise."""
    of_kind = [fact for fact in lines if _line_type(fact) in answer.line_types]
    causes = {abs(Decimal(f.value)) for f in figures if f.name in CAUSES and isinstance(f.value, Decimal)}
    return of_kind[0] if len(of_kind) == 1 and abs(Decimal(of_kind[0].value)) not in causes else None


def _line_type(fact: FactItem) -> str:
    found = _LINE_OF_TYPE.search(fact.derivation or "")
    return found.group(1) if found else ""


def _part_asked(answer: _Answer, figures: list[KeyFigure]):
    """The sentence that answers a question about one part of the bill, as a function that states it, or None: a
    line asked by its amount; the VAT asked about (its amount, rate and base); a charge that is one of the change's
    lesser causes, asked by its kind (told in full: "Tu factura de diciembre incluye un recargo por mora de USD 1,62:
    el 5 % de…"); another line asked by its kind. Billing states each line of the current bill last (kind
    `invoice_line`, its type in the derivation)."""
    lines = [fact for fact in answer.facts.values()
             if fact.kind == "invoice_line" and fact.value and _LINE_NAME.search(fact.text)]
    wholes = {int(amount) for amount in answer.amounts if amount == amount.to_integral_value()}  # "esos 146"
    by_amount = next((fact for fact in lines if abs(Decimal(fact.value)) in answer.amounts), None) or next(
        (fact for fact in lines if int(abs(Decimal(fact.value))) in wholes), None)
    if by_amount is not None:
        worked = _computation_of(answer, by_amount) if answer.asks_computed else None
        if worked is not None:
            return lambda: _line_told(answer, by_amount) and _computation_told(answer, worked)
        return lambda: _line_told(answer, by_amount)
    current = _current_period(answer)
    tax = next((f for f in answer.facts.values() if f.kind == "tax_computation" and periods_of(f)[:1] == current
                and _TAX.match(f.derivation or "")), None)
    if "tax" in answer.line_types and tax is not None:
        return lambda: _tax_told(answer, tax)
    late = next((f for f in answer.facts.values() if f.kind == "days_late" and _PAID_LATE.match(f.derivation or "")),
                None)
    if answer.asks_days_late and late is not None:
        return lambda: _lateness_told(answer, late)
    lesser = next((f for f in figures if f.role != PRIMARY and f.name in CAUSES
                   and _line_type_of_cause(answer, f) in answer.line_types), None)
    if lesser is not None:
        return lambda: _cause_told(answer, lesser, figures)
    line = _line_of_kind(answer, lines, figures)
    return (lambda: _line_told(answer, line)) if line is not None else None


def _current_period(answer: _Answer) -> list[str]:
    """The newest bill's period as its total states it (["2026-12"]), [] when billing gave no total."""
    return next((periods_of(f)[:1] for f in answer.facts.values() if f.kind == "invoice_total"), [])


def _line_type_of_cause(answer: _Answer, figure: KeyFigure) -> str:
    """The bill line type a cause figure speaks of ("late_fee", "reconnection"…), "" when none."""
    if figure.name == "charge":
        return answer.facts[figure.evidence_id].kind
    # An ended promotion is no charge the bill includes: "y ese descuento?" is told by the change's own sentence.
    return {"late_fee": "late_fee", "prorated_amount": "proration", "outage_credit": "credit"}.get(figure.name, "")


def _tax_told(answer: _Answer, tax: FactItem) -> bool:
    rate, base = _TAX.match(tax.derivation).groups()
    answer.sentences.append(answer.say(
        "tax", month=answer.month(tax), computed=answer.amount(tax),
        rate=answer.cite(rate_text(Decimal(rate), answer.language), tax.id),
        base=answer.cite(money(Decimal(base), tax.currency, answer.language), tax.id)))
    answer.cause = f"the customer asked about the VAT: {_note_money(tax, Decimal(tax.value))}"
    answer.cause_ids = [tax.id]
    return True


def _lateness_told(answer: _Answer, late: FactItem) -> bool:
    """How late the bill behind a late fee was paid ("Tu factura de noviembre quedó pagada el 20/11/2026, 10 días
    después de su vencimiento.")."""
    paid, _due, days = _PAID_LATE.match(late.derivation).groups()
    answer.sentences.append(answer.say("paid_late", month=answer.month(late),
                                       date=answer.date(date.fromisoformat(paid), late.id),
                                       days=answer.cite(days, late.id)))
    answer.cause = f"the customer asked how late a bill was paid: {days} days"
    answer.cause_ids = [late.id]
    return True


def _cause_told(answer: _Answer, cause: KeyFigure, figures: list[KeyFigure]) -> bool:
    fact = answer.facts[cause.evidence_id]
    period = (_current_period(answer) or [""])[0]
    answer.sentences.append(answer.say("includes_cause", month=month_name(period, answer.language),
                                       noun=_cause_noun(answer, cause, figures, same=False)))
    answer.cause = f"the customer asked about a charge on the bill: {CAUSE_LABELS[cause.name]}"
    answer.cause_ids = [fact.id]
    return True


def _bill_change(answer: _Answer, figures: list[KeyFigure]) -> bool:
    part = _part_asked(answer, figures)
    if part is None:
        return _bill_change_told(answer, figures)
    if not _bill_change_told(answer, figures):
        return part()
    # The part asked first, then what the bill did (its lead sentence): two sentences, those two's citations only.
    told = answer.sentences[:1]
    answer.sentences = []
    answer.used = []
    part()
    answer.sentences += told
    for evidence_id in _CITED.findall(" ".join(told)):
        if evidence_id not in answer.used:
            answer.used.append(evidence_id)
    return True


def _computation_of(answer: _Answer, line: FactItem) -> FactItem | None:
    """The fact that works a line of the bill out (the outage credit, the late fee, a proration, the VAT), None when
    billing states none: its derivation ends by naming the line it produced."""
    found = _LINE_ID.search(line.derivation or "")
    return next((fact for fact in answer.facts.values() if found and fact.kind != "invoice_line"
                 and (m := _COMPUTATION.search(fact.derivation or "")) and m.group(3) == found.group(1)), None)


def _computation_told(answer: _Answer, fact: FactItem) -> bool:
    """State how a line was worked out, from its computation's derivation: amounts as money, a rate as a percentage,
    counts as they are ("Se calcula así: Bs. 1.400,00 × 3 ÷ 30 = Bs. 140,00.")."""
    formula, result = _COMPUTATION.search(fact.derivation).group(1, 2)

    def said(token: str) -> str:
        if token.endswith("%"):
            return answer.cite(rate_text(Decimal(token[:-1]), answer.language), fact.id)
        if "." in token:
            return answer.cite(money(Decimal(token), fact.currency, answer.language), fact.id)
        return answer.cite(token, fact.id)

    words = re.sub(r"-?\d+(?:\.\d+)?%?", lambda m: said(m.group(0)), formula.replace(" x ", " × ").replace(" / ", " ÷ ")
                   .replace(" - ", " − "))
    total = answer.cite(money(abs(Decimal(result)), fact.currency, answer.language), fact.id)
    answer.sentences.append(answer.say("computed", formula=f"{words} = {total}"))
    answer.cause_ids.append(fact.id)
    return True


def _line_told(answer: _Answer, line: FactItem) -> bool:
    """State what a line of the bill is, by the name billing gives it."""
    value = Decimal(line.value)
    period = (periods_of(line) or [""])[0]
    answer.sentences.append(answer.say("line_off" if value < 0 else "line", amount=answer.amount(line),
                                       month=month_name(period, answer.language),
                                       description=_LINE_NAME.search(line.text).group(1).strip()))
    answer.cause = f"the customer asked what a line of the bill is: {_note_money(line, value)}"
    answer.cause_ids = [line.id]
    return True


# A payment fact's way of paying, in either language: "Pago del … por Bs. 2.204,00 (pago móvil) aplicado…".
_PAID_BY = re.compile(r"\(([^()]+)\) (?:aplicado|applied)\b")
# Billing's name of each way of paying, in every language, back to its code ("pago móvil" → pago_movil).
_METHOD_CODES = {name: code for phrases in BILLING_PHRASES.values() for code, name in phrases.methods.items()}


def _method(answer: _Answer, fact: FactItem) -> str:
    """Return " (pago móvil)": the way a payment was made, as billing names it, in the reply's language; "" when the
    fact does not say."""
    found = _PAID_BY.search(fact.text)
    code = _METHOD_CODES.get(found.group(1)) if found else None
    return f" ({BILLING_PHRASES[answer.language].methods[code]})" if code else ""


def _bill_change_told(answer: _Answer, figures: list[KeyFigure]) -> bool:
    primary = _primary(figures)
    headline = primary.get("delta") or primary.get("total")
    cause = next((primary[name] for name in CAUSES if name in primary), None)
    if headline is None and cause is None:
        total = next((f for f in answer.facts.values() if f.kind == "invoice_total"), None)
        if total is None:
            return False
        answer.sentences.append(answer.say("first", month=answer.month(total), total=answer.amount(total)) + ".")
        answer.cause = "no change to explain: no earlier bill to compare with and no one-off charge"
        answer.cause_ids = [total.id]
        return True
    if headline is not None:
        fact = answer.facts[headline.evidence_id]
        current, previous = answer.month(fact, 0), answer.month(fact, 1)
        current_period = (periods_of(fact) or [""])[0]
        if headline.name == "total":
            answer.sentences.append(answer.say("same", month=current, previous=previous,
                                               total=answer.amount(fact, headline.value)))
            answer.cause = f"no charge type changed; both bills total {_note_money(fact, headline.value)}"
            answer.cause_ids = [fact.id]
        else:
            same = cause is not None and abs(Decimal(cause.value)) == abs(headline.value)
            cited_with = (cause.evidence_id,) if same else ()
            lead = answer.say("up" if headline.value > 0 else "down", month=current, previous=previous,
                              delta=answer.amount(fact, headline.value, *cited_with))
            if cause is not None:
                noun = _cause_noun(answer, cause, figures, same=same)
                lead += answer.say("because_same" if same else "because", noun=noun)
            else:
                lead += "."
            answer.sentences.append(lead)
    else:  # a first bill: nothing to compare with, its largest charge explains it
        total = next(f for f in answer.facts.values() if f.kind == "invoice_total")
        current_period = (periods_of(total) or [""])[0]
        lead = answer.say("first", month=answer.month(total), total=answer.amount(total))
        answer.sentences.append(lead + answer.say("includes", noun=_cause_noun(answer, cause, figures, same=False)))
    if cause is not None:
        answer.cause = CAUSE_LABELS[cause.name]
        answer.cause_ids = [f.evidence_id for f in figures if f.role == PRIMARY and f.name != "delta"]
    follow = _follow_up(answer, figures, headline, cause, current_period)
    if follow:
        answer.sentences.append(follow)
    if headline is not None and headline.name != "total" and answer.asks_before:
        fact = answer.facts[headline.evidence_id]
        earlier = _total_of(answer, (periods_of(fact) + ["", ""])[1])
        if earlier is not None:
            answer.sentences.append(answer.say("was_before", month=answer.month(fact, 1), total=answer.amount(earlier)))
    return True


# Why billing says an attempt failed, in its own words: "… failed (operation expired unconfirmed); …". Billing writes
# in the account's language: a reason in the other language than the reply's is left out rather than mixed in.
_FAILURE_REASON = {"en": re.compile(r"\bfailed\s*\(([^)]+)\)"), "es": re.compile(r"\bfalló\s*\(([^)]+)\)")}


def _reason(answer: _Answer, fact: FactItem) -> str:
    """Return ' (why the attempt failed)' as the payment fact states it, or '' when it does not say."""
    found = _FAILURE_REASON[answer.language].search(fact.text)
    return answer.say("reason", reason=found.group(1)) if found else ""


def _total_of(answer: _Answer, period: str) -> FactItem | None:
    """The invoice total fact of a period ("2026-11"), None when billing gave none."""
    return next((f for f in answer.facts.values() if f.kind == "invoice_total" and period
                 and periods_of(f)[:1] == [period]), None)


def _payment_status(answer: _Answer, figures: list[KeyFigure]) -> bool:
    primary = _primary(figures)
    attempt = primary.get("payment_amount")
    balance = primary.get("balance")
    if attempt is None and balance is None:
        return False
    if attempt is not None:
        fact = answer.facts[attempt.evidence_id]
        # Amount and date come from one fact: one citation after the date covers both.
        amount = money(attempt.value, fact.currency, answer.language)
        when = answer.date(primary["payment_date"].value, fact.id)
        month = answer.month(fact)
        if fact.kind == "payment":
            amount += _method(answer, fact)
            # "Yes, …" answers "did my payment arrive?", not "how much IGTF did I pay?".
            lead = answer.say("payment_applied" if answer.asks_igtf else "payment_ok", amount=amount, date=when,
                              month=month)
            status = next((f for f in answer.facts.values() if f.kind == "payments_vs_total"), None)
            settled = balance is None and status is not None and Decimal(status.value) == 0
            answer.sentences.append(lead + (answer.say("payment_ok_paid") if settled else "."))
            if answer.asks_igtf:  # "y de igtf cuánto se pagó?": the tax billing put on that payment's receipt
                igtf = _IGTF.search(fact.text)
                answer.sentences.append(answer.say("igtf_paid", igtf=answer.cite(
                    money(parse_amount(igtf.group(1)), fact.currency, answer.language), fact.id))
                    if igtf else answer.say("igtf_none"))
            answer.cause = "payment status: the latest payment was applied" + (
                " and the bill is paid" if settled else "")
        else:
            answer.sentences.append(answer.say("payment_failed", amount=amount, date=when, month=month,
                                               reason=_reason(answer, fact)))
            answer.cause = "payment status: the latest attempt failed and was not applied"
        answer.cause_ids = [fact.id]
    if balance is not None:
        fact = answer.facts[balance.evidence_id]
        key = "in_favour" if Decimal(fact.value) < 0 else "still_owed"
        answer.sentences.append(answer.say(key, month=answer.month(fact), balance=answer.amount(fact, balance.value)))
        answer.cause = answer.cause or "payment status: the bill has a balance"
        answer.cause_ids.append(fact.id)
    elif attempt is not None:
        failed = next((f for f in figures if f.role != PRIMARY and f.name == "payment_amount"), None)
        if failed is not None:
            fact = answer.facts[failed.evidence_id]
            day = next(f.value for f in figures if f.evidence_id == failed.evidence_id and f.name == "payment_date")
            answer.sentences.append(answer.say(
                "failed_before", amount=money(failed.value, fact.currency, answer.language),
                date=answer.date(day, fact.id), reason=_reason(answer, fact)))
    return True


def _account_status(answer: _Answer, figures: list[KeyFigure]) -> bool:
    primary = _primary(figures)
    plan = next((f for f in answer.facts.values() if f.kind == "plan"), None)
    total = next((f for f in answer.facts.values() if f.kind == "invoice_total"), None)
    balance, due, attempt = primary.get("balance"), primary.get("due_date"), primary.get("payment_amount")
    if total is not None and (balance is not None or attempt is not None):
        month = answer.month(total)
        if attempt is not None:
            paid = answer.facts[attempt.evidence_id]
            amount = money(attempt.value, paid.currency, answer.language)
            day = answer.date(primary["payment_date"].value, paid.id)
        if balance is not None:
            owed = answer.facts[balance.evidence_id]
            if Decimal(owed.value) < 0:
                answer.sentences.append(answer.say("in_favour", month=month,
                                                   balance=answer.amount(owed, balance.value)))
            else:
                overdue = due is not None and answer.facts[due.evidence_id].kind == "days_overdue"
                lead = (answer.say("summary_partial", amount=amount, date=day, month=month) if attempt is not None
                        else answer.say("summary_owed", month=month))
                prefix = "partial_" if attempt is not None else ""
                when = answer.date(due.value, due.evidence_id) if due is not None else "—"
                lead += answer.say(f"{prefix}owes_{'overdue' if overdue else 'due'}",
                                   balance=answer.amount(owed, balance.value), date=when)
                answer.sentences.append(lead)
            answer.cause = "account status: the current bill has a balance"
            answer.cause_ids = [owed.id] + ([due.evidence_id] if due is not None else [])
        else:
            answer.sentences.append(answer.say("summary_paid", month=month, total=answer.amount(total),
                                               amount=amount, date=day))
            answer.cause = "account status: the current bill is paid"
            answer.cause_ids = [total.id, attempt.evidence_id]
    if plan is not None and plan.currency:
        named = _PLAN_NAME.match(plan.text)
        said = (answer.say("plan_named", name=named.group(1), price=answer.amount(plan)) if named
                else answer.say("plan", price=answer.amount(plan)))
        answer.sentences.insert(0 if answer.asks_plan else len(answer.sentences), said)
        answer.cause = answer.cause or "account status: plan only, no bill issued yet"
    return bool(answer.sentences)


def _invoice_list(answer: _Answer, figures: list[KeyFigure]) -> bool:
    totals = [f for f in answer.facts.values() if f.kind == "invoice_total"]
    if not totals:
        return False
    # One invoice: the one asked for by its month, or the account's only one.
    lead = "one_invoice" if len(totals) == 1 else "latest_invoice"
    answer.sentences.append(answer.say(lead, month=answer.month(totals[0]), total=answer.amount(totals[0])))
    if len(totals) > 1:
        answer.sentences.append(answer.say("earlier_invoice", month=answer.month(totals[1]),
                                           total=answer.amount(totals[1])))
    answer.cause = "invoice list: latest bills and their totals"
    answer.cause_ids = [totals[0].id]
    return True


PLANNERS = {
    "invoice_change": _bill_change,
    "payments": _payment_status,
    "account_summary": _account_status,
    "invoices": _invoice_list,
}


# --- the agent's note ------------------------------------------------------------------------


def _note_money(fact: FactItem, value: Decimal) -> str:
    return money(value, fact.currency, "en")


def _note(answer: _Answer, figures: list[KeyFigure], *, unsure: str) -> str:
    """Return the internal note: root cause, the items it rests on, formulas, what the customer was not told."""
    cause_ids = list(dict.fromkeys(answer.cause_ids))
    cause_figures = [f for f in figures if f.evidence_id in cause_ids and f.role == PRIMARY]
    stated = ", ".join(f"{f.name} {_note_figure(answer.facts[f.evidence_id], f)}" for f in cause_figures)
    root = f"Root cause: {answer.cause}" + (f" — {stated}" if stated else "")
    lines = [root + (f" [{']['.join(cause_ids)}]." if cause_ids else ".")]
    lines.append("Rests on: " + "".join(f"[{i}]" for i in answer.used) + ".")
    for evidence_id in answer.used:
        fact = answer.facts[evidence_id]
        if fact.derivation:
            lines.append(f"Formula ({fact.kind}): {fact.derivation} [{evidence_id}].")
    left_out = [f for f in figures if f.evidence_id not in answer.used]
    if left_out:
        told = "; ".join(f"{f.name} {_note_figure(answer.facts[f.evidence_id], f)} [{f.evidence_id}]"
                         for f in left_out)
        lines.append(f"Not told to the customer: {told}.")
    lines.append(f"Unsure: {unsure}")
    return "\n".join(lines)


def _note_figure(fact: FactItem, figure: KeyFigure) -> str:
    if isinstance(figure.value, Decimal):
        return _note_money(fact, figure.value)
    return figure.figure


# The question asks what was paid before: "y antes cuánto pagaba?", "and before the upgrade how much was I paying".
_BEFORE = re.compile(r"\b(antes|before|anterior|previous|el mes pasado|last month|usual|de costumbre|solia|used to|"
                     r"pagaba|pagabamos|was i paying|i was paying|were we paying|we were paying)\b")


# The question says what the customer pays or paid ("si yo pago 1624 todos los meses"): its amount is not a line asked.
_PAID = re.compile(r"\b(pago|pague|pagaba|pagamos|pay|paid|paying|usual|usually|siempre|always|normalmente|"
                   r"todos los meses|every month)\b")
_AMOUNT = re.compile(r"\d[\d.,]*")
_DAYS_LATE = re.compile(r"\b(days late|dias (de atraso|tarde)|how late|que tan tarde|cuanto me atrase)\b")
# A late fee the customer says they paid for ("recargo?? pero si yo pagué la del mes pasado"): when that bill was paid
# is the answer, as for a days-late question.
_PAID_IT = re.compile(r"\b(pague|pagamos|ya pague|i paid|we paid|already paid|paid it|paid that)\b")
_WHICH_PLAN = re.compile(WHICH_PLAN)
# The question asks how a line was worked out: "¿cómo sacan esos 140?", "how did you get that 140?".
_COMPUTED = re.compile(r"\b(como (sacan|sacaron|calculan|calcularon|calcula|se calcula|se calculo|llegan|llegaron)|"
                       r"de donde (sacan|sacaron)|how (do|did) (you|u|they) (get|calculate|work out|come up with|"
                       r"figure)|how (is|was) (it|that|this) (calculated|worked out|computed)|calculat\w*|calcul[oa]\w*)\b")
# A computation's derivation, and the bill line it produced: "1400.00 x 3 / 30 = 140.00 (line F-…-L2: -140.00)".
_COMPUTATION = re.compile(r"^(.+?) = (-?[\d.]+) \(line (\S+): ")
_LINE_ID = re.compile(r"^line (\S+) ")
# A days-late fact's derivation: "2026-11-20 - 2026-11-10 = 10 days" (paid, due, days).
_PAID_LATE = re.compile(r"^(\d{4}-\d{2}-\d{2}) - (\d{4}-\d{2}-\d{2}) = (\d+) days")
# The words a customer names a kind of bill line with (folded), by billing's line type.
_LINE_WORDS = {
    "discount": re.compile(r"\b(descuento|discount)\b"),
    "late_fee": re.compile(r"\b(recargo|mora|late fee|late charge)\b"),
    "reconnection": re.compile(r"\b(reconexion|reconnection|reconnect\w*)\b"),
    "technical_visit": re.compile(r"\b(visita|visit|tecnico|technician)\b"),
    "installation": re.compile(r"\b(instalacion|installation)\b"),
    "proration": re.compile(r"\b(prorrateo|proration|prorat\w*)\b"),
    "credit": re.compile(r"\b(credito|credit)\b"),
    "tax": re.compile(r"\b(iva|vat|impuestos?|tax|taxes)\b"),
}
_TAX = re.compile(r"^(\d+(?:\.\d+)?)% x (\d+(?:\.\d+)?) = ")  # a tax's derivation: "16.00% x 1400.00 = 224.00 …"
# A payment fact's IGTF, as billing writes it in either language: "…; IGTF 4,87 USD en el recibo…".
_IGTF = re.compile(r"; IGTF (.+?) (?:en el recibo|on the receipt)")
_LINE_OF_TYPE = re.compile(r"^line \S+ \((\w+)\)")


def parse_amount(text: str) -> Decimal:
    """Return the amount of a money text as billing writes it ("4,87 USD", "USD 4.87", "Bs. 1.624,00")."""
    return quoted_amounts(text)[0]


def quoted_amounts(text: str) -> tuple[Decimal, ...]:
    """Return the amounts a text quotes ("250", "1.624", "1,624.00", "-50" → 50), as positive Decimals: a separator
    followed by one or two digits at the end is the decimal mark, any other is a thousands separator."""
    found = []
    for token in _AMOUNT.findall(text):
        token = token.rstrip(".,")
        decimal = re.fullmatch(r"(.*?)[.,](\d{1,2})", token)
        whole, cents = (decimal.group(1), decimal.group(2)) if decimal else (token, "0")
        whole = re.sub(r"[.,]", "", whole)
        if whole.isdigit():
            found.append(Decimal(f"{whole}.{cents}"))
    return tuple(found)


def plan_answer(*, capability: str, facts: list[FactItem], figures: list[KeyFigure], language: str,
                unsure: str = FACTS_ONLY_UNSURE, query: str = "") -> Composition | None:
    """Compose the customer message and the internal note for a capability's facts; None when no plan fits.

    `query` is the customer's question: a bill's change asked against what was paid before also states that earlier
    total."""
    planner = PLANNERS.get(capability)
    if planner is None:
        return None
    folded = fold(query, case="lower")
    # A follow-up comes joined with the question it follows ("y de iva cuánto? (¿qué es el cargo de 750?)"): what
    # it asks about — an amount, a kind of charge — is in its own words, not in the earlier question's.
    own = own_words(folded)
    kinds = tuple(kind for kind, words in _LINE_WORDS.items() if words.search(own))
    answer = _Answer(_language(language), facts, asks_before=bool(_BEFORE.search(folded)),
                     amounts=() if _PAID.search(own) else quoted_amounts(own),
                     line_types=kinds or tuple(kind for kind, words in _LINE_WORDS.items() if words.search(folded)),
                     asks_igtf=bool(re.search(r"\bigtf\b", folded)),
                     asks_days_late=bool(_DAYS_LATE.search(own) or _LINE_WORDS["late_fee"].search(own)
                                         and _PAID_IT.search(own)),
                     asks_plan=bool(_WHICH_PLAN.search(own)), asks_computed=bool(_COMPUTED.search(own)))
    figures = [f for f in figures if f.evidence_id in answer.facts]
    if not planner(answer, figures):
        return None
    return Composition(" ".join(answer.sentences), _note(answer, figures, unsure=unsure), list(answer.used))
