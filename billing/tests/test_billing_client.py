"""The billing client tells an outage from a missing customer, through real HTTP to the simulator.

The simulator is served on a real local port (wsgiref in a thread); faults are injected per
request with X-Sim-Fault. The breaker runs on an injected clock: no sleep.
"""

import time
from datetime import date

import httpx
import pytest

from billing.api.breaker import CLOSED, OPEN, CircuitBreaker, MemoryStore, Policy
from billing.api.client import BillingClient, billing_client, in_process_sample_customer, memory_breaker
from billing.simulator import BillingSimulator, serve_in_thread
from billing.simulator.mounted import reset_shared_simulator, shared_simulator
from billing.simulator.transport import InProcessTransport

AS_OF = date(2026, 10, 20)
TIMEOUT_S = 0.25  # the read timeout of the tests that make the simulator hang
# A client with no fault waits longer, still under the simulator's 2 s hang: a loaded machine (CI beside other work)
# can take more than 0.25 s to answer a healthy request, and that is not the failure those tests are about.
HEALTHY_TIMEOUT_S = 1.5


class Clock:
    def __init__(self):
        self.t = 5_000.0

    def __call__(self):
        return self.t


@pytest.fixture(scope="module")
def sim():
    with serve_in_thread(BillingSimulator(as_of=AS_OF, hang_s=2.0)) as running:
        yield running


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def breaker(clock):
    return CircuitBreaker(
        "billing-api", MemoryStore(), Policy(failure_threshold=3, cooldown_s=30.0), now=clock
    )


def make_client(sim, breaker, *, fault=None, token="sim-token", base_url=None, transport=None):
    return BillingClient(
        base_url=base_url or sim.base_url,
        token=token,
        timeout_s=TIMEOUT_S if fault else HEALTHY_TIMEOUT_S,
        breaker=breaker,
        transport=transport,
        today=lambda: AS_OF,
        extra_headers={"X-Sim-Fault": fault} if fault else None,
    )


@pytest.fixture
def healthy(sim, breaker):
    with make_client(sim, breaker) as client:
        yield client


def a_customer(sim, scenario="unchanged", variant=0):
    return sim.app.data.scenarios[scenario][variant]


# --- business answers -------------------------------------------------------------------


def test_unknown_customer_is_a_business_answer_and_not_a_breaker_failure(healthy, breaker):
    for _ in range(5):
        result = healthy.account_summary("C-9999")
        assert (result.ok, result.should_escalate) == (False, False)
        assert result.error.code == "customer_not_found" and not result.error.infrastructure
    assert breaker.state().state == CLOSED and breaker.state().failures == 0


def test_lookup_that_matches_nobody_is_a_business_answer(healthy, breaker):
    result = healthy.find_customer(national_id="V-00000001")
    assert (result.ok, result.should_escalate, result.error.code) == (False, False, "customer_not_found")


def test_missing_invoice_month_is_a_business_answer(sim, healthy):
    result = healthy.invoices(a_customer(sim), period="2019-01")
    assert (result.ok, result.should_escalate, result.error.code) == (False, False, "invoice_not_found")


def test_payments_for_a_period_state_that_invoices_payment_first(sim, healthy):
    customer_id = next(c for c, account in sorted(sim.app.data.accounts.items())
                       if len({p.invoice_id for p in account.payments if p.status == "succeeded"}) >= 2)
    latest = healthy.payments(customer_id)
    earlier_period = latest.data["invoices"][1]["period"]
    earlier = healthy.payments(customer_id, period=earlier_period)
    assert earlier.ok and earlier.key_figures
    stated = earlier.fact(earlier.key_figures[0])
    assert earlier_period in stated.text and latest.data["invoices"][0]["period"] not in " ".join(
        fact.text for fact in earlier.evidence)
    missing = healthy.payments(customer_id, period="2019-01")
    assert (missing.ok, missing.should_escalate, missing.error.code) == (False, False, "invoice_not_found")


def test_a_business_answer_breaks_a_streak_of_infrastructure_failures(sim, breaker):
    customer_id = a_customer(sim)
    with make_client(sim, breaker, fault="503") as failing, make_client(sim, breaker) as healthy:
        failing.account_summary(customer_id)
        failing.account_summary(customer_id)
        healthy.account_summary("C-9999")  # the API answered: it is up
        failing.account_summary(customer_id)
        failing.account_summary(customer_id)
    assert breaker.state().state == CLOSED and breaker.state().failures == 2


def test_find_customer_by_every_identifier(sim, healthy):
    customer = sim.app.data.accounts[a_customer(sim, "late_fee", 4)].customer  # a company with a RIF
    local_phone = "0" + customer.phone[3:6] + "-" + customer.phone[6:]
    for kwargs in (
        {"phone": customer.phone},
        {"phone": local_phone},
        {"whatsapp_id": customer.whatsapp_id},
        {"account_number": customer.account_number},
        {"national_id": customer.national_id},
        {"national_id": customer.national_id.replace("-", "").lower()},
    ):
        result = healthy.find_customer(**kwargs)
        assert result.ok, (kwargs, result.error)
        assert result.evidence[0].value == customer.id


