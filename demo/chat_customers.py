"""The web chat's demo customers: the bundled billing simulator's, while no real billing API is configured."""

from __future__ import annotations

import functools

from django.conf import settings

from billing.simulator import build_dataset
from core import clock
from desk.chat import ChatCustomer


@functools.cache
def _dataset():
    return build_dataset(as_of=clock.today())


def simulator_customers() -> list[ChatCustomer]:
    """Return the simulator's customers a visitor may chat as (empty when a real billing API is set)."""
    if settings.BILLING_API_BASE_URL:
        return []
    return [ChatCustomer(id=account.customer.id, name=account.customer.name, language=account.customer.language,
                         currency=account.customer.currency, scenario=account.scenario,
                         whatsapp_id=account.customer.whatsapp_id)
            for account in _dataset().accounts.values()]
