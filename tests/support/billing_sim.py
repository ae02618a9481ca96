"""The billing simulator pinned to one date, and every customer through every capability (shared by rooms' tests).

`AS_OF` is the date the billing tests worked their figures by hand for; `simulator_for(flipped=True)` gives
every customer the other language (es ↔ en), so every phrase of both languages meets every scenario. The
`sim` / `client` fixtures are that simulator and a client whose `today` is `AS_OF`; a test module takes
them with `sim, client = billing_sim.sim, billing_sim.client`.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from billing.api.client import BillingClient, memory_breaker
from billing.simulator import BillingSimulator
from billing.simulator.transport import InProcessTransport

AS_OF = date(2026, 10, 20)
# Extra "today"s for the due-date facts: cycle A is due on 2026-10-10 (due today), cycle B on
# 2026-10-26 (the 25th is a Sunday): one day left on the 25th.
EXTRA_TODAYS = (date(2026, 10, 10), date(2026, 10, 25))
FLIP = {"es": "en", "en": "es"}


def client_for(simulator: BillingSimulator, today: date) -> BillingClient:
    return BillingClient(
        base_url="http://billing-simulator.invalid/",
        token="sim-token",
        timeout_s=5.0,
        breaker=memory_breaker(),
        transport=InProcessTransport(simulator, read_timeout_s=5.0),
        today=lambda: today,
    )


def simulator_for(flipped: bool) -> BillingSimulator:
    simulator = BillingSimulator(as_of=AS_OF)
    if flipped:
        for account in simulator.data.accounts.values():
            account.customer = replace(account.customer, language=FLIP[account.customer.language])
    return simulator


def capability_results(flipped: bool):
    """Yield (key, ToolResult) for every customer and capability, in a stable order."""
    simulator = simulator_for(flipped)
    mode = "flipped" if flipped else "own"
    clients = {today: client_for(simulator, today) for today in (AS_OF, *EXTRA_TODAYS)}
    client = clients[AS_OF]
    try:
        for customer_id in sorted(simulator.data.accounts):
            account = simulator.data.accounts[customer_id]
            key = f"{customer_id} {mode}"
            yield (
                f"{key} find_customer",
                client.find_customer(account_number=account.customer.account_number),
            )
            yield f"{key} account_summary", client.account_summary(customer_id)
            for today in EXTRA_TODAYS:
                yield (
                    f"{key} account_summary today={today.isoformat()}",
                    clients[today].account_summary(customer_id),
                )
            yield f"{key} invoices", client.invoices(customer_id)
            yield f"{key} invoice_change", client.invoice_change(customer_id)
            if len(account.invoices) > 1:  # the oldest invoice: no previous one to compare with
                oldest = account.invoices[-1]
                yield (
                    f"{key} invoice_change period={oldest.period}",
                    client.invoice_change(customer_id, period=oldest.period),
                )
            yield f"{key} payments", client.payments(customer_id)
            if account.invoices:
                current = account.invoices[0]
                yield (
                    f"{key} request_credit_note",
                    client.request_credit_note(
                        customer_id,
                        invoice_id=current.id,
                        amount="1.00",
                        currency=current.currency,
                        reason="snapshot",
                        idempotency_key=f"snapshot-{customer_id}",
                        language=account.customer.language,
                    ),
                )
    finally:
        for each in clients.values():
            each.close()


@pytest.fixture(scope="module")
def sim():
    return simulator_for(flipped=False)


@pytest.fixture(scope="module")
def client(sim):
    with client_for(sim, AS_OF) as billing:
        yield billing


def customer(sim, scenario, variant):
    return sim.data.scenarios[scenario][variant]
