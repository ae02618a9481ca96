"""The billing simulator: seeded data, the contract's edges, fault injection, counting, and its three homes."""

import json
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import httpx
import pytest

from billing.simulator import SCENARIOS, BillingSimulator, build_dataset, parse_fault, serve_in_thread
from billing.simulator.data import EN_FIRST, rif_check_digit
from billing.simulator.mounted import reset_shared_simulator, shared_simulator

AS_OF = date(2026, 10, 20)
AUTH = {"Authorization": "Bearer sim-token"}
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sim():
    with serve_in_thread(BillingSimulator(as_of=AS_OF, hang_s=1.0)) as running:
        yield running


@pytest.fixture
def http(sim):
    with httpx.Client(base_url=sim.base_url, headers=AUTH, timeout=5.0) as client:
        yield client


# --- the data -------------------------------------------------------------------------


def test_dataset_covers_every_scenario_several_times_in_both_currencies_and_languages():
    data = build_dataset(as_of=AS_OF)
    assert len(data.accounts) >= 60
    for scenario in SCENARIOS:
        ids = data.scenarios[scenario]
        assert len(ids) >= 4, scenario
        customers = [data.accounts[cid].customer for cid in ids]
        assert {c.currency for c in customers} == {"USD", "VES"}, scenario
        assert {c.language for c in customers} == {"es", "en"}, scenario
    names = [acc.customer.name for acc in data.accounts.values()]
    assert any(re.search(r"[áéíóúñ]", name) for name in names)
    assert any(
        name.split()[0]
        in set(EN_FIRST)
        for name in names
    )


def test_identifiers_are_unique_and_well_formed():
    data = build_dataset(as_of=AS_OF)
    customers = [acc.customer for acc in data.accounts.values()]
    for field in ("national_id", "account_number", "phone", "whatsapp_id"):
        values = [getattr(c, field) for c in customers]
        assert len(set(values)) == len(values), field
    for customer in customers:
        assert re.match(r"^(V|E)-\d{7,8}$|^J-\d{8}-\d$", customer.national_id)
        if customer.kind == "company":
            letter, digits, check = customer.national_id.split("-")
            assert int(check) == rif_check_digit(letter, digits)


@pytest.mark.parametrize(
    ("letter", "digits", "check"), [("J", "00124134", 5), ("J", "07013380", 5), ("G", "20000303", 0)]
)
def test_rif_check_digit_matches_published_rifs(letter, digits, check):
    assert rif_check_digit(letter, digits) == check


def test_same_seed_and_date_give_identical_data_and_another_seed_does_not():
    def snapshot(data):
        return json.dumps(
            {
                cid: [inv.to_json() for inv in acc.invoices] + [p.to_json() for p in acc.payments]
                for cid, acc in data.accounts.items()
            },
            sort_keys=True,
        )

    assert snapshot(build_dataset(7, as_of=AS_OF)) == snapshot(build_dataset(7, as_of=AS_OF))
    assert snapshot(build_dataset(7, as_of=AS_OF)) != snapshot(build_dataset(8, as_of=AS_OF))


def test_people_stay_the_same_whatever_the_anchor_date():
    """Golden cases can name a customer or a phone number and keep working month after month."""

    def people(data):
        return {
            cid: (acc.customer.name, acc.customer.phone, acc.customer.national_id, acc.scenario)
            for cid, acc in data.accounts.items()
        }

    assert people(build_dataset(as_of=AS_OF)) == people(build_dataset(as_of=date(2027, 3, 3)))


@pytest.mark.parametrize(
    "as_of",
    [
        date(2026, 1, 1),
        date(2026, 2, 28),
        date(2026, 3, 15),
        date(2026, 3, 16),
        date(2026, 12, 31),
        date(2027, 2, 1),
    ],
)
def test_data_is_consistent_for_any_anchor_date(as_of):
    data = build_dataset(as_of=as_of)
    for account in data.accounts.values():
        for invoice in account.invoices:
            assert invoice.issue_date <= as_of
            assert sum(line.amount.amount for line in invoice.lines) == invoice.total.amount
            assert {line.amount.currency for line in invoice.lines} == {account.customer.currency}
        assert all(p.date <= as_of for p in account.payments)


