"""The credit note a verified finding lets the bot draft, and the sentence that tells the customer. Pure, no Django.

A charge billed twice is a finding billing's computations verify (billing/answers/findings/invoice_checks.py): its
key figure, the overcharge (the repeated charge and the VAT on it), is what the customer is owed. When an answer
states that figure, the turn drafts a credit note for exactly it, on the invoice the finding is about, for a
supervisor to approve as any agent's proposal. The customer is told the request is filed and reviewed — a promise
of review, never of the outcome — and that sentence's figure goes through the grounding verifier like every other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from billing.answers.evidence import PRIMARY, KeyFigure
from billing.answers.phrases import phrases_for

# The key figures that are money owed back to the customer (billing/answers/findings declares them).
OWED_FIGURES = frozenset({"overcharge"})

# The sentence that ends the reply; [{evidence_id}] cites the fact that states the figure (stripped for the customer).
SENTENCE = {
    "es": "Registré la solicitud de corrección por {money} [{evidence_id}]; un supervisor la revisa y te aviso por "
          "aquí.",
    "en": "I have filed a correction request for {money} [{evidence_id}]; a supervisor reviews it and I will let you "
          "know here.",
}
REASON = ("Charged twice on invoice {invoice} ({period}): the repeated charge with its VAT, {amount} {currency}, as "
          "billing's computation finds it. Drafted by the bot from its verified answer.")


@dataclass(frozen=True)
class CreditProposal:
    """What the bot proposes: the invoice, the amount (the verified key figure) and the fact that states it."""

    invoice_id: str
    period: str
    amount: Decimal
    currency: str
    invoice_total: Decimal
    evidence_id: str  # the turn's E# of the fact that states the figure
    figure: KeyFigure
    context: dict = field(default_factory=dict, compare=False)  # what the approver decides with (the desk fills it)

    @property
    def reason(self) -> str:
        return REASON.format(invoice=self.invoice_id, period=self.period or "?", amount=f"{self.amount:.2f}",
                             currency=self.currency)


def credit_proposal(key_figures: list[KeyFigure], invoice: dict | None) -> CreditProposal | None:
    """Return the credit note an answer's primary key figures call for on `invoice` (billing's record), else None."""
    if not isinstance(invoice, dict) or not invoice.get("id"):
        return None
    total = invoice.get("total") if isinstance(invoice.get("total"), dict) else {}
    try:
        invoice_total = Decimal(str(total.get("amount")))
    except ArithmeticError:
        return None
    currency = str(total.get("currency") or "")
    for figure in key_figures:
        if (figure.name in OWED_FIGURES and figure.role == PRIMARY and isinstance(figure.value, Decimal)
                and 0 < figure.value <= invoice_total and currency):
            return CreditProposal(invoice_id=str(invoice["id"]), period=str(invoice.get("period") or ""),
                                  amount=figure.value, currency=currency, invoice_total=invoice_total,
                                  evidence_id=figure.evidence_id, figure=figure)
    return None


def proposal_sentence(proposal: CreditProposal, language: str) -> str:
    """Return the sentence that tells the customer the request is filed, with its citation, in their language."""
    language = language if language in SENTENCE else "es"
    money = phrases_for(language).money(proposal.amount, proposal.currency)
    return SENTENCE[language].format(money=money, evidence_id=proposal.evidence_id)
