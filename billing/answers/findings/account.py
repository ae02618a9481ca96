"""Read from the system of record: the customer, a credit note, the plan and its price history, one-off charges."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from billing.answers.findings.base import ONE_OFF_CHARGES, Cause, Figure, Finding
from billing.records import CreditNote, Customer, Invoice, Plan


@dataclass(frozen=True)
class CustomerIdentified(Finding):
    customer_id: str
    name: str
    account_number: str
    billing_cycle: str
    currency: str


def find_customer(customer: Customer) -> CustomerIdentified:
    return CustomerIdentified(
        customer_id=customer.id,
        name=customer.name,
        account_number=customer.account_number,
        billing_cycle=customer.billing_cycle,
        currency=customer.currency,
    )


@dataclass(frozen=True)
class CreditNoteRequested(Finding):
    note_id: str
    invoice_id: str
    amount: Decimal
    currency: str
    status: str


def find_credit_note(note: CreditNote) -> CreditNoteRequested:
    return CreditNoteRequested(
        note_id=note.id,
        invoice_id=note.invoice_id,
        amount=note.amount.amount,
        currency=note.amount.currency,
        status=note.status,
    )


@dataclass(frozen=True)
class PlanPriceEntry:
    plan_name: str
    price: Decimal
    currency: str
    start_date: date
    end_date: date | None


@dataclass(frozen=True)
class CurrentPlan(Finding):
    """The current plan and its price history, as the system of record holds them (no derivation)."""

    name: str
    download_mbps: int
    upload_mbps: int
    price: Decimal
    currency: str
    since: date
    price_history: tuple[PlanPriceEntry, ...]


def find_plan(plan: Plan) -> CurrentPlan:
    return CurrentPlan(
        name=plan.name,
        download_mbps=plan.download_mbps,
        upload_mbps=plan.upload_mbps,
        price=plan.price.amount,
        currency=plan.price.currency,
        since=plan.since,
        price_history=tuple(
            PlanPriceEntry(
                plan_name=e.plan_name,
                price=e.price.amount,
                currency=e.price.currency,
                start_date=e.start_date,
                end_date=e.end_date,
            )
            for e in plan.price_history
        ),
    )


@dataclass(frozen=True)
class Charge(Cause):
    """A one-off charge or credit line, read from the invoice."""

    line_id: str
    line_type: str
    description: str
    amount: Decimal
    currency: str
    when: date | None
    period: str

    @property
    def effect(self) -> Decimal:
        return self.amount

    def figures(self) -> tuple[Figure, ...]:
        return (Figure(name="charge", value=self.amount, kind=self.line_type),)


def find_charges(invoice: Invoice) -> list[Charge]:
    """Return the one-off charges and credits on an invoice (installation, visits, reconnection, credits)."""
    return [
        Charge(
            line_id=line.id,
            line_type=line.type,
            description=line.description,
            amount=line.amount.amount,
            currency=invoice.currency,
            when=line.date or line.service_start,
            period=invoice.period,
        )
        for line in invoice.lines
        if line.type in ONE_OFF_CHARGES
    ]
