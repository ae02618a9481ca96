"""Billing computations as evidence: findings → key figures → phrase tables → facts.

Pure Python, no Django. Each step lives in its own module and knows nothing of the next:
- findings/ — the arithmetic, one module per topic: API records in, typed findings out (Decimal amounts, dates,
  counts, derivations), no language; each finding declares the figures an answer must state;
- key_figures.py — which of those figures are primary for the question a capability answers;
- phrases.py — per-language phrase tables (es, en), and money.py for the notation of numbers;
- wording.py — one finding → its evidence facts through a phrase table.
This module composes them: the `*_facts` functions state one kind of finding, and the
`*_sheet` functions build what each client capability returns (facts in order + key figures).
Dates are injected (`today`), never read from the clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date

from billing.answers.evidence import PRIMARY, Fact, FactSheet, KeyFigure
from billing.answers.findings.account import find_charges, find_credit_note, find_customer, find_plan
from billing.answers.findings.base import Finding
from billing.answers.findings.invoice_checks import find_duplicate_charges, find_outage_credits, find_taxes
from billing.answers.findings.payments import find_due, find_late_fees, find_payments
from billing.answers.findings.promotions import find_promotions
from billing.answers.findings.proration import find_prorations
from billing.answers.findings.totals import find_invoice_delta, find_invoice_lines, find_invoice_total
from billing.answers.key_figures import change_roles, payment_roles
from billing.answers.money import rate_text
from billing.answers.phrases import phrases_for
from billing.answers.wording import render
from billing.records import CreditNote, CurrencyMismatch, Customer, Invoice, Money, Payment, Plan, Promotion

__all__ = [
    "CurrencyMismatch",
    "account_summary_sheet",
    "credit_note_sheet",
    "customer_sheet",
    "due_facts",
    "duplicate_charge_facts",
    "fact_sheet",
    "format_money",
    "format_rate",
    "invoice_change_sheet",
    "invoice_delta_facts",
    "invoices_sheet",
    "late_fee_facts",
    "outage_credit_facts",
    "payment_facts",
    "payments_sheet",
    "promotion_facts",
    "proration_facts",
    "tax_facts",
]

# The notation of rates is money.py's; evidence money is the phrase table's.
format_rate = rate_text


def format_money(money: Money, language: str) -> str:
    """Return money as evidence writes it: `14,00 USD` / `Bs. 1.234,56` (es), `USD 14.00` / `VES 1,234.56` (en)."""
    return phrases_for(language).money(money.amount, money.currency)


def fact_sheet(
    findings: Sequence[Finding], language: str, roles: Mapping[int, str] | None = None
) -> FactSheet:
    """Render findings in order; give each finding with a role its declared figures, primary ones first."""
    phrases = phrases_for(language)
    roles = roles or {}
    facts: list[Fact] = []
    figures: list[KeyFigure] = []
    for position, finding in enumerate(findings):
        stated = render(finding, phrases)
        role = roles.get(position)
        for figure in finding.figures() if role else ():
            offset = next(index for index, fact in enumerate(stated) if fact.kind == figure.kind)
            figures.append(KeyFigure(f"F{len(facts) + offset + 1}", figure.value, role, figure.name))
        facts.extend(stated)
    figures.sort(key=lambda figure: figure.role != PRIMARY)  # stable: evidence order within a role
    return FactSheet(facts, figures)


def _facts(findings: Iterable[Finding], language: str) -> list[Fact]:
    return fact_sheet(list(findings), language).facts


# --- one kind of finding, stated -------------------------------------------------------


def invoice_delta_facts(current: Invoice, previous: Invoice, language: str) -> list[Fact]:
    """Return the month-over-month delta (breakdown in its text), then one fact per line type that changed."""
    return _facts([find_invoice_delta(current, previous)], language)


def duplicate_charge_facts(invoice: Invoice, language: str) -> list[Fact]:
    """Return one fact per charge that appears more than once with the same text, amount and period."""
    return _facts(find_duplicate_charges(invoice), language)


def tax_facts(current: Invoice, previous: Invoice | None, language: str) -> list[Fact]:
    """Return each tax line as rate × base, and any tax whose rate changed since the previous invoice."""
    return _facts(find_taxes(current, previous), language)


def outage_credit_facts(invoice: Invoice, language: str) -> list[Fact]:
    """Recompute outage credits as monthly fee × days down ÷ 30 (the published rule)."""
    return _facts(find_outage_credits(invoice), language)


def promotion_facts(
    promotions: Iterable[Promotion], *, current: Invoice, previous: Invoice | None, language: str
) -> list[Fact]:
    """Return promotions that ended in time to leave the current invoice, and those still running."""
    return _facts(find_promotions(promotions, current=current, previous=previous), language)


def proration_facts(current: Invoice, cycle: Invoice | None, plan: Plan, language: str) -> list[Fact]:
    """Recompute each plan-change proration on `current` against the cycle that covered the change day."""
    return _facts(find_prorations(current, cycle, plan), language)


def payment_facts(invoice: Invoice, payments: Sequence[Payment], language: str) -> list[Fact]:
    """Return the sum of succeeded payments against the invoice total, and each attempt on it."""
    return _facts(find_payments(invoice, payments), language)


def due_facts(invoice: Invoice, payments: Sequence[Payment], *, today: date, language: str) -> list[Fact]:
    """Return days until due, or days overdue, for an invoice with a balance (none when settled)."""
    return _facts(find_due(invoice, payments, today=today), language)


def late_fee_facts(
    current: Invoice, invoices: Sequence[Invoice], payments: Sequence[Payment], language: str
) -> list[Fact]:
    """Explain each late fee on `current` from the invoice it penalises and that invoice's payments."""
    return _facts(find_late_fees(current, invoices, payments), language)


