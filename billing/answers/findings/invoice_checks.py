"""Checks of a single invoice: duplicated charges, taxes recomputed (and a rate change), outage credits."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from billing.answers.findings.base import HUNDRED, Cause, Figure, Finding, two_places
from billing.records import Invoice, LineItem, Money, quantize


def _vat_rate(invoice: Invoice) -> Decimal | None:
    for line in invoice.lines_of("tax"):
        if line.code == "IVA" and line.rate is not None:
            return line.rate
    return None


@dataclass(frozen=True)
class DuplicateCharge(Cause):
    """A charge billed more than once: the excess copies plus the VAT charged on them."""

    period: str
    currency: str
    description: str
    amount: Decimal
    count: int
    vat_rate: Decimal | None
    excess: Decimal
    vat_on_excess: Decimal
    line_ids: tuple[str, ...]

    @property
    def overcharge(self) -> Decimal:
        return self.excess + self.vat_on_excess

    @property
    def effect(self) -> Decimal:
        return self.overcharge

    @property
    def derivation(self) -> str:
        return (
            f"{two_places(self.amount)} x ({self.count} - 1) = {two_places(self.excess)}; "
            f"VAT {two_places(self.vat_rate or Decimal(0))}% x {two_places(self.excess)} "
            f"= {two_places(self.vat_on_excess)}; lines {', '.join(self.line_ids)}"
        )

    def figures(self) -> tuple[Figure, ...]:
        return (Figure(name="overcharge", value=self.overcharge, kind="duplicate_charge"),)


def find_duplicate_charges(invoice: Invoice) -> list[DuplicateCharge]:
    """Return each charge that appears more than once with the same text, amount and period."""
    groups: OrderedDict[tuple, list[LineItem]] = OrderedDict()
    for line in invoice.lines:
        if line.type in ("tax", "late_fee"):
            continue
        key = (line.type, line.description, line.amount, line.service_start, line.service_end, line.date)
        groups.setdefault(key, []).append(line)
    vat = _vat_rate(invoice)
    found = []
    for (_type, description, amount, *_), lines in groups.items():
        if len(lines) < 2:
            continue
        excess = amount.times(len(lines) - 1)
        vat_on_excess = excess.times(vat / HUNDRED) if vat is not None else Money.zero(invoice.currency)
        found.append(
            DuplicateCharge(
                period=invoice.period,
                currency=invoice.currency,
                description=description,
                amount=amount.amount,
                count=len(lines),
                vat_rate=vat,
                excess=excess.amount,
                vat_on_excess=vat_on_excess.amount,
                line_ids=tuple(line.id for line in lines),
            )
        )
    return found


@dataclass(frozen=True)
class TaxComputation(Finding):
    """A tax line recomputed as rate × base, next to what the invoice charges."""

    period: str
    currency: str
    name: str
    rate: Decimal
    base: Decimal
    computed: Decimal
    billed: Decimal
    line_id: str

    @property
    def derivation(self) -> str:
        return (
            f"{two_places(self.rate)}% x {two_places(self.base)} = {two_places(self.computed)} "
            f"(line {self.line_id}: {two_places(self.billed)})"
        )


@dataclass(frozen=True)
class TaxRateChange(Cause):
    """A tax whose rate changed since the previous invoice, and what the change costs on this base."""

    code: str
    previous_period: str
    current_period: str
    currency: str
    old_rate: Decimal
    new_rate: Decimal
    base: Decimal
    effect: Decimal
    old_line_id: str
    new_line_id: str

    @property
    def rate_derivation(self) -> str:
        return (
            f"rate({self.old_line_id}) = {two_places(self.old_rate)}; "
            f"rate({self.new_line_id}) = {two_places(self.new_rate)}"
        )

    @property
    def effect_derivation(self) -> str:
        return (
            f"({two_places(self.new_rate)} - {two_places(self.old_rate)})% x {two_places(self.base)} "
            f"= {two_places(self.effect)}"
        )

    def figures(self) -> tuple[Figure, ...]:
        return (Figure(name="tax_change_effect", value=self.effect, kind="tax_rate_effect"),)


def find_taxes(current: Invoice, previous: Invoice | None) -> list[TaxComputation | TaxRateChange]:
    """Return each tax line as rate × base, then each tax whose rate changed since the previous invoice."""
    found: list[TaxComputation | TaxRateChange] = []
    for line in current.lines_of("tax"):
        if line.rate is None or line.base is None:
            continue
        computed = line.base.times(line.rate / HUNDRED)
        found.append(
            TaxComputation(
                period=current.period,
                currency=current.currency,
                name=line.code or line.description,
                rate=line.rate,
                base=line.base.amount,
                computed=computed.amount,
                billed=line.amount.amount,
                line_id=line.id,
            )
        )
    if previous is None:
        return found
    before = {line.code: line for line in previous.lines_of("tax") if line.code and line.rate is not None}
    for line in current.lines_of("tax"):
        old = before.get(line.code)
        if old is None or line.rate is None or old.rate == line.rate or line.base is None:
            continue
        effect = line.base.times((line.rate - old.rate) / HUNDRED)
        found.append(
            TaxRateChange(
                code=line.code,
                previous_period=previous.period,
                current_period=current.period,
                currency=current.currency,
                old_rate=old.rate,
                new_rate=line.rate,
                base=line.base.amount,
                effect=effect.amount,
                old_line_id=old.id,
                new_line_id=line.id,
            )
        )
    return found


@dataclass(frozen=True)
class OutageCredit(Cause):
    """An outage credit recomputed as monthly fee × days down ÷ 30 (the published rule)."""

    period: str
    currency: str
    monthly_fee: Decimal
    days: int
    credit: Decimal  # in the customer's favour, positive
    billed: Decimal  # the credit line as billed, negative
    start: date
    end: date
    line_id: str

    @property
    def effect(self) -> Decimal:
        return -self.credit

    @property
    def derivation(self) -> str:
        return (
            f"{two_places(self.monthly_fee)} x {self.days} / 30 = {two_places(self.credit)} "
            f"(line {self.line_id}: {two_places(self.billed)})"
        )

    def figures(self) -> tuple[Figure, ...]:
        return (Figure(name="outage_credit", value=self.credit, kind="outage_credit"),)


def find_outage_credits(invoice: Invoice) -> list[OutageCredit]:
    recurring = invoice.lines_of("recurring")
    if not recurring:
        return []
    monthly_fee = recurring[0].amount
    found = []
    for line in invoice.lines_of("credit"):
        if line.code != "outage" or line.service_start is None or line.service_end is None:
            continue
        days = (line.service_end - line.service_start).days + 1
        credit = Money(amount=quantize(monthly_fee.amount * days / Decimal(30)), currency=invoice.currency)
        found.append(
            OutageCredit(
                period=invoice.period,
                currency=invoice.currency,
                monthly_fee=monthly_fee.amount,
                days=days,
                credit=credit.amount,
                billed=line.amount.amount,
                start=line.service_start,
                end=line.service_end,
                line_id=line.id,
            )
        )
    return found
