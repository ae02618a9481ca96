"""Payments against an invoice's total, each payment attempt, due dates, and late fees recomputed."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from billing.answers.findings.base import HUNDRED, Cause, Figure, Finding, minus_formula, two_places
from billing.records import CurrencyMismatch, Invoice, Money, Payment, money_sum


def _succeeded(invoice: Invoice, payments: Iterable[Payment], *, before: date | None = None) -> list[Payment]:
    return [
        p
        for p in payments
        if p.invoice_id == invoice.id and p.succeeded and (before is None or p.date < before)
    ]


def _paid(invoice: Invoice, payments: Sequence[Payment], *, before: date | None = None) -> Money:
    return money_sum((p.amount for p in _succeeded(invoice, payments, before=before)), invoice.currency)


@dataclass(frozen=True)
class PaymentsVsTotal(Finding):
    """Succeeded payments to an invoice against its total; failed attempts do not count."""

    invoice_id: str
    period: str
    currency: str
    total: Decimal
    succeeded: tuple[Decimal, ...]
    failed_count: int

    @property
    def paid(self) -> Decimal:
        return sum(self.succeeded, Decimal("0.00"))

    @property
    def balance(self) -> Decimal:
        """What is still due (negative: paid in excess)."""
        return self.total - self.paid

    @property
    def derivation(self) -> str:
        paid = " + ".join(two_places(amount) for amount in self.succeeded) or "0.00"
        return (
            f"total({self.invoice_id}) - sum(succeeded payments) = {two_places(self.total)} - ({paid}) "
            f"= {two_places(self.balance)}"
        )

    def figures(self) -> tuple[Figure, ...]:
        if self.balance == 0:
            return ()
        return (Figure(name="balance", value=abs(self.balance), kind="payments_vs_total"),)


@dataclass(frozen=True)
class PaymentAttempt(Finding):
    """One payment attempt on an invoice, applied or failed."""

    payment_id: str
    period: str
    currency: str
    date: date
    amount: Decimal
    method: str
    succeeded: bool
    failure_reason: str | None
    igtf: Decimal | None  # 3 % tax on foreign-currency payments, on the receipt only

    @property
    def kind(self) -> str:
        return "payment" if self.succeeded else "payment_failed"

    def figures(self) -> tuple[Figure, ...]:
        return (
            Figure(name="payment_amount", value=self.amount, kind=self.kind),
            Figure(name="payment_date", value=self.date, kind=self.kind),
        )


def find_payments(invoice: Invoice, payments: Sequence[Payment]) -> list[PaymentsVsTotal | PaymentAttempt]:
    """Return the invoice's succeeded payments against its total, then each attempt on it by date."""
    mine = sorted((p for p in payments if p.invoice_id == invoice.id), key=lambda p: (p.date, p.id))
    for payment in mine:
        if payment.amount.currency != invoice.currency:
            raise CurrencyMismatch(f"payment {payment.id} is in {payment.amount.currency}")
    status = PaymentsVsTotal(
        invoice_id=invoice.id,
        period=invoice.period,
        currency=invoice.currency,
        total=invoice.total.amount,
        succeeded=tuple(p.amount.amount for p in mine if p.succeeded),
        failed_count=sum(1 for p in mine if not p.succeeded),
    )
    attempts = [
        PaymentAttempt(
            payment_id=p.id,
            period=invoice.period,
            currency=invoice.currency,
            date=p.date,
            amount=p.amount.amount,
            method=p.method,
            succeeded=p.succeeded,
            failure_reason=p.failure_reason,
            igtf=p.igtf.amount if p.igtf is not None else None,
        )
        for p in mine
    ]
    return [status, *attempts]


@dataclass(frozen=True)
class DueStatus(Finding):
    """Days until an unpaid invoice is due (`days` ≥ 0) or overdue (`days` < 0), with its balance."""

    invoice_id: str
    period: str
    currency: str
    due_date: date
    today: date
    balance: Decimal

    @property
    def days(self) -> int:
        return (self.due_date - self.today).days

    @property
    def overdue(self) -> bool:
        return self.days < 0

    @property
    def kind(self) -> str:
        return "days_overdue" if self.overdue else "days_until_due"

    @property
    def derivation(self) -> str:
        if self.overdue:
            return f"today - due_date({self.invoice_id}) = {-self.days} days"
        return (
            f"due_date({self.invoice_id}) - today = {self.due_date.isoformat()} - {self.today.isoformat()} "
            f"= {self.days} days"
        )

    def figures(self) -> tuple[Figure, ...]:
        return (Figure(name="due_date", value=self.due_date, kind=self.kind),)


