"""Typed records of the billing contract, parsed strictly from its JSON.

Pure Python. The simulator serializes with `to_json`, the client parses with `parse_*`;
anything that does not match the contract raises `ContractViolation`, which the client
treats as an infrastructure failure (the system of record sent something we cannot trust).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

CURRENCIES = ("USD", "VES")
LINE_TYPES = (
    "recurring",
    "proration",
    "discount",
    "credit",
    "installation",
    "technical_visit",
    "reconnection",
    "late_fee",
    "tax",
)
PAYMENT_STATUSES = ("succeeded", "failed")
PAYMENT_METHODS = (
    "pago_movil",
    "bank_transfer",
    "direct_debit",
    "card",
    "international_card",
    "zelle",
    "cash_usd",
    "cash_ves",
)
INVOICE_STATUSES = ("open", "paid", "overdue")
CENT = Decimal("0.01")
_AMOUNT_RE = re.compile(r"^-?[0-9]{1,12}\.[0-9]{2}$")
_RATE_RE = re.compile(r"^[0-9]{1,3}\.[0-9]{2}$")
_PERIOD_RE = re.compile(r"^[0-9]{4}-(0[1-9]|1[0-2])$")


class ContractViolation(ValueError):
    """A payload does not match the billing contract."""


class CurrencyMismatch(ValueError):
    """Two amounts in different currencies were combined."""


def quantize(value: Decimal) -> Decimal:
    """Round to cents, half up, the way invoices round."""
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class Money:
    amount: Decimal
    currency: str

    def __post_init__(self):
        if self.currency not in CURRENCIES:
            raise ContractViolation(f"unknown currency {self.currency!r}")
        if not isinstance(self.amount, Decimal):
            raise TypeError("Money.amount must be a Decimal")
        if self.amount.as_tuple().exponent != -2:
            object.__setattr__(self, "amount", quantize(self.amount))

    @classmethod
    def of(cls, amount: str | int | Decimal, currency: str) -> Money:
        return cls(quantize(Decimal(amount)), currency)

    @classmethod
    def zero(cls, currency: str) -> Money:
        return cls(Decimal("0.00"), currency)

    def _same(self, other: Money) -> None:
        if not isinstance(other, Money):
            raise TypeError(f"cannot combine Money with {type(other).__name__}")
        if other.currency != self.currency:
            raise CurrencyMismatch(f"{self.currency} and {other.currency} are never mixed")

    def __add__(self, other: Money) -> Money:
        self._same(other)
        return Money(self.amount + other.amount, self.currency)

    def __sub__(self, other: Money) -> Money:
        self._same(other)
        return Money(self.amount - other.amount, self.currency)

    def __neg__(self) -> Money:
        return Money(-self.amount, self.currency)

    def __lt__(self, other: Money) -> bool:
        self._same(other)
        return self.amount < other.amount

    def __le__(self, other: Money) -> bool:
        self._same(other)
        return self.amount <= other.amount

    def times(self, factor: Decimal | int) -> Money:
        """Return self × factor rounded half up to cents."""
        return Money(quantize(self.amount * Decimal(factor)), self.currency)

    def is_zero(self) -> bool:
        return self.amount == 0

    def to_json(self) -> dict[str, str]:
        return {"amount": f"{self.amount:.2f}", "currency": self.currency}


def money_sum(amounts, currency: str) -> Money:
    """Sum Money values of one currency; an empty sum is zero in that currency."""
    total = Money.zero(currency)
    for amount in amounts:
        total = total + amount
    return total


@dataclass(frozen=True)
class Customer:
    id: str
    name: str
    kind: str  # person | company
    language: str  # es | en
    currency: str
    national_id: str
    account_number: str
    phone: str
    whatsapp_id: str
    billing_cycle: str  # A | B
    segment: str  # home | business
    state: str
    status: str  # active | suspended
    customer_since: date

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "kind": self.kind,
            "language": self.language,
            "currency": self.currency,
            "national_id": self.national_id,
            "account_number": self.account_number,
            "phone": self.phone,
            "whatsapp_id": self.whatsapp_id,
            "billing_cycle": self.billing_cycle,
            "segment": self.segment,
            "state": self.state,
            "status": self.status,
            "customer_since": self.customer_since.isoformat(),
        }


@dataclass(frozen=True)
class LineItem:
    id: str
    type: str
    description: str
    amount: Money
    code: str | None = None
    service_start: date | None = None
    service_end: date | None = None
    date: date | None = None
    rate: Decimal | None = None  # percent, for tax and late_fee lines
    base: Money | None = None  # taxable base, for tax lines
    related_invoice_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "description": self.description,
            "amount": self.amount.to_json(),
            "code": self.code,
            "service_start": _iso(self.service_start),
            "service_end": _iso(self.service_end),
            "date": _iso(self.date),
            "rate": f"{self.rate:.2f}" if self.rate is not None else None,
            "base": self.base.to_json() if self.base is not None else None,
            "related_invoice_id": self.related_invoice_id,
        }


@dataclass(frozen=True)
class Invoice:
    id: str
    customer_id: str
    period: str  # YYYY-MM of the issue date
    issue_date: date
    due_date: date
    service_start: date
    service_end: date
    status: str
    currency: str
    lines: tuple[LineItem, ...]
    total: Money

    def lines_of(self, line_type: str) -> tuple[LineItem, ...]:
        return tuple(line for line in self.lines if line.type == line_type)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "customer_id": self.customer_id,
            "period": self.period,
            "issue_date": self.issue_date.isoformat(),
            "due_date": self.due_date.isoformat(),
            "service_start": self.service_start.isoformat(),
            "service_end": self.service_end.isoformat(),
            "status": self.status,
            "currency": self.currency,
            "lines": [line.to_json() for line in self.lines],
            "total": self.total.to_json(),
        }


@dataclass(frozen=True)
class Payment:
    id: str
    invoice_id: str
    date: date
    amount: Money
    method: str
    status: str
    failure_reason: str | None = None
    igtf: Money | None = None  # 3 % tax on foreign-currency payments, on the receipt only

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "invoice_id": self.invoice_id,
            "date": self.date.isoformat(),
            "amount": self.amount.to_json(),
            "method": self.method,
            "status": self.status,
            "failure_reason": self.failure_reason,
            "igtf": self.igtf.to_json() if self.igtf is not None else None,
        }


@dataclass(frozen=True)
class Promotion:
    id: str
    code: str
    name: str
    start_date: date
    end_date: date | None
    monthly_discount: Money
    percent: Decimal | None = None
    invoices_total: int | None = None  # how many invoices the promotion covers, when limited

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "code": self.code,
            "name": self.name,
            "start_date": self.start_date.isoformat(),
            "end_date": _iso(self.end_date),
            "monthly_discount": self.monthly_discount.to_json(),
            "percent": f"{self.percent:.2f}" if self.percent is not None else None,
            "invoices_total": self.invoices_total,
        }


@dataclass(frozen=True)
class PlanPrice:
    plan_code: str
    plan_name: str
    price: Money
    start_date: date
    end_date: date | None

    def to_json(self) -> dict[str, Any]:
        return {
            "plan_code": self.plan_code,
            "plan_name": self.plan_name,
            "price": self.price.to_json(),
            "start_date": self.start_date.isoformat(),
            "end_date": _iso(self.end_date),
        }


# How the customer's contract bills: month to month, the year prepaid, or the thirty-day trial. Some policies differ
# by term (the annual plan's and the trial's refunds); a billing system that does not say leaves it unknown ("").
PLAN_TERMS = ("monthly", "annual", "trial")
PLAN_TERM_LABELS = {"monthly": "billed monthly", "annual": "annual plan, prepaid", "trial": "trial"}


@dataclass(frozen=True)
class Plan:
    code: str
    name: str
    download_mbps: int
    upload_mbps: int
    price: Money
    since: date
    price_history: tuple[PlanPrice, ...] = field(default_factory=tuple)
    term: str = ""  # one of PLAN_TERMS, "" when billing does not report it

    def to_json(self) -> dict[str, Any]:
        plan = {
            "code": self.code,
            "name": self.name,
            "download_mbps": self.download_mbps,
            "upload_mbps": self.upload_mbps,
            "price": self.price.to_json(),
            "since": self.since.isoformat(),
        }
        if self.term:
            plan["term"] = self.term
        return {"plan": plan, "price_history": [entry.to_json() for entry in self.price_history]}


@dataclass(frozen=True)
class CreditNote:
    id: str
    customer_id: str
    invoice_id: str
    amount: Money
    reason: str
    status: str
    created_at: datetime

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "customer_id": self.customer_id,
            "invoice_id": self.invoice_id,
            "amount": self.amount.to_json(),
            "reason": self.reason,
            "status": self.status,
            "created_at": self.created_at.isoformat(),
        }


def _iso(value: date | None) -> str | None:
    return value.isoformat() if value is not None else None


# --- parsing (client side) -------------------------------------------------------------


def _obj(payload: Any, where: str) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise ContractViolation(f"{where}: expected an object")
    return payload


def _req(payload: dict[str, Any], key: str, where: str) -> Any:
    if key not in payload or payload[key] is None:
        raise ContractViolation(f"{where}.{key}: required")
    return payload[key]


def _str(payload: dict[str, Any], key: str, where: str, *, choices=None, optional=False) -> str | None:
    value = payload.get(key)
    if value is None and optional:
        return None
    value = _req(payload, key, where)
    if not isinstance(value, str):
        raise ContractViolation(f"{where}.{key}: expected a string")
    if choices is not None and value not in choices:
        raise ContractViolation(f"{where}.{key}: {value!r} not one of {choices}")
    return value


def _int(payload: dict[str, Any], key: str, where: str, *, optional=False) -> int | None:
    value = payload.get(key)
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ContractViolation(f"{where}.{key}: expected an integer")
    return value


def _date(payload: dict[str, Any], key: str, where: str, *, optional=False) -> date | None:
    value = _str(payload, key, where, optional=optional)
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise ContractViolation(f"{where}.{key}: not an ISO date") from exc


def _rate(payload: dict[str, Any], key: str, where: str) -> Decimal | None:
    value = _str(payload, key, where, optional=True)
    if value is None:
        return None
    if not _RATE_RE.match(value):
        raise ContractViolation(f"{where}.{key}: not a rate with two decimals")
    return Decimal(value)


def parse_money(payload: Any, where: str = "money") -> Money:
    """Return Money from {"amount": "14.00", "currency": "USD"}."""
    payload = _obj(payload, where)
    amount = _str(payload, "amount", where)
    currency = _str(payload, "currency", where, choices=CURRENCIES)
    if not _AMOUNT_RE.match(amount):
        raise ContractViolation(f"{where}.amount: {amount!r} is not a decimal string with two places")
    try:
        return Money(Decimal(amount), currency)
    except InvalidOperation as exc:  # pragma: no cover - the regex already excludes it
        raise ContractViolation(f"{where}.amount: not a number") from exc


def _money(payload: dict[str, Any], key: str, where: str, *, optional=False) -> Money | None:
    value = payload.get(key)
    if value is None and optional:
        return None
    return parse_money(_req(payload, key, where), f"{where}.{key}")


def parse_customer(payload: Any) -> Customer:
    where = "customer"
    payload = _obj(payload, where)
    return Customer(
        id=_str(payload, "id", where),
        name=_str(payload, "name", where),
        kind=_str(payload, "kind", where, choices=("person", "company")),
        language=_str(payload, "language", where, choices=("es", "en")),
        currency=_str(payload, "currency", where, choices=CURRENCIES),
        national_id=_str(payload, "national_id", where),
        account_number=_str(payload, "account_number", where),
        phone=_str(payload, "phone", where),
        whatsapp_id=_str(payload, "whatsapp_id", where),
        billing_cycle=_str(payload, "billing_cycle", where, choices=("A", "B")),
        segment=_str(payload, "segment", where, choices=("home", "business")),
        state=_str(payload, "state", where),
        status=_str(payload, "status", where, choices=("active", "suspended")),
        customer_since=_date(payload, "customer_since", where),
    )


def parse_line(payload: Any, currency: str) -> LineItem:
    where = "line"
    payload = _obj(payload, where)
    line = LineItem(
        id=_str(payload, "id", where),
        type=_str(payload, "type", where, choices=LINE_TYPES),
        description=_str(payload, "description", where),
        amount=_money(payload, "amount", where),
        code=_str(payload, "code", where, optional=True),
        service_start=_date(payload, "service_start", where, optional=True),
        service_end=_date(payload, "service_end", where, optional=True),
        date=_date(payload, "date", where, optional=True),
        rate=_rate(payload, "rate", where),
        base=_money(payload, "base", where, optional=True),
        related_invoice_id=_str(payload, "related_invoice_id", where, optional=True),
    )
    if line.amount.currency != currency or (line.base is not None and line.base.currency != currency):
        raise ContractViolation(f"line {line.id}: currency differs from its invoice")
    return line


def parse_invoice(payload: Any) -> Invoice:
    where = "invoice"
    payload = _obj(payload, where)
    currency = _str(payload, "currency", where, choices=CURRENCIES)
    period = _str(payload, "period", where)
    if not _PERIOD_RE.match(period):
        raise ContractViolation(f"{where}.period: {period!r} is not YYYY-MM")
    raw_lines = _req(payload, "lines", where)
    if not isinstance(raw_lines, list):
        raise ContractViolation(f"{where}.lines: expected an array")
    lines = tuple(parse_line(line, currency) for line in raw_lines)
    total = _money(payload, "total", where)
    if total.currency != currency:
        raise ContractViolation(f"{where}.total: currency differs from the invoice")
    if money_sum((line.amount for line in lines), currency) != total:
        raise ContractViolation(f"{where}.total: does not equal the sum of its lines")
    return Invoice(
        id=_str(payload, "id", where),
        customer_id=_str(payload, "customer_id", where),
        period=period,
        issue_date=_date(payload, "issue_date", where),
        due_date=_date(payload, "due_date", where),
        service_start=_date(payload, "service_start", where),
        service_end=_date(payload, "service_end", where),
        status=_str(payload, "status", where, choices=INVOICE_STATUSES),
        currency=currency,
        lines=lines,
        total=total,
    )


def parse_payment(payload: Any) -> Payment:
    where = "payment"
    payload = _obj(payload, where)
    return Payment(
        id=_str(payload, "id", where),
        invoice_id=_str(payload, "invoice_id", where),
        date=_date(payload, "date", where),
        amount=_money(payload, "amount", where),
        method=_str(payload, "method", where, choices=PAYMENT_METHODS),
        status=_str(payload, "status", where, choices=PAYMENT_STATUSES),
        failure_reason=_str(payload, "failure_reason", where, optional=True),
        igtf=_money(payload, "igtf", where, optional=True),
    )


def parse_promotion(payload: Any) -> Promotion:
    where = "promotion"
    payload = _obj(payload, where)
    return Promotion(
        id=_str(payload, "id", where),
        code=_str(payload, "code", where),
        name=_str(payload, "name", where),
        start_date=_date(payload, "start_date", where),
        end_date=_date(payload, "end_date", where, optional=True),
        monthly_discount=_money(payload, "monthly_discount", where),
        percent=_rate(payload, "percent", where),
        invoices_total=_int(payload, "invoices_total", where, optional=True),
    )


def parse_plan(payload: Any) -> Plan:
    where = "plan"
    payload = _obj(payload, where)
    plan = _obj(_req(payload, "plan", where), f"{where}.plan")
    history = _req(payload, "price_history", where)
    if not isinstance(history, list):
        raise ContractViolation(f"{where}.price_history: expected an array")
    entries = []
    for raw in history:
        raw = _obj(raw, "price_history[]")
        entries.append(
            PlanPrice(
                plan_code=_str(raw, "plan_code", "price_history[]"),
                plan_name=_str(raw, "plan_name", "price_history[]"),
                price=_money(raw, "price", "price_history[]"),
                start_date=_date(raw, "start_date", "price_history[]"),
                end_date=_date(raw, "end_date", "price_history[]", optional=True),
            )
        )
    return Plan(
        code=_str(plan, "code", "plan"),
        name=_str(plan, "name", "plan"),
        download_mbps=_int(plan, "download_mbps", "plan"),
        upload_mbps=_int(plan, "upload_mbps", "plan"),
        price=_money(plan, "price", "plan"),
        since=_date(plan, "since", "plan"),
        price_history=tuple(entries),
        term=_str(plan, "term", "plan", choices=PLAN_TERMS, optional=True) or "",
    )


def parse_credit_note(payload: Any) -> CreditNote:
    where = "credit_note"
    payload = _obj(payload, where)
    created = _str(payload, "created_at", where)
    try:
        created_at = datetime.fromisoformat(created)
    except ValueError as exc:
        raise ContractViolation(f"{where}.created_at: not an ISO datetime") from exc
    return CreditNote(
        id=_str(payload, "id", where),
        customer_id=_str(payload, "customer_id", where),
        invoice_id=_str(payload, "invoice_id", where),
        amount=_money(payload, "amount", where),
        reason=_str(payload, "reason", where),
        status=_str(payload, "status", where, choices=("pending_review", "approved", "rejected")),
        created_at=created_at,
    )
