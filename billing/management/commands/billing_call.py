"""Call one billing capability and print its ToolResult, evidence included.

    python manage.py billing_call invoice_change --customer C-1001 --json
    python manage.py billing_call account_summary --customer C-1001 --fault 503 --repeat 7

With --json: one ToolResult object per call (one per line with --repeat). Otherwise a readable
report per call with the shared breaker's state and the simulator's request count, so an
outage shows the breaker opening and the count no longer growing.
"""

from __future__ import annotations

import json
import logging
import time
from datetime import date

import httpx
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from billing.api.breaker import retry_in
from billing.api.client import CAPABILITIES, LOOKUP_KEYS, billing_breaker, billing_client
from billing.simulator.app import parse_fault
from core import clock


class Command(BaseCommand):
    help = (
        "Call a billing capability (contract-first client, shared circuit breaker) and print the ToolResult."
    )
    requires_system_checks = ()  # a diagnostic: it needs settings and the database, not URLs or templates

    def add_arguments(self, parser):
        parser.add_argument("capability", choices=CAPABILITIES)
        parser.add_argument("--customer", help="customer id, e.g. C-1001")
        parser.add_argument("--phone")
        parser.add_argument("--whatsapp-id")
        parser.add_argument("--account-number")
        parser.add_argument("--national-id", help="cédula V-12345678 or RIF J-12345678-9")
        parser.add_argument("--period", help="YYYY-MM (invoices, invoice_change, payments)")
        parser.add_argument("--invoice", help="invoice id (request_credit_note)")
        parser.add_argument("--amount", help="decimal amount (request_credit_note)")
        parser.add_argument("--currency", choices=("USD", "VES"))
        parser.add_argument("--reason", default="requested from billing_call")
        parser.add_argument("--idempotency-key")
        parser.add_argument(
            "--fault",
            help="simulator fault for these calls: 503, 500, timeout, reset, malformed, "
            "schema, latency:200 (sent as X-Sim-Fault)",
        )
        parser.add_argument("--repeat", type=int, default=1, help="call N times in a row")
        parser.add_argument("--today", type=date.fromisoformat, help="the date due-date facts count from")
        parser.add_argument("--reset-breaker", action="store_true", help="close the shared breaker first")
        parser.add_argument("--json", action="store_true", help="print the ToolResult as JSON")

    def handle(self, *args, **options):
        if options["verbosity"] < 2:
            logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per HTTP call drowns the report
        capability = options["capability"]
        call = self._call_for(capability, options)
        headers = {}
        if options["fault"]:
            try:
                fault = parse_fault(options["fault"])
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
            headers["X-Sim-Fault"] = fault or "none"
        today = options["today"]
        breaker = billing_breaker()
        if options["reset_breaker"]:
            breaker.reset()
        with billing_client(
            extra_headers=headers, breaker=breaker, today=(lambda: today) if today else clock.today
        ) as client:
            for number in range(1, max(1, options["repeat"]) + 1):
                started = time.perf_counter()
                result = call(client)
                elapsed_ms = (time.perf_counter() - started) * 1000
                if options["json"]:
                    self.stdout.write(json.dumps(result.to_json(), ensure_ascii=False))
                    continue
                self._report(number, result, client, breaker, elapsed_ms)

    def _call_for(self, capability: str, options):
        customer = options["customer"]
        if capability == "find_customer":
            ids = {key: options[key] for key in LOOKUP_KEYS if options[key]}
            if len(ids) != 1:
                raise CommandError(
                    "find_customer needs exactly one of --phone, --whatsapp-id, "
                    "--account-number, --national-id"
                )
            return lambda client: client.find_customer(**ids)
        if not customer:
            raise CommandError(f"{capability} needs --customer")
        if capability == "account_summary":
            return lambda client: client.account_summary(customer)
        if capability == "invoices":
            return lambda client: client.invoices(customer, period=options["period"])
        if capability == "invoice_change":
            return lambda client: client.invoice_change(customer, period=options["period"])
        if capability == "payments":
            return lambda client: client.payments(customer, period=options["period"])
        missing = [flag for flag in ("invoice", "amount", "currency", "idempotency_key") if not options[flag]]
        if missing:
            raise CommandError(
                "request_credit_note needs " + ", ".join("--" + m.replace("_", "-") for m in missing)
            )
        return lambda client: client.request_credit_note(
            customer,
            invoice_id=options["invoice"],
            amount=options["amount"],
            currency=options["currency"],
            reason=options["reason"],
            idempotency_key=options["idempotency_key"],
        )

    def _report(self, number, result, client, breaker, elapsed_ms):
        state = breaker.state()
        policy = breaker.policy
        if state.state == "closed":
            breaker_text = f"closed ({state.failures}/{policy.failure_threshold} consecutive failures)"
        elif state.state == "open":
            remaining = retry_in(state, now=time.time(), policy=policy)
            breaker_text = f"OPEN (probe allowed in {remaining:.0f}s)"
        else:
            breaker_text = "half-open (one probe in flight)"
        if result.ok:
            outcome = self.style.SUCCESS(f"ok, {len(result.evidence)} facts")
        elif result.should_escalate:
            outcome = self.style.ERROR(
                f"infrastructure error {result.error.code} → escalate: {result.error.message}"
            )
        else:
            outcome = self.style.WARNING(
                f"business answer {result.error.code} (no escalation): {result.error.message}"
            )
        self.stdout.write(f"#{number} {result.capability}: {outcome}")
        self.stdout.write(f"   HTTP calls made: {client.last_call.http_calls}   time: {elapsed_ms:.1f} ms")
        self.stdout.write(f"   breaker billing-api: {breaker_text}")
        self.stdout.write(f"   simulator requests served: {self._simulator_count()}")
        for index, fact in enumerate(result.evidence, start=1):
            unit = f" {fact.currency}" if fact.currency else ""
            self.stdout.write(f"   F{index} [{fact.kind}] {fact.value}{unit} — {fact.text}")
        for figure in result.key_figures:
            self.stdout.write(f"   key figure ({figure.role}) {figure.name} = {figure.figure} in {figure.evidence_id}")

    @staticmethod
    def _simulator_count() -> str:
        if not settings.BILLING_API_BASE_URL:
            from billing.simulator.mounted import shared_simulator

            return f"{shared_simulator().requests_served} (in-process simulator)"
        try:
            response = httpx.get(
                settings.BILLING_API_BASE_URL.rstrip("/") + "/_sim/stats",
                headers={"Authorization": f"Bearer {settings.BILLING_API_TOKEN}"},
                timeout=0.5,
            )
            return str(response.json()["requests_served"])
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            return "n/a (not a simulator, or unreachable)"
