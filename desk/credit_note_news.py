"""What follows a supervisor's decision on a credit note: the proposer is notified, the thread gets a line, and the
agent is offered the words to tell the customer (in the customer's language).

The proposer is the agent who proposed it; a proposal the bot drafted goes to the person who holds the conversation
now, or to everyone who works the desk when nobody does.
"""

from __future__ import annotations

from decimal import Decimal

from django.urls import reverse

from billing.answers.money import LANGUAGES, money_text
from desk.models import CreditNoteRequest
from desk.notifications import notification_create

# What the agent may send the customer after the decision; {money} in the customer's notation, {invoice} its id.
TELL = {
    "es": {
        "approved": "Un supervisor aprobó la corrección de {money} en tu factura {invoice}; la verás reflejada en tu "
                    "cuenta.",
        "rejected": "Revisamos la solicitud de corrección de {money} en tu factura {invoice} y no fue aprobada. Si "
                    "quieres, te explico por qué.",
    },
    "en": {
        "approved": "A supervisor approved the correction of {money} on your invoice {invoice}; you will see it on "
                    "your account.",
        "rejected": "We reviewed the correction request of {money} on your invoice {invoice} and it was not approved. "
                    "I can explain why if you like.",
    },
}


def desk_money(request: CreditNoteRequest) -> str:
    """Return the amount in billing's one money notation for the contact's language, as the thread writes it:
    "USD 162,40" (es), "USD 162.40" (en)."""
    language = request.conversation.contact.language
    return money_text(Decimal(request.amount), request.currency, language if language in LANGUAGES else "es")


def decision_text(request: CreditNoteRequest, supervisor) -> str:
    """Return the notification's line: "Supervisor sol approved the credit note for USD 162,40 on invoice F-1" (the
    bot's proposals: "the bot's credit note"), as the thread says it (desk.selectors)."""
    verb = "approved" if request.status != CreditNoteRequest.Status.REJECTED else "rejected"
    whose = "the bot's" if request.drafted_by_bot else "the"
    return (f"Supervisor {supervisor.get_username()} {verb} {whose} credit note for {desk_money(request)} on "
            f"invoice {request.invoice_id}")


def tell_customer_text(request: CreditNoteRequest, language: str) -> str:
    """Return the reply the agent is offered after the decision, in the customer's language ("" while pending)."""
    if request.status == CreditNoteRequest.Status.PENDING:
        return ""
    outcome = "rejected" if request.status == CreditNoteRequest.Status.REJECTED else "approved"
    language = language if language in TELL else "es"
    money = money_text(Decimal(request.amount), request.currency, language)  # as the panel and the thread write it
    return TELL[language][outcome].format(money=money, invoice=request.invoice_id)


def decision_notify(request: CreditNoteRequest, supervisor) -> None:
    """Notify the proposer of the decision (the bot's proposals: the holder now, or the whole desk)."""
    conversation = request.conversation
    if request.proposed_by_id is not None:
        recipient = request.proposed_by
    else:
        recipient = conversation.assignee if conversation.held_by_human and conversation.assignee_id else None
    text = decision_text(request, supervisor)
    url = reverse("desk:conversation", args=[conversation.pk]) + f"?tell={request.pk}#composer"
    notification_create(recipient=recipient, text=f"{text} — tell the customer", url=url, conversation=conversation)
