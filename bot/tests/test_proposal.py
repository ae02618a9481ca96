"""Which key figures make the bot draft a credit note, and the sentence that tells the customer. No database."""

from decimal import Decimal as D

import pytest

from billing.answers.evidence import KeyFigure
from bot.grounding import Evidence, verify
from bot.proposal import credit_proposal, proposal_sentence

INVOICE = {"id": "F-1012-202610", "period": "2026-10", "total": {"amount": "324.80", "currency": "USD"}}
OVERCHARGE = KeyFigure("E11", D("162.40"), "primary", "overcharge")


@pytest.mark.parametrize("figures, invoice, drafted", [
    ([OVERCHARGE], INVOICE, True),
    ([KeyFigure("E8", D("162.40"), "primary", "delta"), OVERCHARGE], INVOICE, True),
    ([KeyFigure("E11", D("162.40"), "secondary", "overcharge")], INVOICE, False),  # not what the answer states
    ([KeyFigure("E8", D("162.40"), "primary", "delta")], INVOICE, False),  # a change is not money owed
    ([KeyFigure("E11", D("0.00"), "primary", "overcharge")], INVOICE, False),
    ([KeyFigure("E11", D("400.00"), "primary", "overcharge")], INVOICE, False),  # more than the invoice
    ([OVERCHARGE], None, False),
    ([OVERCHARGE], {"id": "F-1", "total": {"amount": None, "currency": "USD"}}, False),
    ([OVERCHARGE], {"id": "F-1", "total": {"amount": "500.00", "currency": ""}}, False),
    ([OVERCHARGE], {"period": "2026-10", "total": INVOICE["total"]}, False),
])
def test_only_a_verified_overcharge_that_fits_the_invoice_is_drafted(figures, invoice, drafted):
    proposal = credit_proposal(figures, invoice)
    assert (proposal is not None) is drafted
    if drafted:
        assert (proposal.invoice_id, proposal.amount, proposal.currency, proposal.evidence_id) == (
            "F-1012-202610", D("162.40"), "USD", "E11")
        assert "F-1012-202610 (2026-10)" in proposal.reason and "162.40 USD" in proposal.reason


@pytest.mark.parametrize("language, expected", [
    ("es", "Registré la solicitud de corrección por 162,40 USD [E11]; un supervisor la revisa y te aviso por aquí."),
    ("en", "I have filed a correction request for USD 162.40 [E11]; a supervisor reviews it and I will let you know "
           "here."),
    ("pt", "Registré la solicitud de corrección por 162,40 USD [E11]; un supervisor la revisa y te aviso por aquí."),
])
def test_the_sentence_in_the_customers_language_passes_the_verifier(language, expected):
    sentence = proposal_sentence(credit_proposal([OVERCHARGE], INVOICE), language)
    assert sentence == expected
    evidence = [Evidence("E11", "Cargo repetido: cobrado de más = 162,40 USD", "162.40")]
    assert verify(sentence, evidence, customer_view=True, key_figures=["162.40"]).grounded
    # a figure the evidence does not hold is refused
    assert not verify(sentence.replace("162", "126"), evidence, customer_view=True).grounded
