"""An invoice's total as the sum of its lines, and the month-over-month change broken down by line type."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from billing.answers.findings.base import Figure, Finding, minus_formula, two_places
from billing.records import LINE_TYPES, CurrencyMismatch, Invoice, Money, money_sum


@dataclass(frozen=True)
class InvoiceTotal(Finding):
    """An invoice's total as the sum of its lines."""

    invoice_id: str
    period: str
    currency: str
    total: Decimal
    line_amounts: tuple[Decimal, ...]
    issue_date: date
    due_date: date

    @property
    def derivation(self) -> str:
        parts = " + ".join(two_places(amount) for amount in self.line_amounts)
        return f"sum(lines of {self.invoice_id}) = {parts}"


def find_invoice_total(invoice: Invoice) -> InvoiceTotal:
    total = money_sum((line.amount for line in invoice.lines), invoice.currency)
    return InvoiceTotal(
        invoice_id=invoice.id,
        period=invoice.period,
        currency=invoice.currency,
        total=total.amount,
        line_amounts=tuple(line.amount.amount for line in invoice.lines),
        issue_date=invoice.issue_date,
        due_date=invoice.due_date,
    )


@dataclass(frozen=True)
class InvoiceLineBilled(Finding):
    """One line of an invoice as billed, named as the invoice names it: what a customer asks about by its amount
    ("250 de qué?", "what's the minus 50 line?")."""

    line_id: str
    line_type: str
    description: str
    amount: Decimal
    currency: str
    period: str

    @property
    def derivation(self) -> str:
        return f"line {self.line_id} ({self.line_type}) = {two_places(self.amount)}"


def find_invoice_lines(invoice: Invoice) -> list[InvoiceLineBilled]:
    """Return every line of an invoice, in the invoice's order."""
    return [InvoiceLineBilled(line_id=line.id, line_type=line.type, description=line.description,
                              amount=line.amount.amount, currency=invoice.currency, period=invoice.period)
            for line in invoice.lines]


@dataclass(frozen=True)
class TypeChange:
    """How much one line type moved between two invoices: sum(type, current) − sum(type, previous)."""

    line_type: str
    current: Decimal
    previous: Decimal

    @property
    def delta(self) -> Decimal:
        return self.current - self.previous


@dataclass(frozen=True)
class InvoiceDelta(Finding):
    """The month-over-month change of the total and its breakdown by line type (changed types only)."""

    current_id: str
    previous_id: str
    current_period: str
    previous_period: str
    currency: str
    current_total: Decimal
    previous_total: Decimal
    changes: tuple[TypeChange, ...]

    @property
    def delta(self) -> Decimal:
        return self.current_total - self.previous_total

    @property
    def discount_ended(self) -> bool:
        """True when the previous invoice had discounts and the current one has none."""
        return any(c.line_type == "discount" and c.current == 0 and c.previous != 0 for c in self.changes)

    @property
    def derivation(self) -> str:
        text = (
            f"total({self.current_id}) - total({self.previous_id}) = "
            f"{minus_formula(self.current_total, self.previous_total)} = {two_places(self.delta)}"
        )
        if self.changes:
            text += "; by type: " + ", ".join(f"{c.line_type} {two_places(c.delta)}" for c in self.changes)
        return text

    def change_derivation(self, change: TypeChange) -> str:
        return (
            f"sum({change.line_type} lines of {self.current_id}) - sum({change.line_type} lines of "
            f"{self.previous_id}) = {minus_formula(change.current, change.previous)}"
        )

    def figures(self) -> tuple[Figure, ...]:
        # An unchanged bill is answered with its total ("the same Bs. 1.624,00"), not with "0,00".
        if not self.changes:
            return (Figure(name="total", value=self.current_total, kind="invoice_delta"),)
        return (Figure(name="delta", value=self.delta, kind="invoice_delta"),)


def _sums_by_type(invoice: Invoice) -> dict[str, Money]:
    sums = {line_type: Money.zero(invoice.currency) for line_type in LINE_TYPES}
    for line in invoice.lines:
        sums[line.type] = sums[line.type] + line.amount
    return sums


def find_invoice_delta(current: Invoice, previous: Invoice) -> InvoiceDelta:
    if current.currency != previous.currency:
        raise CurrencyMismatch(f"invoices {current.id} and {previous.id} are in different currencies")
    now_sums, before_sums = _sums_by_type(current), _sums_by_type(previous)
    changes = tuple(
        TypeChange(
            line_type=line_type, current=now_sums[line_type].amount, previous=before_sums[line_type].amount
        )
        for line_type in LINE_TYPES
        if not (now_sums[line_type] - before_sums[line_type]).is_zero()
    )
    return InvoiceDelta(
        current_id=current.id,
        previous_id=previous.id,
        current_period=current.period,
        previous_period=previous.period,
        currency=current.currency,
        current_total=current.total.amount,
        previous_total=previous.total.amount,
        changes=changes,
    )
