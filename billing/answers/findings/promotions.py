"""Promotions: the monthly discount an active one is worth, and what a bill loses when one ends."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from billing.answers.findings.base import Cause, Figure, Finding, two_places
from billing.records import CurrencyMismatch, Invoice, Money, Promotion


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
