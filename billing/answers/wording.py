"""Findings → evidence facts, through a language's phrase table. Pure, no Django, no arithmetic.

`render(finding, phrases)` returns the facts that state one finding, always the same kinds in the
same order whatever the language (key_figures.py relies on it to point at the fact that states a
figure). Values are the machine form (`"1624.00"`, `"12"`, `"2026-10-10"`), texts are the
customer's language, derivations come from the finding unchanged.
"""

from __future__ import annotations

from decimal import Decimal
from functools import singledispatch

from billing.answers.evidence import Fact
from billing.answers.findings.account import Charge, CreditNoteRequested, CurrentPlan, CustomerIdentified
from billing.answers.findings.base import Finding, two_places
from billing.answers.findings.invoice_checks import (
    DuplicateCharge,
    OutageCredit,
    TaxComputation,
    TaxRateChange,
)
from billing.answers.findings.payments import DueStatus, LateFee, PaymentAttempt, PaymentsVsTotal
from billing.answers.findings.promotions import PromotionActive, PromotionEnded
from billing.answers.findings.proration import Proration
from billing.answers.findings.totals import InvoiceDelta, InvoiceLineBilled, InvoiceTotal
from billing.answers.phrases import Phrases


def _minus(left: Decimal, right: Decimal, phrases: Phrases) -> str:
    """Return 'a − b' in the language's notation, a negative b in parentheses."""
    right_text = phrases.amount(right)
    if right < 0:
        right_text = f"({right_text})"
    return f"{phrases.amount(left)} − {right_text}"


def _billed_suffix(computed: Decimal, billed: Decimal, currency: str, phrases: Phrases) -> str:
    """Say what the invoice charges when it is not what the rule gives."""
    return (
        phrases.say("invoice_charges", billed=phrases.money(billed, currency)) if computed != billed else ""
    )


@singledispatch
def render(finding: Finding, phrases: Phrases) -> list[Fact]:
    raise TypeError(f"no wording for {type(finding).__name__}")


@render.register
def _(finding: CustomerIdentified, phrases: Phrases) -> list[Fact]:
    text = phrases.say(
        "customer",
        id=finding.customer_id,
        name=finding.name,
        account=finding.account_number,
        cycle=finding.billing_cycle,
        currency=finding.currency,
    )
    return [Fact(text, finding.customer_id, None, "customer", None)]


@render.register
def _(finding: CreditNoteRequested, phrases: Phrases) -> list[Fact]:
    text = phrases.say(
        "credit_note",
        id=finding.note_id,
        amount=phrases.money(finding.amount, finding.currency),
        invoice=finding.invoice_id,
        status=finding.status,
    )
    return [Fact(text, two_places(finding.amount), finding.currency, "credit_note", None)]


@render.register
def _(finding: CurrentPlan, phrases: Phrases) -> list[Fact]:
    text = phrases.say(
        "plan",
        name=finding.name,
        down=finding.download_mbps,
        up=finding.upload_mbps,
        price=phrases.money(finding.price, finding.currency),
        since=finding.since.isoformat(),
    )
    facts = [Fact(text, two_places(finding.price), finding.currency, "plan", None)]
    for entry in finding.price_history:
        start = entry.start_date.isoformat()
        if entry.end_date:
            span = phrases.say("price_span", start=start, end=entry.end_date.isoformat())
        else:
            span = phrases.say("price_since", start=start)
        text = phrases.say(
            "plan_price", span=span, name=entry.plan_name, price=phrases.money(entry.price, entry.currency)
        )
        facts.append(Fact(text, two_places(entry.price), entry.currency, "plan_price", None))
    return facts


@render.register
def _(finding: InvoiceTotal, phrases: Phrases) -> list[Fact]:
    text = phrases.say(
        "invoice_total",
        period=finding.period,
        total=phrases.money(finding.total, finding.currency),
        lines=len(finding.line_amounts),
        issued=finding.issue_date.isoformat(),
        due=finding.due_date.isoformat(),
    )
    return [Fact(text, two_places(finding.total), finding.currency, "invoice_total", finding.derivation)]


