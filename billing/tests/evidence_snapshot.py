"""Run every simulator customer through every billing capability and collect what the bot would see.

Shared by the characterisation test (`test_evidence_snapshot.py`) and its regeneration:
`DJANGO_DEBUG=1 .venv/bin/python -m billing.tests.evidence_snapshot` rewrites the snapshot file.
Regenerate only when a test proves an evidence text wrong, and say which one in the commit.

Each customer runs twice: in the language the simulator gives it, and flipped (es ↔ en), so every
phrase of both languages meets every scenario (business late fees, for instance, are only Spanish
customers in the seeded data). The clock is pinned: the simulator's `as_of` and the client's `today`.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from datetime import date
from pathlib import Path

from billing.client import BillingClient, memory_breaker
from billing.evidence import ToolResult
from billing.simulator import BillingSimulator
from billing.simulator.transport import InProcessTransport

AS_OF = date(2026, 10, 20)
# Extra "today"s for the due-date facts: cycle A is due on 2026-10-10 (due today), cycle B on
# 2026-10-26 (the 25th is a Sunday): one day left on the 25th.
EXTRA_TODAYS = (date(2026, 10, 10), date(2026, 10, 25))
SNAPSHOT_PATH = Path(__file__).resolve().parent / "snapshots" / "evidence.json"
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


def _outcome(result: ToolResult) -> dict:
    if not result.ok:
        return {"error": result.error.code if result.error else None}
    return {
        "facts": [
            [fact.kind, fact.currency, fact.value, fact.text, fact.derivation] for fact in result.evidence
        ]
    }


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


def collect() -> dict[str, dict]:
    """Return {key: outcome} for both language modes."""
    return {key: _outcome(result) for flipped in (False, True) for key, result in capability_results(flipped)}


def write(snapshot: dict[str, dict]) -> None:
    """Store each distinct fact once (capabilities repeat the same payment lines), then the outcomes by index."""
    facts: dict[tuple, int] = {}
    results = {}
    for key, outcome in sorted(snapshot.items()):
        if "facts" in outcome:
            outcome = {"facts": [facts.setdefault(tuple(fact), len(facts)) for fact in outcome["facts"]]}
        results[key] = outcome
    body = {"facts": [list(fact) for fact in facts], "results": results}
    SNAPSHOT_PATH.parent.mkdir(exist_ok=True)
    SNAPSHOT_PATH.write_text(json.dumps(body, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")


def read() -> dict[str, dict]:
    body = json.loads(SNAPSHOT_PATH.read_text(encoding="utf-8"))
    facts = body["facts"]
    return {
        key: {"facts": [facts[index] for index in outcome["facts"]]} if "facts" in outcome else outcome
        for key, outcome in body["results"].items()
    }


if __name__ == "__main__":  # pragma: no cover - a maintenance entry point
    write(collect())
    sys.stdout.write(f"wrote {SNAPSHOT_PATH}\n")