def find_due(invoice: Invoice, payments: Sequence[Payment], *, today: date) -> list[DueStatus]:
    """Return the due status of an invoice with a balance (none when settled)."""
    balance = invoice.total - _paid(invoice, payments)
    if balance.amount <= 0:
        return []
    return [
        DueStatus(
            invoice_id=invoice.id,
            period=invoice.period,
            currency=invoice.currency,
            due_date=invoice.due_date,
            today=today,
            balance=balance.amount,
        )
    ]


@dataclass(frozen=True)
class LateFee(Cause):
    """A late fee explained from the invoice it penalises and that invoice's payments.

    Basis: the late invoice's total minus succeeded payments made before the fee was generated
    (the line's `date`, the day after the grace period). A percentage fee is rate × basis; a flat
    fee (no rate) is what the line says.
    """

    period: str
    currency: str
    line_id: str
    rate: Decimal | None
    late_id: str
    late_period: str
    late_due: date
    late_total: Decimal
    paid_before: Decimal
    generated_on: date
    computed: Decimal
    billed: Decimal
    settled_on: date | None  # when the late invoice was paid in full, if it was

    @property
    def basis(self) -> Decimal:
        return self.late_total - self.paid_before

    @property
    def days_late(self) -> int | None:
        return (self.settled_on - self.late_due).days if self.settled_on is not None else None

    @property
    def effect(self) -> Decimal:
        return self.computed

    @property
    def fee_derivation(self) -> str:
        if self.rate is None:
            return f"flat fee; basis {minus_formula(self.late_total, self.paid_before)} = {two_places(self.basis)}"
        return (
            f"{two_places(self.rate)}% x ({minus_formula(self.late_total, self.paid_before)}) = "
            f"{two_places(self.computed)} (line {self.line_id}: {two_places(self.billed)})"
        )

    @property
    def basis_derivation(self) -> str:
        return (
            f"total({self.late_id}) - payments before {self.generated_on.isoformat()} = "
            f"{minus_formula(self.late_total, self.paid_before)}"
        )

    @property
    def days_late_derivation(self) -> str:
        return f"{self.settled_on.isoformat()} - {self.late_due.isoformat()} = {self.days_late} days"

    def figures(self) -> tuple[Figure, ...]:
        return (
            Figure(name="late_fee", value=self.computed, kind="late_fee"),
            Figure(name="late_fee_basis", value=self.basis, kind="late_fee_basis"),
        )


def _first_settling_payment(invoice: Invoice, payments: Sequence[Payment]) -> Payment | None:
    running = Money.zero(invoice.currency)
    for payment in sorted(_succeeded(invoice, payments), key=lambda p: (p.date, p.id)):
        running = running + payment.amount
        if invoice.total <= running:
            return payment
    return None


def find_late_fees(
    current: Invoice, invoices: Sequence[Invoice], payments: Sequence[Payment]
) -> list[LateFee]:
    by_id = {invoice.id: invoice for invoice in invoices}
    found = []
    for line in current.lines_of("late_fee"):
        late = by_id.get(line.related_invoice_id or "")
        if late is None or line.date is None:
            continue
        paid_before = _paid(late, payments, before=line.date)
        basis = late.total - paid_before
        computed = basis.times(line.rate / HUNDRED) if line.rate is not None else line.amount
        settled = _first_settling_payment(late, payments)
        found.append(
            LateFee(
                period=current.period,
                currency=current.currency,
                line_id=line.id,
                rate=line.rate,
                late_id=late.id,
                late_period=late.period,
                late_due=late.due_date,
                late_total=late.total.amount,
                paid_before=paid_before.amount,
                generated_on=line.date,
                computed=computed.amount,
                billed=line.amount.amount,
                settled_on=settled.date if settled is not None else None,
            )
        )
    return found