@render.register
def _(finding: InvoiceLineBilled, phrases: Phrases) -> list[Fact]:
    text = phrases.say("invoice_line", period=finding.period, description=finding.description,
                       amount=phrases.money(finding.amount, finding.currency))
    return [Fact(text, two_places(finding.amount), finding.currency, "invoice_line", finding.derivation)]


@render.register
def _(finding: InvoiceDelta, phrases: Phrases) -> list[Fact]:
    periods = {"current": finding.current_period, "previous": finding.previous_period}
    if not finding.changes:
        text = phrases.say(
            "delta_none", **periods, total=phrases.money(finding.current_total, finding.currency)
        )
    else:
        parts = phrases.say("delta_parts_separator").join(
            phrases.say(
                "delta_part",
                label=(
                    phrases.say("discount_ended")
                    if change.line_type == "discount" and finding.discount_ended
                    else phrases.line_types[change.line_type]
                ),
                amount=phrases.amount(change.delta),
            )
            for change in finding.changes
        )
        text = phrases.say(
            "delta", **periods, delta=phrases.money(finding.delta, finding.currency), breakdown=parts
        )
    facts = [Fact(text, two_places(finding.delta), finding.currency, "invoice_delta", finding.derivation)]
    for change in finding.changes:
        text = phrases.say(
            "delta_by_type",
            label=phrases.line_types[change.line_type],
            **periods,
            delta=phrases.money(change.delta, finding.currency),
            formula=_minus(change.current, change.previous, phrases),
        )
        facts.append(
            Fact(
                text,
                two_places(change.delta),
                finding.currency,
                "delta_by_type",
                finding.change_derivation(change),
            )
        )
    return facts


@render.register
def _(finding: DuplicateCharge, phrases: Phrases) -> list[Fact]:
    money = phrases.money
    text = phrases.say(
        "duplicate_charge",
        period=finding.period,
        description=finding.description,
        count=finding.count,
        amount=money(finding.amount, finding.currency),
        excess=money(finding.excess, finding.currency),
        vat=money(finding.vat_on_excess, finding.currency),
        overcharge=money(finding.overcharge, finding.currency),
    )
    return [
        Fact(text, two_places(finding.overcharge), finding.currency, "duplicate_charge", finding.derivation)
    ]


@render.register
def _(finding: TaxComputation, phrases: Phrases) -> list[Fact]:
    text = phrases.say(
        "tax",
        name=finding.name,
        rate=phrases.rate(finding.rate),
        base=phrases.money(finding.base, finding.currency),
        computed=phrases.money(finding.computed, finding.currency),
        period=finding.period,
    )
    text += _billed_suffix(finding.computed, finding.billed, finding.currency, phrases)
    return [Fact(text, two_places(finding.computed), finding.currency, "tax_computation", finding.derivation)]


@render.register
def _(finding: TaxRateChange, phrases: Phrases) -> list[Fact]:
    old, new = phrases.rate(finding.old_rate), phrases.rate(finding.new_rate)
    change = phrases.say(
        "tax_rate_change",
        code=finding.code,
        old=old,
        new=new,
        previous=finding.previous_period,
        current=finding.current_period,
    )
    effect = phrases.say(
        "tax_rate_effect",
        code=finding.code,
        current=finding.current_period,
        new=new,
        old=old,
        base=phrases.money(finding.base, finding.currency),
        effect=phrases.money(finding.effect, finding.currency),
    )
    return [
        Fact(change, two_places(finding.new_rate), None, "tax_rate_change", finding.rate_derivation),
        Fact(
            effect, two_places(finding.effect), finding.currency, "tax_rate_effect", finding.effect_derivation
        ),
    ]


