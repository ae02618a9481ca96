"""The contract term billing reports with the plan: month to month, the year prepaid, or the trial."""

from datetime import date

import pytest

from billing.records import ContractViolation, parse_plan
from billing.simulator.data import build_dataset

PLAN = {"code": "F300", "name": "Fibra 300", "download_mbps": 300, "upload_mbps": 150,
        "price": {"amount": "28.00", "currency": "USD"}, "since": "2026-03-01"}


@pytest.mark.parametrize("term", ["monthly", "annual", "trial"])
def test_a_reported_term_survives_the_round_trip(term):
    plan = parse_plan({"plan": {**PLAN, "term": term}, "price_history": []})
    assert plan.term == term
    assert parse_plan(plan.to_json()) == plan


def test_a_billing_system_that_does_not_report_the_term_leaves_it_unknown():
    plan = parse_plan({"plan": PLAN, "price_history": []})
    assert plan.term == ""
    assert "term" not in plan.to_json()["plan"]


def test_a_term_outside_the_contract_is_a_contract_violation():
    with pytest.raises(ContractViolation, match="plan.term"):
        parse_plan({"plan": {**PLAN, "term": "quarterly"}, "price_history": []})


def test_every_simulated_contract_is_billed_month_to_month():
    accounts = build_dataset(as_of=date(2026, 10, 20)).accounts.values()
    assert {account.plan.term for account in accounts} == {"monthly"}
