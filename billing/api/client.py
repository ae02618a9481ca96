"""Billing API client: one method per capability, each returning a `ToolResult` with evidence.

Contract: billing/openapi.yaml. httpx with explicit timeouts and no retries (a retry during
an outage multiplies the load on a service that is already failing; the circuit breaker is the
back-off). Every capability goes through the shared circuit breaker as one operation: one
admission before its first HTTP call, one recorded outcome after it (it stops at the first
failing call), so the store is read twice per capability, not twice per HTTP call.

Two kinds of "no":
- business — the system of record answered and the thing is not there (`customer_not_found`,
  `invoice_not_found`): ok=False, should_escalate=False, and a success for the breaker (the API
  is healthy).
- infrastructure — timeout, connection error or reset, 5xx/429, a body that is not JSON or does
  not match the contract, or an open circuit: ok=False, should_escalate=True, and a breaker
  failure (except the open circuit itself, which never reached the API).
Other 4xx answers (a bad token, a request we built wrong, an idempotency conflict) escalate but
do not count against the API: it answered correctly; the fault is ours.

With BILLING_API_BASE_URL empty, `billing_client()` talks to the bundled simulator in-process
through `httpx.WSGITransport` (see billing/simulator/transport.py for why and how).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any, TypeVar
from urllib.parse import quote

import httpx

from billing.answers import computations as calc
from billing.answers.evidence import Fact, FactSheet, KeyFigure, ToolError, ToolResult
from billing.api.breaker import BreakerStoreError, CircuitBreaker, CircuitOpen, MemoryStore, Policy, Ticket
from billing.records import (
    ContractViolation,
    CurrencyMismatch,
    Customer,
    Invoice,
    Money,
    Payment,
    Plan,
    Promotion,
    parse_credit_note,
    parse_customer,
    parse_invoice,
    parse_payment,
    parse_plan,
    parse_promotion,
)
from core import clock

__all__ = ["BillingClient", "Fact", "KeyFigure", "ToolError", "ToolResult", "billing_client"]

logger = logging.getLogger(__name__)
T = TypeVar("T")

BREAKER_NAME = "billing-api"
BUSINESS_CODES = frozenset({"customer_not_found", "invoice_not_found"})
LOOKUP_SEGMENTS = {  # identifier → its path segment under /lookup/
    "phone": "phone",
    "whatsapp_id": "whatsapp",
    "account_number": "account",
    "national_id": "national-id",
}
LOOKUP_KEYS = tuple(LOOKUP_SEGMENTS)


class _Failure(Exception):
    """A call that produced no usable answer; carries the ToolError to return."""

    def __init__(self, code: str, message: str, *, infrastructure: bool):
        super().__init__(message)
        self.error = ToolError(code=code, message=message, infrastructure=infrastructure)


@dataclass
class CallLog:
    """What the last capability did on the wire (for the command and traces)."""

    http_calls: int = 0


class BillingClient:
    def __init__(
        self,
        *,
        base_url: str,
        token: str,
        timeout_s: float,
        breaker: CircuitBreaker,
        transport: httpx.BaseTransport | None = None,
        today: Callable[[], date],
        extra_headers: dict[str, str] | None = None,
    ):
        self.breaker = breaker
        self._today = today
        self.timeout = httpx.Timeout(
            connect=min(timeout_s, max(timeout_s / 2, 0.1)), read=timeout_s, write=timeout_s, pool=timeout_s
        )
        self.last_call = CallLog()
        self._http = httpx.Client(
            base_url=base_url.rstrip("/") + "/",
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/json",
                **(extra_headers or {}),
            },
            timeout=self.timeout,
            transport=transport or httpx.HTTPTransport(retries=0),
            follow_redirects=False,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- one HTTP call through the breaker ---------------------------------------------

    def _get(
        self, path: str, parse: Callable[[dict[str, Any]], T], *, params: dict[str, Any] | None = None
    ) -> T:
        return self._call("GET", path, parse, params=params)

    def _call(
        self,
        method: str,
        path: str,
        parse: Callable[[dict[str, Any]], T],
        *,
        params=None,
        json=None,
        headers=None,
    ) -> T:
        """Make one HTTP call and parse its answer; raise _Failure when there is no usable answer."""
        payload = self._request(method, path, params=params, json=json, headers=headers)
        try:
            return parse(payload)
        except ContractViolation as exc:
            raise _Failure(
                "contract_violation",
                f"billing API answer does not match the contract: {exc}",
                infrastructure=True,
            ) from exc

    def _record(self, ticket: Ticket | None, *, failed: bool) -> None:
        if ticket is None:
            return
        try:
            if failed:
                self.breaker.record_failure(ticket)
            else:
                self.breaker.record_success(ticket)
        except BreakerStoreError as exc:
            logger.warning("circuit breaker store unavailable, outcome not recorded: %s", exc)

    def _request(self, method, path, *, params, json, headers) -> dict[str, Any]:
        self.last_call.http_calls += 1
        try:
            response = self._http.request(method, path, params=params, json=json, headers=headers)
        except httpx.TimeoutException as exc:
            raise _Failure(
                "timeout",
                f"billing API did not answer in time ({type(exc).__name__})",
                infrastructure=True,
            ) from exc
        except httpx.TransportError as exc:
            raise _Failure(
                "connection_error",
                f"billing API connection failed: {type(exc).__name__}: {exc}",
                infrastructure=True,
            ) from exc
        status = response.status_code
        if status >= 500 or status == 429:
            raise _Failure(
                f"http_{status}",
                f"billing API answered HTTP {status}",
                infrastructure=True,
            )
        try:
            payload = response.json()
        except ValueError as exc:
            raise _Failure(
                "malformed_response",
                f"billing API answered HTTP {status} with a body that is not JSON",
                infrastructure=True,
            ) from exc
        if 200 <= status < 300:
            if not isinstance(payload, dict):
                raise _Failure(
                    "contract_violation",
                    "billing API answered with a non-object body",
                    infrastructure=True,
                )
            return payload
        error = payload.get("error") if isinstance(payload, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        if not isinstance(code, str) or not isinstance(message, str):
            raise _Failure(
                "contract_violation",
                f"billing API answered HTTP {status} without an error code",
                infrastructure=True,
            )
        if code in BUSINESS_CODES:
            raise _Failure(code, message, infrastructure=False)
        raise _Failure(
            code,
            f"billing API refused the request (HTTP {status}): {message}",
            infrastructure=False,
        )

    def _run(self, capability: str, body: Callable[[], tuple[FactSheet, dict[str, Any]]]) -> ToolResult:
        """Run one capability as one guarded operation: one admission, one recorded outcome.

        A capability stops at its first failing HTTP call, so its outcome is that call's outcome;
        while half-open, the probe is one whole capability.
        """
        self.last_call = CallLog()
        try:
            ticket = self.breaker.admit()
        except CircuitOpen as exc:
            error = ToolError(
                "circuit_open",
                f"billing API circuit is {exc.state.state}; not called (retry in {exc.retry_in_s:.0f}s)",
                infrastructure=True,
            )
            return ToolResult(capability=capability, ok=False, error=error, should_escalate=True)
        except BreakerStoreError as exc:
            # Fail open: losing the breaker's shared state must not take billing answers down with it.
            logger.warning("circuit breaker store unavailable, calling without it: %s", exc)
            ticket = None
        try:
            sheet, data = body()
        except _Failure as failure:
            # every infrastructure failure that reached the API counts against it; business and 4xx don't
            self._record(ticket, failed=failure.error.infrastructure)
            business = failure.error.code in BUSINESS_CODES
            return ToolResult(
                capability=capability, ok=False, error=failure.error, should_escalate=not business
            )
        except CurrencyMismatch as exc:
            # Records of one account in two currencies: the API is up but its data cannot be trusted.
            self._record(ticket, failed=False)
            error = ToolError("inconsistent_data", f"billing records mix currencies: {exc}", True)
            return ToolResult(capability=capability, ok=False, error=error, should_escalate=True)
        except Exception as exc:  # a bug here must cost one escalation, not the whole turn (logged)
            self._record(ticket, failed=False)
            logger.exception("billing capability %s failed", capability)
            error = ToolError("client_error", f"{type(exc).__name__}: {exc}", False)
            return ToolResult(capability=capability, ok=False, error=error, should_escalate=True)
        self._record(ticket, failed=False)
        return ToolResult(
            capability=capability,
            ok=True,
            evidence=sheet.facts,
            key_figures=sheet.key_figures,
            data=data,
            should_escalate=False,
        )

    # --- fetch helpers -------------------------------------------------------------------

    def _customer(self, customer_id: str) -> Customer:
        return self._get(f"customers/{customer_id}", _customer_of)

    def _invoices(self, customer_id: str, limit: int) -> list[Invoice]:
        return self._get(
            f"customers/{customer_id}/invoices",
            lambda body: _items(body, "invoices", parse_invoice),
            params={"limit": limit},
        )

    def _payments(self, customer_id: str, limit: int) -> list[Payment]:
        return self._get(
            f"customers/{customer_id}/payments",
            lambda body: _items(body, "payments", parse_payment),
            params={"limit": limit},
        )

    def _promotions(self, customer_id: str) -> list[Promotion]:
        return self._get(
            f"customers/{customer_id}/promotions", lambda body: _items(body, "promotions", parse_promotion)
        )

    def _plan(self, customer_id: str) -> Plan:
        return self._get(f"customers/{customer_id}/plan", parse_plan)

    # --- capabilities --------------------------------------------------------------------

    def find_customer(
        self,
        *,
        phone: str | None = None,
        whatsapp_id: str | None = None,
        account_number: str | None = None,
        national_id: str | None = None,
    ) -> ToolResult:
        """Find one customer by phone, WhatsApp id, account (contract) number or national id (cédula/RIF)."""
        given = {
            k: v
            for k, v in zip(LOOKUP_KEYS, (phone, whatsapp_id, account_number, national_id), strict=True)
            if v
        }
        if len(given) != 1:
            raise ValueError("give exactly one identifier")

        def body():
            ((key, value),) = given.items()
            if key in ("phone", "whatsapp_id"):
                value = ("+" if key == "phone" and value.strip().startswith("+") else "") + "".join(
                    ch for ch in value if ch.isdigit()
                )
            path = f"lookup/{LOOKUP_SEGMENTS[key]}/{quote(value.strip(), safe='')}"
            customer = self._get(path, _customer_of)
            return calc.customer_sheet(customer), {"customer": customer.to_json()}

        return self._run("find_customer", body)

    def account_summary(self, customer_id: str) -> ToolResult:
        """Return the plan, the current invoice and the last payments."""

        def body():
            customer = self._customer(customer_id)
            plan = self._plan(customer_id)
            invoices = self._invoices(customer_id, 1)
            payments = self._payments(customer_id, 5)
            current = invoices[0] if invoices else None
            sheet = calc.account_summary_sheet(
                plan, current, payments, today=self._today(), language=customer.language
            )
            data: dict[str, Any] = {
                "customer": customer.to_json(),
                "plan": plan.to_json(),
                "current_invoice": current.to_json() if current else None,
                "payments": [p.to_json() for p in payments],
            }
            return sheet, data

        return self._run("account_summary", body)

    def invoices(self, customer_id: str, *, period: str | None = None, limit: int = 6) -> ToolResult:
        """Return the last invoices (or the one for `period`, YYYY-MM) with their totals."""

        def body():
            customer = self._customer(customer_id)
            if period:
                found = [
                    self._get(
                        f"customers/{customer_id}/invoices/{period}",
                        lambda body: parse_invoice(_field(body, "invoice")),
                    )
                ]
            else:
                found = self._invoices(customer_id, limit)
            sheet = calc.invoices_sheet(found, customer.language)
            return sheet, {"customer": customer.to_json(), "invoices": [inv.to_json() for inv in found]}

        return self._run("invoices", body)

    def payments(self, customer_id: str, *, period: str | None = None, limit: int = 10) -> ToolResult:
        """Return the last payments (succeeded and failed) and, per invoice, paid vs total; with `period` (YYYY-MM),
        that invoice's payments only, its latest attempt the one an answer states ("¿cuánto pagué el mes
        pasado?")."""

        def body():
            customer = self._customer(customer_id)
            found = self._payments(customer_id, limit)
            invoices = self._invoices(customer_id, 6)
            stated = [inv for inv in invoices if inv.period == period] if period else invoices
            if period and not stated:
                raise _Failure("invoice_not_found", f"no invoice for {period}", infrastructure=False)
            sheet = calc.payments_sheet(stated, found, customer.language)
            return sheet, {"customer": customer.to_json(), "payments": [p.to_json() for p in found],
                           "invoices": [{"id": inv.id, "period": inv.period} for inv in invoices]}

        return self._run("payments", body)

    def invoice_change(self, customer_id: str, *, period: str | None = None) -> ToolResult:
        """Explain "why is my bill different": current vs previous invoice with every computed fact."""

        def body():
            customer = self._customer(customer_id)
            invoices = self._invoices(customer_id, 12)
            if period:
                index = next((i for i, inv in enumerate(invoices) if inv.period == period), None)
                if index is None:
                    raise _Failure(
                        "invoice_not_found",
                        f"no invoice for {period}",
                        infrastructure=False,
                    )
            elif not invoices:
                raise _Failure(
                    "invoice_not_found",
                    f"customer {customer_id} has no invoice yet",
                    infrastructure=False,
                )
            else:
                index = 0
            current = invoices[index]
            previous = invoices[index + 1] if index + 1 < len(invoices) else None
            promotions = self._promotions(customer_id)
            payments = self._payments(customer_id, 24)
            plan = self._plan(customer_id)
            sheet = calc.invoice_change_sheet(
                current,
                previous,
                invoices=invoices,
                promotions=promotions,
                payments=payments,
                plan=plan,
                today=self._today(),
                language=customer.language,
            )
            data = {
                "customer": customer.to_json(),
                "current_invoice": current.to_json(),
                "previous_invoice": previous.to_json() if previous else None,
                "promotions": [p.to_json() for p in promotions],
                "payments": [
                    p.to_json()
                    for p in payments
                    if p.invoice_id in {current.id, getattr(previous, "id", None)}
                ],
                "plan": plan.to_json(),
            }
            return sheet, data

        return self._run("invoice_change", body)

    def request_credit_note(
        self,
        customer_id: str,
        *,
        invoice_id: str,
        amount: Decimal | str,
        currency: str,
        reason: str,
        idempotency_key: str,
        requested_by: str | None = None,
        language: str = "es",
    ) -> ToolResult:
        """Ask billing for a credit note; the same idempotency key never creates a second one."""
        money = Money.of(amount, currency)
        body_json: dict[str, Any] = {"invoice_id": invoice_id, "amount": money.to_json(), "reason": reason}
        if requested_by:
            body_json["requested_by"] = requested_by

        def body():
            note = self._call(
                "POST",
                f"customers/{customer_id}/credit-notes",
                lambda body: parse_credit_note(_field(body, "credit_note")),
                json=body_json,
                headers={"Idempotency-Key": idempotency_key},
            )
            return calc.credit_note_sheet(note, language), {"credit_note": note.to_json()}

        return self._run("request_credit_note", body)