# --- infrastructure failures ------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "code"),
    [
        ("503", "http_503"),
        ("500", "http_500"),
        ("timeout", "timeout"),
        ("reset", "connection_error"),
        ("malformed", "malformed_response"),
        ("schema", "contract_violation"),
    ],
)
def test_infrastructure_failures_escalate_and_count_against_the_api(sim, breaker, fault, code):
    served = sim.app.requests_served
    with make_client(sim, breaker, fault=fault) as client:
        result = client.account_summary(a_customer(sim))
    assert (result.ok, result.should_escalate) == (False, True)
    assert result.error.code == code and result.error.infrastructure
    assert breaker.state().failures == 1
    assert sim.app.requests_served - served == 1, "no retries: one attempt"


def test_a_timeout_returns_after_the_read_timeout_not_after_the_hang(sim, breaker):
    with make_client(sim, breaker, fault="timeout") as client:
        started = time.perf_counter()
        result = client.invoices(a_customer(sim))
        elapsed = time.perf_counter() - started
    assert result.error.code == "timeout"
    assert TIMEOUT_S * 0.8 <= elapsed < 2.0  # the simulator hangs 2 s; the client gives up at 0.25 s


def test_added_latency_within_the_timeout_is_fine(sim, breaker):
    with make_client(sim, breaker, fault="latency:50") as client:
        result = client.invoices(a_customer(sim))
    assert result.ok and breaker.state().failures == 0


def test_a_connection_refused_is_infrastructure(breaker):
    with BillingClient(
        base_url="http://127.0.0.1:9/", token="t", timeout_s=TIMEOUT_S, breaker=breaker, today=lambda: AS_OF
    ) as client:
        result = client.account_summary("C-1001")
    assert (result.should_escalate, result.error.code) == (True, "connection_error")


def test_a_wrong_token_escalates_without_blaming_the_api(sim, breaker):
    with make_client(sim, breaker, token="wrong") as client:
        result = client.account_summary(a_customer(sim))
    assert (result.ok, result.should_escalate, result.error.code) == (False, True, "unauthorized")
    assert not result.error.infrastructure
    assert breaker.state().failures == 0


# --- the breaker in front of a real server ----------------------------------------------


def test_outage_opens_the_breaker_and_the_simulator_stops_being_called(sim, breaker, clock):
    customer_id = a_customer(sim)
    with make_client(sim, breaker, fault="503") as client:
        before = sim.app.requests_served
        for _ in range(3):
            assert client.account_summary(customer_id).error.code == "http_503"
        assert breaker.state().state == OPEN
        assert sim.app.requests_served == before + 3
        for _ in range(10):
            result = client.account_summary(customer_id)
            assert (result.should_escalate, result.error.code) == (True, "circuit_open")
            assert client.last_call.http_calls == 0
        assert sim.app.requests_served == before + 3, "an open circuit never reaches the API"
        clock.t += 30  # cool-down over: the next call is the single probe, and it fails
        assert client.account_summary(customer_id).error.code == "http_503"
        assert sim.app.requests_served == before + 4
        assert breaker.state().state == OPEN
    clock.t += 30
    with make_client(sim, breaker) as recovered:
        result = recovered.invoice_change(customer_id)
    assert result.ok and breaker.state().state == CLOSED
    assert sim.app.requests_served == before + 4 + recovered.last_call.http_calls


def test_every_capability_is_guarded_by_an_open_circuit(sim, breaker):
    with make_client(sim, breaker, fault="500") as client:
        for _ in range(3):
            client.payments(a_customer(sim))
        calls = [
            lambda: client.find_customer(phone="+584121234567"),
            lambda: client.account_summary("C-1001"),
            lambda: client.invoices("C-1001"),
            lambda: client.invoice_change("C-1001"),
            lambda: client.payments("C-1001"),
            lambda: client.request_credit_note(
                "C-1001",
                invoice_id="F-1001-202610",
                amount="1.00",
                currency="USD",
                reason="r",
                idempotency_key="key-00000001",
            ),
        ]
        before = sim.app.requests_served
        for call in calls:
            assert call().error.code == "circuit_open"
        assert sim.app.requests_served == before


# --- credit notes -----------------------------------------------------------------------


