"""What billing records say, computed: typed findings with their derivations and no language.

Pure Python, `Decimal` only, one currency at a time (`Money` raises `CurrencyMismatch` when USD
and VES meet). Each `find_*` function reads API records and returns findings: dataclasses holding
the amounts (two-place Decimals in the finding's `currency`), dates, counts and the formula that
produced them (`*_derivation`, language-neutral, for analysts). Wording is someone else's job
(wording.py renders a finding through a language's phrase table into evidence facts).

A finding that answers a question about a change or a problem declares the figures an answer must
state (`figures()`), each naming the kind of evidence fact that states it; key_figures.py decides
which of them are primary for a capability. Dates are injected (`today`), never read from the clock.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from billing.records import (
    LINE_TYPES,
    CreditNote,
    CurrencyMismatch,
    Customer,
    Invoice,
    LineItem,
    Money,
    Payment,
    Plan,
    Promotion,
    money_sum,
    quantize,
)

HUNDRED = Decimal(100)
ONE_OFF_CHARGES = ("installation", "reconnection", "technical_visit", "credit")


def two_places(value: Decimal) -> str:
    """Return the machine form of an amount or a rate: `1624.00`, `-7.74`, `16.00`."""
    return f"{value:.2f}"


def minus_formula(left: Decimal, right: Decimal) -> str:
    """Return 'a - b' in machine form (the derivations' notation)."""
    return f"{two_places(left)} - {two_places(right)}"


@dataclass(frozen=True)
class Figure:
    """A figure an answer must state: what it is, its value, and the kind of fact that states it."""

    name: str
    value: Decimal | int | date
    kind: str


class Finding:
    """Base of every finding; one that answers a question about a change or a problem declares figures."""

    def figures(self) -> tuple[Figure, ...]:
        return ()


class Cause(Finding):
    """A finding that explains part of a bill change; its `effect` (a Decimal) is what it moves the bill by.

    `effect` is a field or a property of each cause, so it is not declared here: a property on the
    base would shadow a dataclass field of the same name.
    """

    effect: Decimal


# --- read from the system of record ----------------------------------------------------


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


# --- totals and month-over-month delta -------------------------------------------------


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


# --- single-invoice checks -------------------------------------------------------------


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


# --- promotions ------------------------------------------------------------------------


@dataclass(frozen=True)
class _PromotionWorth(Finding):
    promotion_id: str
    name: str
    currency: str
    discount: Decimal
    percent: Decimal | None

    @property
    def worth_derivation(self) -> str:
        text = f"monthly_discount({self.promotion_id}) = {two_places(self.discount)}"
        if self.percent is not None:
            text += f" ({two_places(self.percent)}% of the monthly fee)"
        return text


@dataclass(frozen=True)
class PromotionEnded(_PromotionWorth, Cause):
    """A promotion that ended in time to leave the current invoice: the discount that stopped."""

    start_date: date
    end_date: date
    invoices_total: int | None
    current_id: str
    current_period: str
    current_service_start: date

    @property
    def discount_total(self) -> Decimal | None:
        """What the promotion was worth over all its invoices, when it covered a set number of them."""
        if not self.invoices_total:
            return None
        return Money(amount=self.discount, currency=self.currency).times(self.invoices_total).amount

    @property
    def effect(self) -> Decimal:
        return self.discount

    @property
    def ended_derivation(self) -> str:
        return (
            f"end_date({self.promotion_id}) = {self.end_date.isoformat()} < "
            f"service_start({self.current_id}) = {self.current_service_start.isoformat()}"
        )

    def figures(self) -> tuple[Figure, ...]:
        return (Figure(name="discount_ended", value=self.discount, kind="promotion_value"),)


@dataclass(frozen=True)
class PromotionActive(_PromotionWorth):
    end_date: date | None


def find_promotions(
    promotions: Iterable[Promotion], *, current: Invoice, previous: Invoice | None
) -> list[PromotionEnded | PromotionActive]:
    """Return promotions that ended in time to leave the current invoice, and those still running."""
    found: list[PromotionEnded | PromotionActive] = []
    window_start = previous.service_start if previous is not None else current.service_start
    for promotion in promotions:
        discount = promotion.monthly_discount
        if discount.currency != current.currency:
            raise CurrencyMismatch(
                f"promotion {promotion.id} is in {discount.currency}, invoice in {current.currency}"
            )
        worth = {
            "promotion_id": promotion.id,
            "name": promotion.name,
            "currency": discount.currency,
            "discount": discount.amount,
            "percent": promotion.percent,
        }
        ended = promotion.end_date is not None and promotion.end_date < current.service_start
        if ended and promotion.end_date >= window_start - timedelta(days=1):
            found.append(
                PromotionEnded(
                    **worth,
                    start_date=promotion.start_date,
                    end_date=promotion.end_date,
                    invoices_total=promotion.invoices_total,
                    current_id=current.id,
                    current_period=current.period,
                    current_service_start=current.service_start,
                )
            )
        elif not ended and promotion.start_date <= current.service_end:
            found.append(PromotionActive(**worth, end_date=promotion.end_date))
    return found


# --- proration -------------------------------------------------------------------------


@dataclass(frozen=True)
class Proration(Cause):
    """A plan-change proration: (new − old list price) × remaining days ÷ days of the cycle."""

    period: str
    currency: str
    old_plan: str
    new_plan: str
    old_price: Decimal
    new_price: Decimal
    start: date
    end: date
    days: int
    cycle_start: date
    cycle_end: date
    cycle_days: int
    computed: Decimal
    billed: Decimal
    line_id: str

    @property
    def effect(self) -> Decimal:
        return self.computed

    @property
    def derivation(self) -> str:
        return (
            f"({minus_formula(self.new_price, self.old_price)}) x {self.days} / {self.cycle_days} = "
            f"{two_places(self.computed)} (line {self.line_id}: {two_places(self.billed)})"
        )

    @property
    def days_derivation(self) -> str:
        return (
            f"{self.end.isoformat()} - {self.start.isoformat()} + 1 = {self.days}; "
            f"cycle {self.cycle_start.isoformat()}..{self.cycle_end.isoformat()} = {self.cycle_days}"
        )

    def figures(self) -> tuple[Figure, ...]:
        return (
            Figure(name="prorated_amount", value=self.computed, kind="proration"),
            Figure(name="prorated_days", value=self.days, kind="proration_days"),
        )


def _price_entries(plan: Plan, change_day: date):
    new = next((e for e in plan.price_history if e.start_date == change_day), None)
    old = next((e for e in plan.price_history if e.end_date == change_day - timedelta(days=1)), None)
    return old, new


def find_prorations(current: Invoice, cycle: Invoice | None, plan: Plan) -> list[Proration]:
    """Recompute each plan-change proration on `current`.

    Remaining days count from the change day (included) to the end of the cycle that was running —
    the service period of `cycle`, the invoice that covered the change day.
    """
    found = []
    for line in current.lines_of("proration"):
        if line.service_start is None or line.service_end is None:
            continue
        old, new = _price_entries(plan, line.service_start)
        if old is None or new is None or cycle is None:
            continue
        if not cycle.service_start <= line.service_start <= cycle.service_end:
            continue
        days = (line.service_end - line.service_start).days + 1
        cycle_days = (cycle.service_end - cycle.service_start).days + 1
        diff = new.price - old.price
        computed = Money(amount=quantize(diff.amount * days / Decimal(cycle_days)), currency=current.currency)
        found.append(
            Proration(
                period=current.period,
                currency=current.currency,
                old_plan=old.plan_name,
                new_plan=new.plan_name,
                old_price=old.price.amount,
                new_price=new.price.amount,
                start=line.service_start,
                end=line.service_end,
                days=days,
                cycle_start=cycle.service_start,
                cycle_end=cycle.service_end,
                cycle_days=cycle_days,
                computed=computed.amount,
                billed=line.amount.amount,
                line_id=line.id,
            )
        )
    return found


# --- payments, late fees, due dates ----------------------------------------------------


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
