"""The billing API edge: everything that talks to the system of record.

- `client.py` — one method per capability: the HTTP calls (explicit timeouts, no retries), each answer parsed
  against the contract (`billing/openapi.yaml`, `billing/records.py`), and the answer side's computation of
  what the capability returns (`ToolResult`);
- `breaker.py` — the circuit breaker's decisions (pure, injected clock);
- `breaker_store.py` — where the breaker's state lives across processes (Redis, or PostgreSQL's
  `BreakerState` row).
"""