@render.register
def _(finding: Charge, phrases: Phrases) -> list[Fact]:
    text = phrases.say(
        "charge",
        description=finding.description,
        period=finding.period,
        amount=phrases.money(finding.amount, finding.currency),
    )
    if finding.when:
        text += phrases.say("charge_date", date=finding.when.isoformat())
    return [Fact(text, two_places(finding.amount), finding.currency, finding.line_type, None)]


@render.register
def _(finding: OutageCredit, phrases: Phrases) -> list[Fact]:
    text = phrases.say(
        "outage_credit",
        period=finding.period,
        fee=phrases.money(finding.monthly_fee, finding.currency),
        days=phrases.count("days", finding.days),
        credit=phrases.money(finding.credit, finding.currency),
        start=finding.start.isoformat(),
        end=finding.end.isoformat(),
    )
    if -finding.credit != finding.billed:
        text += phrases.say("outage_billed", billed=phrases.money(finding.billed, finding.currency))
    return [Fact(text, two_places(finding.credit), finding.currency, "outage_credit", finding.derivation)]


def _promotion_how(finding: PromotionEnded | PromotionActive, phrases: Phrases) -> str:
    if finding.percent is None:
        return ""
    return phrases.say("promotion_how", rate=phrases.rate(finding.percent))


@render.register
def _(finding: PromotionEnded, phrases: Phrases) -> list[Fact]:
    ended = phrases.say(
        "promotion_ended",
        name=finding.name,
        end=finding.end_date.isoformat(),
        start=finding.start_date.isoformat(),
        period=finding.current_period,
    )
    worth = phrases.say(
        "promotion_value",
        name=finding.name,
        discount=phrases.money(finding.discount, finding.currency),
        how=_promotion_how(finding, phrases),
    )
    if finding.discount_total is not None:
        worth += phrases.say(
            "promotion_total",
            invoices=phrases.count("invoices", finding.invoices_total),
            each=phrases.amount(finding.discount),
            total=phrases.money(finding.discount_total, finding.currency),
        )
    return [
        Fact(ended, finding.end_date.isoformat(), None, "promotion_ended", finding.ended_derivation),
        Fact(
            worth, two_places(finding.discount), finding.currency, "promotion_value", finding.worth_derivation
        ),
    ]


@render.register
def _(finding: PromotionActive, phrases: Phrases) -> list[Fact]:
    if finding.end_date:
        until = phrases.say("promotion_until", end=finding.end_date.isoformat())
    else:
        until = phrases.say("promotion_no_end")
    text = phrases.say(
        "promotion_active",
        name=finding.name,
        discount=phrases.money(finding.discount, finding.currency),
        how=_promotion_how(finding, phrases),
        until=until,
    )
    return [
        Fact(
            text, two_places(finding.discount), finding.currency, "promotion_active", finding.worth_derivation
        )
    ]


@render.register
def _(finding: Proration, phrases: Phrases) -> list[Fact]:
    start, end = finding.start.isoformat(), finding.end.isoformat()
    text = phrases.say(
        "proration",
        old=finding.old_plan,
        new=finding.new_plan,
        start=start,
        end=end,
        formula=_minus(finding.new_price, finding.old_price, phrases),
        days=phrases.count("days", finding.days),
        cycle_days=phrases.count("days", finding.cycle_days),
        computed=phrases.money(finding.computed, finding.currency),
    )
    text += _billed_suffix(finding.computed, finding.billed, finding.currency, phrases)
    days = phrases.say(
        "proration_days", days=finding.days, cycle_days=finding.cycle_days, start=start, end=end
    )
    return [
        Fact(text, two_places(finding.computed), finding.currency, "proration", finding.derivation),
        Fact(days, str(finding.days), None, "proration_days", finding.days_derivation),
    ]


