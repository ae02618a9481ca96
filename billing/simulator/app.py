"""The billing API simulator: a small pure WSGI application implementing billing/openapi.yaml.

No Django inside. It runs three ways: in-process behind `httpx.WSGITransport` (the client's
default when BILLING_API_BASE_URL is empty), mounted in Django at /sim/billing/ through a thin
view, and standalone on its own port (`python -m billing.simulator`, or `serve_in_thread`).

Faults, per request with the header `X-Sim-Fault` or for every request with the app's `fault`
(fed from settings.BILLING_SIM_FAULT when mounted; switchable at runtime with
`POST /_sim/fault`): `500`/`503` (any 5xx), `timeout` (hang), `reset` (abort the connection),
`malformed` (200 with broken JSON), `schema` (200 with JSON that breaks the contract),
`latency:200` (200 ms then a normal answer). `X-Sim-Fault: none` bypasses a global fault.
`requests_served` counts every request that reached the API, faulted ones included.
The `/_sim/*` control endpoints are not part of the contract and are never faulted.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from billing.records import CreditNote, Money
from billing.simulator.data import DEFAULT_SEED, Dataset, build_dataset

CONTRACT_PATH = Path(__file__).resolve().parent.parent / "openapi.yaml"
DEADLINE_KEY = "tracedesk.sim.deadline"  # monotonic deadline set by the in-process transport
FAULT_RE = re.compile(r"^(5[0-9]{2}|timeout|reset|malformed|schema|latency:[0-9]{1,6}|none)$")
CUSTOMER_ID_RE = re.compile(r"^C-[0-9]{4}$")
PERIOD_RE = re.compile(r"^[0-9]{4}-(0[1-9]|1[0-2])$")
INVOICE_ID_RE = re.compile(r"^F-[0-9]{4}-[0-9]{6}$")
AMOUNT_RE = re.compile(r"^[0-9]{1,9}\.[0-9]{2}$")
IDEMPOTENCY_KEY_RE = re.compile(r"^[A-Za-z0-9_.:-]{8,128}$")
LOOKUP_PATTERNS = {
    "phone": re.compile(r"^\+?[0-9]{7,15}$"),
    "whatsapp_id": re.compile(r"^[0-9]{8,15}$"),
    "account_number": re.compile(r"^[0-9]{8}$"),
    "national_id": re.compile(r"^[VEJPGvejpg]-?[0-9]{5,9}(-?[0-9])?$"),
}
LOOKUP_SEGMENTS = {
    "phone": "phone",
    "whatsapp": "whatsapp_id",
    "account": "account_number",
    "national-id": "national_id",
}
STATUS_TEXT = {
    200: "OK",
    201: "Created",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    422: "Unprocessable Content",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


class SimulatedTimeout(Exception):
    """The in-process deadline passed while the simulator was hanging."""


class SimulatedReset(Exception):
    """The simulator drops the connection without an answer."""


def parse_fault(value: str | None) -> str | None:
    """Return a normalized fault name, None for no fault; raise ValueError on an unknown one."""
    if value is None:
        return None
    value = value.strip().lower()
    if value in ("", "none"):
        return None
    if not FAULT_RE.match(value):
        raise ValueError(f"unknown simulator fault {value!r}")
    return value


class _Reply(Exception):
    """Stop handling and answer with this status and error body."""

    def __init__(self, status: int, code: str, message: str, headers: Iterable[tuple[str, str]] = ()):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, list(headers)


ROUTES: list[tuple[re.Pattern, dict[str, str]]] = [
    (re.compile(r"^/health$"), {"GET": "health"}),
    (
        re.compile(r"^/lookup/(?P<kind>phone|whatsapp|account|national-id)/(?P<value>[^/]+)$"),
        {"GET": "lookup"},
    ),
    (re.compile(r"^/customers/(?P<customer_id>[^/]+)$"), {"GET": "customer"}),
    (re.compile(r"^/customers/(?P<customer_id>[^/]+)/plan$"), {"GET": "plan"}),
    (re.compile(r"^/customers/(?P<customer_id>[^/]+)/invoices$"), {"GET": "invoices"}),
    (re.compile(r"^/customers/(?P<customer_id>[^/]+)/invoices/current$"), {"GET": "current_invoice"}),
    (re.compile(r"^/customers/(?P<customer_id>[^/]+)/invoices/(?P<period>[^/]+)$"), {"GET": "invoice"}),
    (re.compile(r"^/customers/(?P<customer_id>[^/]+)/payments$"), {"GET": "payments"}),
    (re.compile(r"^/customers/(?P<customer_id>[^/]+)/promotions$"), {"GET": "promotions"}),
    (re.compile(r"^/customers/(?P<customer_id>[^/]+)/credit-notes$"), {"POST": "credit_note"}),
]

QUERY_PARAMETERS = {"invoices": {"limit"}, "payments": {"limit"}}


class BillingSimulator:
    """WSGI callable serving the billing contract from a seeded `Dataset`."""

    def __init__(
        self,
        *,
        seed: int = DEFAULT_SEED,
        as_of: date | None = None,
        token: str = "sim-token",
        fault: str | None = None,
        hang_s: float = 30.0,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        today: Callable[[], date] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        """`as_of` fixes the data's date; otherwise it follows `today()` (the standalone server's wall clock
        when neither is given; the app's clock when mounted), rebuilt when the date changes."""
        self._seed = seed
        self._as_of = as_of
        self._today = today or (lambda: now().date())
        self._datasets: dict[date, Dataset] = {}
        self._data_lock = threading.Lock()
        self.token = token
        self.fault = parse_fault(fault)
        self.hang_s = hang_s
        self._now = now
        self._sleep = sleep
        self._lock = threading.Lock()
        self._requests_served = 0
        self._credit_notes: dict[str, tuple[str, int, dict[str, Any]]] = {}
        self._credit_seq = 0

    @property
    def data(self) -> Dataset:
        """Return the dataset for the simulator's date (a day's dataset is built once, then kept)."""
        day = self._as_of or self._today()
        with self._data_lock:
            dataset = self._datasets.get(day)
            if dataset is None:
                if len(self._datasets) >= 4:  # a long-running process crosses days: keep only the recent ones
                    self._datasets.pop(min(self._datasets))
                dataset = self._datasets[day] = build_dataset(self._seed, as_of=day)
            return dataset

    # --- introspection used by tests, the command and the control endpoints -------------

    @property
    def requests_served(self) -> int:
        with self._lock:
            return self._requests_served

    def set_fault(self, fault: str | None) -> None:
        """Switch the global fault (None: healthy)."""
        self.fault = parse_fault(fault)

    def stats(self) -> dict[str, Any]:
        return {
            "requests_served": self.requests_served,
            "fault": self.fault,
            "as_of": self.data.as_of.isoformat(),
            "seed": self.data.seed,
            "customers": len(self.data.accounts),
            "credit_notes": len(self._credit_notes),
        }

    # --- WSGI ------------------------------------------------------------------------------

    def __call__(self, environ: dict[str, Any], start_response):
        path = environ.get("PATH_INFO") or "/"
        if path.startswith("/_sim/") or path == "/openapi.yaml":
            return self._control(environ, start_response, path)
        with self._lock:
            self._requests_served += 1
        try:
            header_fault = environ.get("HTTP_X_SIM_FAULT")
            fault = parse_fault(header_fault) if header_fault is not None else self.fault
        except ValueError as exc:
            return self._error(start_response, _Reply(400, "invalid_request", str(exc)))
        if fault:
            faulted = self._apply_fault(fault, environ, start_response)
            if faulted is not None:
                return faulted
        try:
            status, payload, headers = self._dispatch(environ, path)
        except _Reply as reply:
            return self._error(start_response, reply)
        except (SimulatedReset, SimulatedTimeout):
            raise
        except Exception:  # noqa: BLE001 - a real server answers 500 on a bug; so does the simulator
            return self._error(start_response, _Reply(500, "internal_error", "unexpected simulator error"))
        return self._json(start_response, status, payload, headers)

    def _apply_fault(self, fault: str, environ, start_response):
        if fault[0] == "5":
            status = int(fault)
            code = "service_unavailable" if status == 503 else "internal_error"
            headers = [("Retry-After", "30")] if status == 503 else []
            return self._error(start_response, _Reply(status, code, f"simulated HTTP {status}", headers))
        if fault == "timeout":
            self._hang(environ, self.hang_s)
            return self._error(start_response, _Reply(504, "internal_error", "simulated timeout"))
        if fault.startswith("latency:"):
            self._hang(environ, int(fault.split(":")[1]) / 1000)
            return None
        if fault == "reset":
            raise SimulatedReset("simulated connection reset")
        if fault == "malformed":
            body = b'{"customer": {"id": "C-10'
            start_response(
                "200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
            )
            return [body]
        if fault == "schema":
            return self._json(start_response, 200, {"result": "ok", "total": 14.0}, [])
        return None

    def _hang(self, environ, seconds: float) -> None:
        deadline = environ.get(DEADLINE_KEY)
        if deadline is not None and time.monotonic() + seconds >= deadline:
            self._sleep(max(0.0, deadline - time.monotonic()))
            raise SimulatedTimeout(f"no answer within the caller's deadline ({seconds:.3f}s hang)")
        self._sleep(seconds)

    def _control(self, environ, start_response, path: str):
        if path == "/openapi.yaml":
            body = CONTRACT_PATH.read_bytes()
            start_response(
                "200 OK", [("Content-Type", "application/yaml"), ("Content-Length", str(len(body)))]
            )
            return [body]
        try:
            self._authorize(environ)
            method = environ.get("REQUEST_METHOD", "GET")
            if path == "/_sim/stats" and method == "GET":
                return self._json(start_response, 200, self.stats(), [])
            if path == "/_sim/fault" and method in ("POST", "PUT"):
                body = self._read_json(environ)
                try:
                    self.set_fault(body.get("fault") if isinstance(body, dict) else None)
                except ValueError as exc:
                    raise _Reply(400, "invalid_request", str(exc)) from exc
                return self._json(start_response, 200, self.stats(), [])
            if path == "/_sim/customers" and method == "GET":
                rows = [
                    {
                        "id": cid,
                        "name": acc.customer.name,
                        "scenario": acc.scenario,
                        "currency": acc.customer.currency,
                        "language": acc.customer.language,
                        "phone": acc.customer.phone,
                        "national_id": acc.customer.national_id,
                    }
                    for cid, acc in self.data.accounts.items()
                ]
                return self._json(start_response, 200, {"customers": rows}, [])
            raise _Reply(404, "not_found", f"no simulator endpoint {method} {path}")
        except _Reply as reply:
            return self._error(start_response, reply)

    # --- routing ---------------------------------------------------------------------------

    def _dispatch(self, environ, path: str):
        for pattern, methods in ROUTES:
            match = pattern.fullmatch(path)  # "$" alone would also accept a trailing newline
            if not match:
                continue
            method = environ.get("REQUEST_METHOD", "GET").upper()
            handler = methods.get(method)
            if handler is None:
                allow = ", ".join(methods)
                raise _Reply(405, "method_not_allowed", f"{method} is not allowed here", [("Allow", allow)])
            if handler != "health":
                self._authorize(environ)
            query = {
                k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True).items()
            }
            unknown = set(query) - QUERY_PARAMETERS.get(handler, set())
            if unknown:  # strict: a misspelt filter must not silently return unfiltered data
                raise _Reply(
                    400, "invalid_request", f"unknown query parameter(s): {', '.join(sorted(unknown))}"
                )
            return getattr(self, f"_{handler}")(environ=environ, query=query, **match.groupdict())
        raise _Reply(404, "not_found", f"no such endpoint {path}")

    def _authorize(self, environ) -> None:
        header = environ.get("HTTP_AUTHORIZATION", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or token.strip() != self.token:
            raise _Reply(
                401,
                "unauthorized",
                "missing or invalid bearer token",
                [("WWW-Authenticate", 'Bearer realm="billing"')],
            )

    def _account(self, customer_id: str):
        if not CUSTOMER_ID_RE.match(customer_id):
            raise _Reply(400, "invalid_request", "customer_id must look like C-1234")
        account = self.data.accounts.get(customer_id)
        if account is None:
            raise _Reply(404, "customer_not_found", f"no customer {customer_id}")
        return account

    @staticmethod
    def _limit(query: dict[str, str], default: int) -> int:
        raw = query.get("limit")
        if raw is None:
            return default
        if not raw.isdigit() or not 1 <= int(raw) <= 24:
            raise _Reply(400, "invalid_request", "limit must be an integer from 1 to 24")
        return int(raw)

    # --- handlers --------------------------------------------------------------------------

    def _health(self, **_):
        return 200, {"status": "ok"}, []

    def _lookup(self, *, kind, value, **_):
        key = LOOKUP_SEGMENTS[kind]
        if not LOOKUP_PATTERNS[key].match(value):
            raise _Reply(400, "invalid_request", f"{key} is not well formed")
        account = self.data.find(**{key: value})
        if account is None:
            raise _Reply(404, "customer_not_found", f"no customer with that {key}")
        return 200, {"customer": account.customer.to_json()}, []

    def _customer(self, *, customer_id, **_):
        return 200, {"customer": self._account(customer_id).customer.to_json()}, []

    def _plan(self, *, customer_id, **_):
        return 200, self._account(customer_id).plan.to_json(), []

    def _invoices(self, *, customer_id, query, **_):
        account = self._account(customer_id)
        limit = self._limit(query, 6)
        return 200, {"invoices": [inv.to_json() for inv in account.invoices[:limit]]}, []

    def _current_invoice(self, *, customer_id, **_):
        account = self._account(customer_id)
        if not account.invoices:
            raise _Reply(404, "invoice_not_found", f"customer {customer_id} has no invoice yet")
        return 200, {"invoice": account.invoices[0].to_json()}, []

    def _invoice(self, *, customer_id, period, **_):
        if not PERIOD_RE.match(period):
            raise _Reply(400, "invalid_request", "period must be YYYY-MM")
        account = self._account(customer_id)
        for invoice in account.invoices:
            if invoice.period == period:
                return 200, {"invoice": invoice.to_json()}, []
        raise _Reply(404, "invoice_not_found", f"no invoice for {period}")

    def _payments(self, *, customer_id, query, **_):
        account = self._account(customer_id)
        limit = self._limit(query, 10)
        return 200, {"payments": [p.to_json() for p in account.payments[:limit]]}, []

    def _promotions(self, *, customer_id, **_):
        account = self._account(customer_id)
        return 200, {"promotions": [p.to_json() for p in account.promotions]}, []

    def _credit_note(self, *, environ, customer_id, **_):
        key = environ.get("HTTP_IDEMPOTENCY_KEY")
        if key is None:
            raise _Reply(400, "idempotency_key_required", "the Idempotency-Key header is required")
        if not IDEMPOTENCY_KEY_RE.match(key):
            raise _Reply(400, "invalid_request", "Idempotency-Key must be 8-128 of [A-Za-z0-9_.:-]")
        body = self._read_json(environ)
        request = self._credit_request(body)
        fingerprint = json.dumps({"customer_id": customer_id, **body}, sort_keys=True)
        with self._lock:
            stored = self._credit_notes.get(key)
        if stored is not None:
            if stored[0] != fingerprint:
                raise _Reply(
                    409, "idempotency_key_reused", "this Idempotency-Key was used for another request"
                )
            return stored[1], stored[2], [("Idempotent-Replayed", "true")]
        account = self._account(customer_id)
        invoice = next((inv for inv in account.invoices if inv.id == request["invoice_id"]), None)
        if invoice is None:
            raise _Reply(
                404, "invoice_not_found", f"customer {customer_id} has no invoice {request['invoice_id']}"
            )
        amount = request["amount"]
        if amount.currency != invoice.currency:
            raise _Reply(422, "currency_mismatch", f"invoice {invoice.id} is in {invoice.currency}")
        if amount.amount <= 0 or invoice.total < amount:
            raise _Reply(422, "invalid_amount", "amount must be above zero and at most the invoice total")
        with self._lock:
            stored = self._credit_notes.get(key)  # a concurrent twin may have won the race
            if stored is None:
                self._credit_seq += 1
                note = CreditNote(
                    id=f"NC-{self._credit_seq:06d}",
                    customer_id=customer_id,
                    invoice_id=invoice.id,
                    amount=amount,
                    reason=request["reason"],
                    status="pending_review",
                    created_at=self._now().replace(microsecond=0),
                )
                stored = (fingerprint, 201, {"credit_note": note.to_json()})
                self._credit_notes[key] = stored
        if stored[0] != fingerprint:
            raise _Reply(409, "idempotency_key_reused", "this Idempotency-Key was used for another request")
        return stored[1], stored[2], []

    @staticmethod
    def _credit_request(body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise _Reply(400, "invalid_request", "the body must be a JSON object")
        allowed = {"invoice_id", "amount", "reason", "requested_by"}
        if set(body) - allowed or not {"invoice_id", "amount", "reason"} <= set(body):
            raise _Reply(
                400, "invalid_request", "body keys: invoice_id, amount, reason, requested_by (optional)"
            )
        invoice_id, amount, reason = body["invoice_id"], body["amount"], body["reason"]
        if not isinstance(invoice_id, str) or not INVOICE_ID_RE.match(invoice_id):
            raise _Reply(400, "invalid_request", "invoice_id must look like F-1234-202610")
        if (
            not isinstance(amount, dict)
            or set(amount) != {"amount", "currency"}
            or not isinstance(amount["amount"], str)
            or not AMOUNT_RE.match(amount["amount"])
            or amount["currency"] not in ("USD", "VES")
        ):
            raise _Reply(
                400, "invalid_request", 'amount must be {"amount": "14.00", "currency": "USD"|"VES"}'
            )
        if not isinstance(reason, str) or not 1 <= len(reason) <= 500:
            raise _Reply(400, "invalid_request", "reason must be 1-500 characters")
        requested_by = body.get("requested_by", "")
        if "requested_by" in body and (
            not isinstance(requested_by, str) or not 1 <= len(requested_by) <= 100
        ):
            raise _Reply(400, "invalid_request", "requested_by must be 1-100 characters")
        return {
            "invoice_id": invoice_id,
            "amount": Money(Decimal(amount["amount"]), amount["currency"]),
            "reason": reason,
        }

    # --- plumbing --------------------------------------------------------------------------

    @staticmethod
    def _read_json(environ) -> Any:
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        raw = environ["wsgi.input"].read(length) if length > 0 else b""
        try:
            return json.loads(raw.decode("utf-8")) if raw else None
        except (UnicodeDecodeError, ValueError) as exc:
            raise _Reply(400, "invalid_request", "the body is not valid JSON") from exc

    @staticmethod
    def _json(start_response, status: int, payload: Any, headers: list[tuple[str, str]]):
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        start_response(
            f"{status} {STATUS_TEXT.get(status, 'Unknown')}",
            [("Content-Type", "application/json"), ("Content-Length", str(len(body))), *headers],
        )
        return [body]

    def _error(self, start_response, reply: _Reply):
        return self._json(
            start_response,
            reply.status,
            {"error": {"code": reply.code, "message": reply.message}},
            reply.headers,
        )
