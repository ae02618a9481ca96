"""Schemathesis drives the simulator from the contract: no server errors, every answer conforms.

The simulator is served on a real local port; every operation of billing/openapi.yaml gets its explicit
examples plus generated cases (at most 50 an operation, derandomised: the same cases on every run). Each
operation is a test of its own, so pytest-xdist runs every one (schemathesis's own parametrize gives its items
one node id, and xdist runs one of them).
"""

from datetime import date
from pathlib import Path

import httpx
import pytest
import schemathesis
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from billing.simulator import BillingSimulator, serve_in_thread

CONTRACT = Path(__file__).resolve().parents[1] / "openapi.yaml"
AUTH = {"Authorization": "Bearer sim-token"}
AS_OF = date(2026, 10, 20)

schema = schemathesis.openapi.from_path(str(CONTRACT))
OPERATIONS = [result.ok() for result in schema.get_all_operations()]


@pytest.fixture(scope="module")
def sim():
    with serve_in_thread(BillingSimulator(as_of=AS_OF)) as running:
        yield running


def conforms(case, sim) -> None:
    response = case.call(base_url=sim.base_url, headers=AUTH)
    assert response.status_code < 500, response.text
    case.validate_response(response, headers=AUTH)


@pytest.mark.parametrize("operation", OPERATIONS, ids=[operation.label for operation in OPERATIONS])
def test_simulator_conforms_to_the_contract(operation, sim):
    examples = operation.get_strategies_from_examples()
    bounded = settings(max_examples=50, deadline=None, derandomize=True, database=None,
                       suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    for strategy in ([st.one_of(examples)] if examples else []) + [operation.as_strategy()]:
        given(case=strategy)(bounded(lambda case: conforms(case, sim)))()


def test_the_contract_covers_what_the_bot_and_the_desk_call():
    contract = yaml.safe_load(CONTRACT.read_text())
    assert contract["openapi"].startswith("3.1")
    paths = contract["paths"]
    for lookup in ("phone", "whatsapp", "account", "national-id"):
        assert any(path.startswith(f"/lookup/{lookup}/") for path in paths)
    for needed in (
        "/customers/{customer_id}/plan",
        "/customers/{customer_id}/invoices",
        "/customers/{customer_id}/invoices/current",
        "/customers/{customer_id}/invoices/{period}",
        "/customers/{customer_id}/payments",
        "/customers/{customer_id}/promotions",
        "/customers/{customer_id}/credit-notes",
    ):
        assert needed in paths
    schemas = contract["components"]["schemas"]
    assert set(schemas["LineItem"]["properties"]["type"]["enum"]) >= {
        "recurring",
        "proration",
        "discount",
        "tax",
        "late_fee",
        "reconnection",
        "technical_visit",
        "credit",
    }
    assert schemas["Money"]["properties"]["amount"]["pattern"] == "^-?[0-9]{1,12}\\.[0-9]{2}$"
    assert {"customer_not_found", "invoice_not_found"} <= set(
        schemas["Error"]["properties"]["error"]["properties"]["code"]["enum"]
    )
    post = paths["/customers/{customer_id}/credit-notes"]["post"]
    assert any(p["name"] == "Idempotency-Key" and p["required"] for p in post["parameters"])
    assert contract["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"


def test_contract_validation_catches_a_simulator_that_breaks_it(sim):
    """The conformance test above can fail: an answer of the wrong shape is rejected."""
    operation = schema["/customers/{customer_id}"]["GET"]
    case = operation.Case(path_parameters={"customer_id": "C-1001"})
    good = httpx.get(sim.base_url + "/customers/C-1001", headers=AUTH)
    case.validate_response(good, headers=AUTH)
    drifted = httpx.get(sim.base_url + "/customers/C-1001", headers={**AUTH, "X-Sim-Fault": "schema"})
    assert drifted.status_code == 200
    with pytest.raises(BaseExceptionGroup) as failures:
        case.validate_response(drifted, headers=AUTH)
    assert "Response violates schema" in str(failures.value.exceptions[0])
