"""The knowledge base names plans the way billing does: the plan codes and contract terms a document may say it
applies to are billing's, the codes in the same segment, and every plan type covers codes of one segment (pure: no
database)."""

from billing.simulator.data import PLANS
from billing.records import PLAN_TERMS
from kb.applicability import PLAN_CODES, PLAN_TYPES, SEGMENTS, TERMS


def test_the_plan_codes_are_billings_with_their_names_and_segments():
    assert PLAN_CODES == {code: (spec.name, spec.segment) for code, spec in PLANS.items()}
    assert {spec.segment for spec in PLANS.values()} == set(SEGMENTS)


def test_every_plan_type_is_the_plans_whose_billing_name_starts_with_it():
    for plan_type, codes in PLAN_TYPES.items():
        prefix = plan_type.replace("-", " ").replace("basico", "básico")
        assert set(codes) == {code for code, spec in PLANS.items() if spec.name.lower().startswith(prefix)}
        assert len({PLANS[code].segment for code in codes}) == 1
    assert set().union(*PLAN_TYPES.values()) == set(PLANS)


def test_the_contract_terms_a_document_may_name_are_the_ones_billing_reports():
    assert TERMS == PLAN_TERMS