def _field(payload: dict[str, Any], key: str) -> Any:
    if key not in payload:
        raise ContractViolation(f"response has no {key!r}")
    return payload[key]


def _customer_of(payload: dict[str, Any]) -> Customer:
    return parse_customer(_field(payload, "customer"))


def _items(payload: dict[str, Any], key: str, parse: Callable[[Any], T]) -> list[T]:
    value = _field(payload, key)
    if not isinstance(value, list):
        raise ContractViolation(f"{key}: expected an array")
    return [parse(item) for item in value]


CAPABILITIES = (
    "find_customer",
    "account_summary",
    "invoices",
    "invoice_change",
    "payments",
    "request_credit_note",
)


def billing_breaker(*, now: Callable[[], float] = time.time, store=None) -> CircuitBreaker:
    """Return the billing API breaker configured from settings, on the shared store."""
    from django.conf import settings

    from billing.api.breaker_store import default_store

    policy = Policy(
        failure_threshold=settings.BILLING_BREAKER_FAILURES, cooldown_s=settings.BILLING_BREAKER_COOLDOWN_S
    )
    return CircuitBreaker(BREAKER_NAME, store if store is not None else default_store(), policy, now=now)


def _in_process_simulator():
    """The process's billing simulator when no BILLING_API_BASE_URL is set (it then stands for the API), else None."""
    from django.conf import settings

    if settings.BILLING_API_BASE_URL:
        return None
    from billing.simulator.mounted import shared_simulator

    return shared_simulator()


