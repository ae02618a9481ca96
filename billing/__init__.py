"""Billing capability, in two halves around the contract.

- The contract, shared by both halves and the simulator: `openapi.yaml` and its typed records
  (`records.py`: customers, invoices, payments, `Money`, parsed and checked against the contract).
- `api/` — the API edge: the client that calls the billing API, the circuit breaker and its shared store.
- `answers/` — the answer side: findings, key figures, phrases, wording and evidence computed from records.
- `simulator/` — a fake of the contract, in-process or on a port, for the demo and the tests.

The answer side, the records and the breaker import nothing from Django at module level. Django lives in the
app's own pieces (apps, models, migrations, the billing_call command), the simulator's thin adapter
(`simulator/views.py`, `simulator/urls.py`), and lazy reads in the client factory and the breaker's
database store.
"""