# What each scenario's newest bill shows (the key figures billing computes for "why did my bill change").
STORIES = {
    "promotion_ended": {"delta", "discount_ended"},
    "plan_upgrade_proration": {"delta", "prorated_amount", "prorated_days"},
    "tax_rate_change": {"delta", "tax_change_effect"},
    "late_fee": {"delta", "late_fee", "late_fee_basis"},
    "reconnection_fee": {"charge", "delta", "late_fee", "late_fee_basis"},
    "technical_visit": {"charge", "delta"},
    "duplicate_charge": {"delta", "overcharge"},
    "payment_failed_then_succeeded": {"total"},
    "unchanged": {"total"},
    "outage_credit": {"delta", "outage_credit"},
    "new_customer": set(),  # a first bill (or none yet): nothing to compare it with
}
# Month ends, year ends, a leap day, both cycles' issue days and the days around them, and every 37th day
# over two years: a fixed sample, so the test reads the same every run.
STORY_DATES = sorted({
    date(2026, 12, 31), date(2027, 1, 1), date(2027, 1, 31), date(2027, 2, 28), date(2027, 3, 1),
    date(2028, 2, 29), date(2026, 11, 15), date(2026, 11, 16), date(2026, 12, 1), date(2026, 12, 10),
    *(date.fromordinal(date(2026, 1, 1).toordinal() + day) for day in range(0, 730, 37)),
})


@pytest.mark.parametrize("today", STORY_DATES, ids=str)
def test_every_customer_keeps_its_story_on_any_date(today):
    from tests.support.billing_sim import client_for

    simulator = BillingSimulator(as_of=today)
    with client_for(simulator, today) as client:
        for customer_id, account in simulator.data.accounts.items():
            if account.scenario == "new_customer":  # joined this cycle: a first bill, or none issued yet
                assert len(account.invoices) <= 1, customer_id
            else:
                current, previous = account.invoices[:2]  # newest first: a current and a previous bill
                assert current.issue_date <= today and previous.issue_date < current.issue_date
            figures = {figure.name for figure in client.invoice_change(customer_id).key_figures}
            assert figures == STORIES[account.scenario], (customer_id, account.scenario)


# --- the contract's edges ---------------------------------------------------------------


def test_health_needs_no_token_and_everything_else_does(sim):
    assert httpx.get(sim.base_url + "/health").json() == {"status": "ok"}
    response = httpx.get(sim.base_url + "/customers/C-1001")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        ("/customers/C-9999", 404, "customer_not_found"),
        ("/customers/1001", 400, "invalid_request"),
        ("/customers/C-1001/invoices/2019-01", 404, "invoice_not_found"),
        ("/customers/C-1001/invoices/2026-13", 400, "invalid_request"),
        ("/customers/C-1001/invoices?limit=0", 400, "invalid_request"),
        ("/lookup/national-id/V-1", 400, "invalid_request"),
        ("/lookup/phone/+580000000", 404, "customer_not_found"),
        ("/nowhere", 404, "not_found"),
    ],
)
def test_errors_carry_machine_codes(http, path, status, code):
    response = http.get(path)
    assert response.status_code == status
    assert response.json() == {"error": {"code": code, "message": response.json()["error"]["message"]}}


def test_unsupported_method_is_405_with_allow(http):
    response = http.delete("/customers/C-1001")
    assert response.status_code == 405 and response.headers["allow"] == "GET"


def test_amounts_are_two_place_strings_with_a_currency(http, sim):
    customer_id = sim.app.data.scenarios["plan_upgrade_proration"][0]
    invoice = http.get(f"/customers/{customer_id}/invoices/current").json()["invoice"]
    amounts = [invoice["total"]] + [line["amount"] for line in invoice["lines"]]
    assert all(re.match(r"^-?\d+\.\d{2}$", a["amount"]) and a["currency"] in ("USD", "VES") for a in amounts)
    assert invoice["currency"] == "VES"


def test_credit_note_needs_an_idempotency_key(http, sim):
    body = {"invoice_id": "F-1001-202610", "amount": {"amount": "1.00", "currency": "USD"}, "reason": "r"}
    response = http.post("/customers/C-1001/credit-notes", json=body)
    assert response.status_code == 400 and response.json()["error"]["code"] == "idempotency_key_required"


# --- faults and counting ----------------------------------------------------------------


