"""Proration: a plan change in the middle of a cycle, recomputed from the plan's price history."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from billing.answers.findings.base import Cause, Figure, minus_formula, two_places
from billing.records import Invoice, Money, Plan, quantize


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
