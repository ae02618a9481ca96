"""Billing capability latency: open circuit (simulator down) and simulator up, against a same-run baseline.

    .venv/bin/python bench/billing.py [--iterations 300]

Targets: a call that finds the circuit open returns in ≤ 5 ms p95 with no network;
with the simulator up on a local port, p95 ≤ 20 ms per capability call. Baselines are raw
httpx GETs to the same server in the same run, so ratios survive a slower or faster machine.
The breaker runs on each shared store available (database always, Redis when reachable) under
a bench-only name; the production breaker's state is not touched.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from django.core.management import call_command

import httpx

from billing.api.breaker import CircuitBreaker, MemoryStore, Policy
from billing.api.breaker_store import DatabaseStore, RedisStore
from billing.api.client import BillingClient
from billing.simulator import BillingSimulator, serve_in_thread
from billing.simulator.transport import InProcessTransport

AS_OF = date(2026, 10, 20)
TOKEN = "sim-token"
REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/15"
OPEN_TARGET_MS = 5.0
UP_TARGET_MS = 20.0


def measure(action, iterations: int, warmup: int = 20) -> list[float]:
    for _ in range(warmup):
        action()
    samples = []
    for _ in range(iterations):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def p50(samples):
    return statistics.median(samples)


def p95(samples):
    return statistics.quantiles(samples, n=100)[94]


def stores():
    """Yield (label, store) for every shared store reachable here, plus the in-memory reference."""
    yield "memory", MemoryStore()
    yield "database", DatabaseStore()
    try:
        import redis

        client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=0.5)
        client.ping()
        yield "redis", RedisStore(client, prefix="tracedesk-bench:")
    except Exception as exc:  # noqa: BLE001 - a bench reports what it could not measure
        print(f"  (redis store skipped: {exc})")


def row(
    label: str, samples: list[float], *, target: float | None = None, baseline: list[float] | None = None
) -> str:
    text = f"  {label:<62} p50 {p50(samples):7.3f} ms   p95 {p95(samples):7.3f} ms"
    if baseline:
        text += (
            f"   vs baseline: p50 {p50(samples) / p50(baseline):5.2f}×, "
            f"p95 {p95(samples) / p95(baseline):5.2f}×"
        )
    if target is not None:
        verdict = "OK" if p95(samples) <= target else "MISSED"
        text += f"   target ≤ {target:g} ms: {verdict}"
    return text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=300)
    args = parser.parse_args()
    n = args.iterations
    # The database store keeps breaker state in a table: on a fresh clone nothing has created it yet.
    call_command("migrate", interactive=False, verbosity=0)
    app = BillingSimulator(as_of=AS_OF)
    customer = app.data.scenarios["promotion_ended"][0]
    name = f"bench-{uuid.uuid4().hex[:8]}"

    with serve_in_thread(app) as sim:
        print(
            f"Billing bench — simulator {sim.base_url} (threaded wsgiref), {n} calls per row, Python "
            f"{sys.version.split()[0]}"
        )
        raw = httpx.Client(base_url=sim.base_url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=3.0)

        # --- simulator down, circuit open ------------------------------------------------
        print("\nSimulator down (global fault 503), circuit open — a call must not touch the network")
        app.set_fault("503")
        down = measure(lambda: raw.get(f"/customers/{customer}"), n)
        print(row("baseline: raw httpx GET → 503 (what each call would cost)", down))
        for label, store in stores():
            breaker = CircuitBreaker(name, store, Policy(failure_threshold=1, cooldown_s=3600.0))
            breaker.reset()
            client = BillingClient(
                base_url=sim.base_url, token=TOKEN, timeout_s=3.0, breaker=breaker, today=lambda: AS_OF
            )
            assert client.account_summary(customer).error.code == "http_503"
            before = app.requests_served
            samples = measure(lambda client=client: client.account_summary(customer), n)
            assert client.account_summary(customer).error.code == "circuit_open"
            assert app.requests_served == before, "an open circuit reached the simulator"
            print(
                row(
                    f"account_summary, breaker open, store={label}",
                    samples,
                    target=OPEN_TARGET_MS,
                    baseline=down,
                )
            )
            breaker.reset()
            if hasattr(store, "forget"):
                store.forget(name)
            client.close()
        print("  simulator requests while the circuit was open: 0 (checked after each row)")

        # --- simulator up ------------------------------------------------------------------
        app.set_fault(None)
        print("\nSimulator up on a local port — p95 per capability call (breaker closed, database store)")
        up = measure(lambda: raw.get(f"/customers/{customer}"), n)
        print(row("baseline: raw httpx GET /customers/{id} → 200", up))
        store = DatabaseStore()
        breaker = CircuitBreaker(name, store, Policy(failure_threshold=5, cooldown_s=30.0))
        customer_record = app.data.accounts[customer].customer
        invoice_id = app.data.accounts[customer].invoices[0].id
        keys = iter(f"bench-{uuid.uuid4().hex}" for _ in range(10 * n))
        with BillingClient(
            base_url=sim.base_url, token=TOKEN, timeout_s=3.0, breaker=breaker, today=lambda: AS_OF
        ) as client:
            capabilities = {
                "find_customer (1 HTTP call)": lambda: client.find_customer(phone=customer_record.phone),
                "account_summary (4 HTTP calls)": lambda: client.account_summary(customer),
                "invoices (2 HTTP calls)": lambda: client.invoices(customer),
                "invoice_change (5 HTTP calls)": lambda: client.invoice_change(customer),
                "payments (3 HTTP calls)": lambda: client.payments(customer),
                "request_credit_note (1 HTTP call)": lambda: client.request_credit_note(
                    customer,
                    invoice_id=invoice_id,
                    amount="1.00",
                    currency=customer_record.currency,
                    reason="bench",
                    idempotency_key=next(keys),
                ),
            }
            for label, action in capabilities.items():
                assert action().ok, label
                print(row(label, measure(action, n), target=UP_TARGET_MS, baseline=up))
        store.forget(name)

        print("\nIn-process simulator (BILLING_API_BASE_URL empty: httpx.WSGITransport, no socket)")
        with httpx.Client(
            transport=InProcessTransport(app, read_timeout_s=3.0),
            base_url="http://sim",
            headers={"Authorization": f"Bearer {TOKEN}"},
        ) as wsgi_raw:
            in_base = measure(lambda: wsgi_raw.get(f"/customers/{customer}"), n)
        print(row("baseline: raw httpx GET /customers/{id} through WSGITransport", in_base))
        with BillingClient(
            base_url="http://sim/",
            token=TOKEN,
            timeout_s=3.0,
            breaker=CircuitBreaker(name, MemoryStore()),
            today=lambda: AS_OF,
            transport=InProcessTransport(app, read_timeout_s=3.0),
        ) as client:
            print(
                row(
                    "invoice_change (5 calls, memory store)",
                    measure(lambda: client.invoice_change(customer), n),
                    target=UP_TARGET_MS,
                    baseline=in_base,
                )
            )
        raw.close()


if __name__ == "__main__":
    main()