@pytest.mark.parametrize(
    "value", ["503", "500", "timeout", "reset", "malformed", "schema", "latency:200", "none", ""]
)
def test_fault_names_are_validated(value):
    parse_fault(value)
    with pytest.raises(ValueError):
        parse_fault("explode")


def test_per_request_fault_and_request_count(sim, http):
    before = sim.app.requests_served
    assert http.get("/customers/C-1001", headers={"X-Sim-Fault": "503"}).status_code == 503
    malformed = http.get("/customers/C-1001", headers={"X-Sim-Fault": "malformed"})
    assert malformed.status_code == 200
    with pytest.raises(ValueError):
        malformed.json()
    with pytest.raises(httpx.TransportError):
        http.get("/customers/C-1001", headers={"X-Sim-Fault": "reset"})
    assert http.get("/customers/C-1001").status_code == 200
    assert sim.app.requests_served == before + 4
    stats = http.get("/_sim/stats").json()
    assert stats["requests_served"] == before + 4  # control endpoints are not counted


def test_global_fault_switch_and_header_bypass(sim, http):
    try:
        assert http.post("/_sim/fault", json={"fault": "503"}).json()["fault"] == "503"
        assert http.get("/customers/C-1001").status_code == 503
        assert http.get("/customers/C-1001", headers={"X-Sim-Fault": "none"}).status_code == 200
        assert http.post("/_sim/fault", json={"fault": "boom"}).status_code == 400
    finally:
        http.post("/_sim/fault", json={"fault": None})
    assert http.get("/customers/C-1001").status_code == 200


def test_control_endpoints_need_the_token(sim):
    assert httpx.post(sim.base_url + "/_sim/fault", json={"fault": "503"}).status_code == 401
    assert sim.app.fault is None


def test_scenario_index_for_demos(http):
    rows = http.get("/_sim/customers").json()["customers"]
    assert len(rows) >= 60 and {row["scenario"] for row in rows} == set(SCENARIOS)


def test_the_contract_is_served(sim):
    assert httpx.get(sim.base_url + "/openapi.yaml").text.startswith("openapi: 3.1")


# --- standalone and mounted -------------------------------------------------------------


def test_runs_standalone_on_its_own_port():
    proc = subprocess.Popen(
        [sys.executable, "-m", "billing.simulator", "--port", "0", "--as-of", "2026-10-20"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        banner = proc.stdout.readline()
        url = re.search(r"http://[\d.]+:\d+", banner).group(0)
        assert "64 customers" in banner
        response = httpx.get(url + "/customers/C-1001/invoices/current", headers=AUTH, timeout=5)
        assert response.json()["invoice"]["period"] == "2026-10"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def mounted(settings):
    settings.BILLING_API_TOKEN = "mount-token"
    settings.BILLING_SIM_FAULT = ""
    reset_shared_simulator()
    yield
    reset_shared_simulator()


def test_mounted_in_django_under_sim_billing(client, mounted):
    assert client.get("/sim/billing/health").json() == {"status": "ok"}
    assert client.get("/sim/billing/customers/C-1001").status_code == 401
    response = client.get("/sim/billing/customers/C-1001", HTTP_AUTHORIZATION="Bearer mount-token")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert response.json()["customer"]["id"] == "C-1001"
    body = {"invoice_id": "F-1001-999999", "amount": {"amount": "1.00", "currency": "USD"}, "reason": "r"}
    response = client.post(
        "/sim/billing/customers/C-1001/credit-notes",
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION="Bearer mount-token",
        HTTP_IDEMPOTENCY_KEY="mounted-0001",
    )
    assert (
        response.status_code == 404 and response.json()["error"]["code"] == "invoice_not_found"
    )  # no CSRF wall
    assert shared_simulator().requests_served == 4


def test_mounted_simulator_takes_its_global_fault_from_settings(client, settings, mounted):
    settings.BILLING_SIM_FAULT = "503"
    reset_shared_simulator()
    response = client.get("/sim/billing/customers/C-1001", HTTP_AUTHORIZATION="Bearer mount-token")
    assert response.status_code == 503 and response["Retry-After"] == "30"
    client.post(
        "/sim/billing/_sim/fault",
        {"fault": None},
        content_type="application/json",
        HTTP_AUTHORIZATION="Bearer mount-token",
    )
    assert (
        client.get("/sim/billing/customers/C-1001", HTTP_AUTHORIZATION="Bearer mount-token").status_code
        == 200
    )