def in_process_sample_customer() -> str | None:
    """With the in-process simulator, build its day and return its first customer's id, which a warm-up may ask about
    without touching a real system; None with a real billing API."""
    simulator = _in_process_simulator()
    return None if simulator is None else next(iter(simulator.data.accounts), None)


def billing_client(
    *,
    extra_headers: dict[str, str] | None = None,
    breaker: CircuitBreaker | None = None,
    today: Callable[[], date] = clock.today,
) -> BillingClient:
    """Build the client from settings: the real API at BILLING_API_BASE_URL, or the in-process simulator."""
    from django.conf import settings

    timeout_s = settings.BILLING_API_TIMEOUT_S
    transport = None
    base_url = settings.BILLING_API_BASE_URL
    simulator = _in_process_simulator()
    if simulator is not None:
        from billing.simulator.transport import InProcessTransport

        transport = InProcessTransport(simulator, read_timeout_s=timeout_s)
        base_url = "http://billing-simulator.invalid/"
    return BillingClient(
        base_url=base_url,
        token=settings.BILLING_API_TOKEN,
        timeout_s=timeout_s,
        breaker=breaker or billing_breaker(),
        transport=transport,
        today=today,
        extra_headers=extra_headers,
    )


def memory_breaker(policy: Policy | None = None, *, now: Callable[[], float] = time.time) -> CircuitBreaker:
    """Return a process-local breaker (tools and tests that must not touch shared state)."""
    return CircuitBreaker(BREAKER_NAME, MemoryStore(), policy, now=now)
