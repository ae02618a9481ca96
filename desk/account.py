"""The account panel of the conversation page: the subscriber's plan, the current invoice whole, the payments.

Read from billing's client (its circuit breaker included) and written for the contact: every amount in
billing's one money notation in the contact's language, every code in words (desk.labels).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from decimal import Decimal

from billing.answers.findings.invoice_checks import find_duplicate_charges
from billing.answers.findings.payments import find_payments
from billing.answers.money import LANGUAGES, money_text
from billing.api.client import billing_client
from billing.records import PLAN_TERM_LABELS, parse_invoice, parse_payment
from desk.labels import code_label

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PaymentRow:
    """One payment as the account panel lists it, its amount already written for the contact."""

    date: str
    amount: str
    method: str
    status: str

    @property
    def method_label(self) -> str:
        return code_label(self.method)

    @property
    def status_label(self) -> str:
        return code_label(self.status)

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"


@dataclass(frozen=True)
class BillLine:
    """One line of the current invoice: what it is, its amount written for the contact, and whether billing's
    computations find it charged more than once."""

    description: str
    kind: str
    amount: str
    duplicate: bool = False

    @property
    def kind_label(self) -> str:
        return code_label(self.kind)


@dataclass(frozen=True)
class AccountSummary:
    """What the desk shows of a subscriber's billing account; `state` says whether there is anything.

    Amounts come written in the contact's language (`plan_price`, `invoice_total`, each line's and each
    payment's `amount`, `paid`, `balance`), in billing's one money notation: `Bs. 3.248,00`, `USD 40,60`.
    The current invoice comes whole: its lines (a charge billed twice marked), the payments on it and the
    open balance (its total less the payments that went through, billing's own finding).
    """

    state: str  # ok | unavailable | not_found | unidentified
    customer: dict | None = None
    plan: dict | None = None
    invoice: dict | None = None
    payments: tuple[PaymentRow, ...] = ()
    error: str = ""
    plan_price: str = ""
    invoice_total: str = ""
    lines: tuple[BillLine, ...] = ()
    invoice_payments: tuple[PaymentRow, ...] = ()
    paid: str = ""
    balance: str = ""
    balance_state: str = ""  # due | settled | credit (paid in excess); "" when billing's records could not be read
    language: str = "es"

    @property
    def plan_term(self) -> str:
        """How the plan is billed, in words ("billed monthly"); "" when billing does not say."""
        return PLAN_TERM_LABELS.get((self.plan or {}).get("term") or "", "")

    @property
    def duplicates(self) -> int:
        return sum(1 for line in self.lines if line.duplicate)


def _bill(invoice_json: dict, payments_json: list, money) -> dict:
    """Return the current invoice's lines, the payments on it and its open balance, for the panel."""
    try:
        invoice = parse_invoice(invoice_json)
        payments = [parse_payment(p) for p in payments_json]
        duplicated = {line_id for finding in find_duplicate_charges(invoice) for line_id in finding.line_ids}
        status = find_payments(invoice, payments)[0]
    except ValueError:  # a record off the contract or a payment in another currency: the total still shows
        logger.exception("the bill of invoice %s could not be read", invoice_json.get("id"))
        return {}
    balance = status.balance
    return {
        "lines": tuple(BillLine(line.description, line.type, money(line.amount.to_json()), line.id in duplicated)
                       for line in invoice.lines),
        "invoice_payments": tuple(PaymentRow(p.date.isoformat(), money(p.amount.to_json()), p.method, p.status)
                                  for p in sorted(payments, key=lambda p: (p.date, p.id))
                                  if p.invoice_id == invoice.id),
        "paid": money({"amount": status.paid, "currency": invoice.currency}),
        "balance": money({"amount": abs(balance), "currency": invoice.currency}),
        "balance_state": "due" if balance > 0 else ("credit" if balance < 0 else "settled"),
    }


def account_summary(*, customer_id: str, language: str = "es", payments: int = 3) -> AccountSummary:
    """Ask the billing capability for the plan, current invoice (whole) and last payments of a customer.

    `language` is the contact's; one billing cannot write falls back to Spanish, the contacts' default.
    """
    if not customer_id:
        return AccountSummary(state="unidentified")
    try:
        result = billing_client().account_summary(customer_id)
    except Exception:  # the panel must not take the conversation page down with it
        logger.exception("account summary for %s failed", customer_id)
        return AccountSummary(state="unavailable")
    if result.should_escalate:
        return AccountSummary(state="unavailable", error=result.error.code if result.error else "")
    if not result.ok:
        return AccountSummary(state="not_found", error=result.error.message if result.error else "")
    language = language if language in LANGUAGES else "es"

    def money(payload: dict) -> str:
        return money_text(Decimal(payload["amount"]), payload["currency"], language)

    data = result.data
    plan = (data.get("plan") or {}).get("plan")
    invoice = data.get("current_invoice")
    every_payment = data.get("payments") or []
    return AccountSummary(
        state="ok", customer=data.get("customer"), plan=plan, invoice=invoice,
        payments=tuple(PaymentRow(p["date"], money(p["amount"]), p["method"], p["status"])
                       for p in every_payment[:payments]),
        plan_price=money(plan["price"]) if plan else "",
        invoice_total=money(invoice["total"]) if invoice else "",
        language=language,
        **(_bill(invoice, every_payment, money) if invoice else {}),
    )