def test_credit_note_request_is_idempotent(sim, healthy):
    customer_id = a_customer(sim, "technical_visit", 1)
    invoice_id = sim.app.data.accounts[customer_id].invoices[0].id
    first = healthy.request_credit_note(
        customer_id,
        invoice_id=invoice_id,
        amount="17.40",
        currency="USD",
        reason="visita por falla de la red",
        idempotency_key="approval-0001",
    )
    again = healthy.request_credit_note(
        customer_id,
        invoice_id=invoice_id,
        amount="17.40",
        currency="USD",
        reason="visita por falla de la red",
        idempotency_key="approval-0001",
    )
    assert first.ok and again.ok
    assert first.data == again.data
    assert first.evidence[0].value == "17.40"
    assert sim.app.stats()["credit_notes"] == 1
    other = healthy.request_credit_note(
        customer_id,
        invoice_id=invoice_id,
        amount="5.00",
        currency="USD",
        reason="otra cosa",
        idempotency_key="approval-0001",
    )
    assert (other.ok, other.should_escalate, other.error.code) == (False, True, "idempotency_key_reused")
    assert sim.app.stats()["credit_notes"] == 1


def test_credit_note_in_the_wrong_currency_is_refused(sim, healthy):
    customer_id = a_customer(sim, "technical_visit", 1)  # a USD account
    invoice_id = sim.app.data.accounts[customer_id].invoices[0].id
    result = healthy.request_credit_note(
        customer_id,
        invoice_id=invoice_id,
        amount="100.00",
        currency="VES",
        reason="r",
        idempotency_key="approval-0002",
    )
    assert (result.ok, result.error.code) == (False, "currency_mismatch")


# --- in-process transport (BILLING_API_BASE_URL empty) ----------------------------------


def in_process_client(app, breaker, fault=None):
    transport = InProcessTransport(app, read_timeout_s=TIMEOUT_S)
    return make_client(
        None, breaker, fault=fault, base_url="http://billing-simulator.invalid/", transport=transport
    )


@pytest.mark.parametrize(
    ("fault", "code"),
    [("timeout", "timeout"), ("latency:5000", "timeout"), ("reset", "connection_error"), ("503", "http_503")],
)
def test_in_process_faults_behave_like_the_network(breaker, fault, code):
    app = BillingSimulator(as_of=AS_OF, hang_s=5.0)
    with in_process_client(app, breaker, fault) as client:
        started = time.perf_counter()
        result = client.account_summary("C-1001")
        elapsed = time.perf_counter() - started
    assert (result.should_escalate, result.error.code) == (True, code)
    assert elapsed < 1.0, "the in-process deadline cuts the 5 s hang at the read timeout"


def test_in_process_transport_speaks_real_http(breaker):
    app = BillingSimulator(as_of=AS_OF)
    transport = InProcessTransport(app, read_timeout_s=1.0)
    with httpx.Client(transport=transport, base_url="http://sim") as http:
        response = http.get("/customers/C-1001")
        assert response.status_code == 401 and response.headers["www-authenticate"].startswith("Bearer")
        response = http.get("/customers/C-1001", headers={"Authorization": "Bearer sim-token"})
        assert response.status_code == 200 and response.json()["customer"]["id"] == "C-1001"


def test_factory_uses_the_in_process_simulator_when_no_base_url(settings, breaker):
    settings.BILLING_API_BASE_URL = ""
    settings.BILLING_API_TOKEN = "factory-token"
    settings.BILLING_SIM_FAULT = ""
    reset_shared_simulator()
    try:
        with billing_client(breaker=breaker) as client:
            result = client.invoices("C-1001")
        assert result.ok
        assert shared_simulator().token == "factory-token"
        assert shared_simulator().requests_served == client.last_call.http_calls == 2
    finally:
        reset_shared_simulator()


def test_factory_calls_the_configured_base_url(settings, sim, breaker):
    settings.BILLING_API_BASE_URL = sim.base_url
    settings.BILLING_API_TOKEN = "sim-token"
    settings.BILLING_API_TIMEOUT_S = 1.5
    before = sim.app.requests_served
    with billing_client(breaker=breaker) as client:
        assert client.timeout.read == 1.5 and client.timeout.connect == 0.75
        assert client.invoices("C-1001").ok
    assert sim.app.requests_served == before + 2


def test_memory_breaker_helper_is_isolated():
    one, two = memory_breaker(), memory_breaker()
    one.record_failure(one.admit())
    assert one.state().failures == 1 and two.state().failures == 0


def test_a_bug_in_the_computations_costs_one_escalation_not_the_turn(sim, healthy, monkeypatch):
    from billing.answers import computations

    def broken(*args, **kwargs):
        raise KeyError("boom")

    monkeypatch.setattr(computations, "find_invoice_total", broken)
    result = healthy.invoice_change(a_customer(sim))
    assert (result.ok, result.should_escalate, result.error.code) == (False, True, "client_error")


def test_a_warm_up_asks_about_a_simulated_customer_only_when_no_real_api_is_configured(settings):
    settings.BILLING_API_BASE_URL = ""
    customer_id = in_process_sample_customer()
    assert customer_id and customer_id.startswith("C-")
    settings.BILLING_API_BASE_URL = "https://billing.example.invalid/"
    assert in_process_sample_customer() is None