# --- what each capability states -------------------------------------------------------


def customer_sheet(customer: Customer) -> FactSheet:
    """State who the customer is, in their language."""
    return fact_sheet([find_customer(customer)], customer.language)


def credit_note_sheet(note: CreditNote, language: str) -> FactSheet:
    return fact_sheet([find_credit_note(note)], language)


def invoices_sheet(invoices: Sequence[Invoice], language: str) -> FactSheet:
    return fact_sheet([find_invoice_total(invoice) for invoice in invoices], language)


def account_summary_sheet(
    plan: Plan, current: Invoice | None, payments: Sequence[Payment], *, today: date, language: str
) -> FactSheet:
    """State the plan and, when there is one, the current invoice: total, payments, due date."""
    findings: list[Finding] = [find_plan(plan)]
    if current is not None:
        findings.append(find_invoice_total(current))
        findings.extend(find_payments(current, payments))
        findings.extend(find_due(current, payments, today=today))
    return fact_sheet(findings, language, payment_roles(findings))


def payments_sheet(invoices: Sequence[Invoice], payments: Sequence[Payment], language: str) -> FactSheet:
    """State paid vs total and every attempt for each invoice (most recent first) that has payments."""
    findings: list[Finding] = []
    for invoice in invoices:
        if any(p.invoice_id == invoice.id for p in payments):
            findings.extend(find_payments(invoice, payments))
    return fact_sheet(findings, language, payment_roles(findings))


def invoice_change_sheet(
    current: Invoice,
    previous: Invoice | None,
    *,
    invoices: Sequence[Invoice],
    promotions: Sequence[Promotion],
    payments: Sequence[Payment],
    plan: Plan,
    today: date,
    language: str,
) -> FactSheet:
    """State "why is my bill different": totals, the delta, every cause found, payments and due date."""
    findings: list[Finding] = [find_invoice_total(current)]
    if previous is not None:
        findings += [find_invoice_total(previous), find_invoice_delta(current, previous)]
    findings += find_duplicate_charges(current)
    findings += find_promotions(promotions, current=current, previous=previous)
    findings += find_prorations(current, previous, plan)
    findings += find_taxes(current, previous)
    findings += find_late_fees(current, invoices, payments)
    findings += find_outage_credits(current)
    findings += find_charges(current)
    if previous is not None:
        findings += find_payments(previous, payments)
    findings += find_payments(current, payments)
    findings += find_due(current, payments, today=today)
    # Last, so the key figures' places stay put: each line as billed, for a question about one line by its amount.
    findings += find_invoice_lines(current)
    return fact_sheet(findings, language, change_roles(findings))