@render.register
def _(finding: PaymentsVsTotal, phrases: Phrases) -> list[Fact]:
    money = phrases.money
    count = phrases.count("succeeded_payments", len(finding.succeeded))
    if finding.failed_count:
        count = phrases.say(
            "payment_counts", succeeded=count, failed=phrases.count("failed_attempts", finding.failed_count)
        )
    balance = finding.balance
    if balance > 0:
        outcome = phrases.say("balance_due", amount=money(balance, finding.currency))
    elif balance < 0:
        outcome = phrases.say("credit_balance", amount=money(-balance, finding.currency))
    else:
        outcome = phrases.say("balance_settled", amount=money(balance, finding.currency))
    text = phrases.say(
        "payments_vs_total",
        period=finding.period,
        paid=money(finding.paid, finding.currency),
        count=count,
        total=money(finding.total, finding.currency),
        outcome=outcome,
    )
    return [Fact(text, two_places(balance), finding.currency, "payments_vs_total", finding.derivation)]


@render.register
def _(finding: PaymentAttempt, phrases: Phrases) -> list[Fact]:
    attempt = {
        "date": finding.date.isoformat(),
        "amount": phrases.money(finding.amount, finding.currency),
        "method": phrases.methods.get(finding.method, finding.method),
        "period": finding.period,
    }
    if finding.succeeded:
        text = phrases.say("payment", **attempt)
        if finding.igtf is not None:
            text += phrases.say("payment_igtf", igtf=phrases.money(finding.igtf, finding.currency))
    else:
        reason = finding.failure_reason or ""
        text = phrases.say("payment_failed", **attempt, reason=phrases.failures.get(reason, reason))
    return [Fact(text, two_places(finding.amount), finding.currency, finding.kind, None)]


@render.register
def _(finding: DueStatus, phrases: Phrases) -> list[Fact]:
    dates = {
        "period": finding.period,
        "due": finding.due_date.isoformat(),
        "today": finding.today.isoformat(),
        "balance": phrases.money(finding.balance, finding.currency),
    }
    if finding.overdue:
        overdue = -finding.days
        text = phrases.say("days_overdue", **dates, overdue=phrases.count("days_overdue", overdue))
        return [Fact(text, str(overdue), None, finding.kind, finding.derivation)]
    left = phrases.say("due_today") if finding.days == 0 else phrases.count("days_left", finding.days)
    text = phrases.say("days_until_due", **dates, left=left)
    return [Fact(text, str(finding.days), None, finding.kind, finding.derivation)]


@render.register
def _(finding: LateFee, phrases: Phrases) -> list[Fact]:
    money, currency = phrases.money, finding.currency
    basis = money(finding.basis, currency)
    late = {
        "period": finding.period,
        "fee": money(finding.computed, currency),
        "basis": basis,
        "late_period": finding.late_period,
        "late_due": finding.late_due.isoformat(),
        "generated": finding.generated_on.isoformat(),
    }
    if finding.rate is not None:
        text = phrases.say(
            "late_fee_rate",
            **late,
            rate=phrases.rate(finding.rate),
            late_total=money(finding.late_total, currency),
            paid_before=money(finding.paid_before, currency),
        )
    else:
        text = phrases.say("late_fee_flat", **late)
    text += _billed_suffix(finding.computed, finding.billed, currency, phrases)
    facts = [
        Fact(text, two_places(finding.computed), currency, "late_fee", finding.fee_derivation),
        Fact(
            phrases.say("late_fee_basis", basis=basis, late_period=finding.late_period),
            two_places(finding.basis),
            currency,
            "late_fee_basis",
            finding.basis_derivation,
        ),
    ]
    if finding.settled_on is not None:
        text = phrases.say(
            "days_late",
            late_period=finding.late_period,
            settled=finding.settled_on.isoformat(),
            after=phrases.count("days_after", finding.days_late),
            late_due=finding.late_due.isoformat(),
        )
        facts.append(Fact(text, str(finding.days_late), None, "days_late", finding.days_late_derivation))
    return facts
