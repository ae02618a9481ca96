"""Credit notes: an agent proposes one on a customer's invoice, a supervisor approves it, billing receives it.

Every write is one function that checks permission, changes the row under a lock and writes an `Event`
on the conversation. Billing is told only after the approval commits, with the request's own
Idempotency-Key, so a double click, two supervisors or a retry after a failure never create two
credit notes in billing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from decimal import Decimal

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import QuerySet, Sum
from django.shortcuts import get_object_or_404

from billing.answers.findings.payments import find_payments
from billing.answers.money import LANGUAGES, money_text
from billing.api.client import billing_client
from billing.records import parse_invoice, parse_payment
from core import clock, params
from desk import rules
from desk.access import conversation_verdict, require_desk_worker
from desk.credit_note_news import decision_notify, tell_customer_text
from desk.models import Conversation, CreditNoteRequest, Event, Message
from desk.services import DeskActionError, bot_reply_record, reply_window_open

logger = logging.getLogger(__name__)

CURRENCIES = ("USD", "VES")
REASON_MAX = 500  # the billing contract's limit
INVOICES_LISTED = 12
# Requests that still count against an invoice's total (a rejected one gives its amount back).
COUNTING = [CreditNoteRequest.Status.PENDING, CreditNoteRequest.Status.APPROVED,
            CreditNoteRequest.Status.SENT, CreditNoteRequest.Status.FAILED]


class CreditNoteError(Exception):
    """A credit-note action that cannot be done; the message says why, for the user."""


class BillingUnavailable(CreditNoteError):
    """Billing could not be asked (outage or open circuit): nothing was saved."""


class HeldByAnother(CreditNoteError, DeskActionError):
    """Another agent holds the conversation: only they or a supervisor propose on it (desk.rules)."""


def _holder_allows(agent, conversation: Conversation) -> None:
    """Raise HeldByAnother unless the holder rules let the agent propose a credit note on the conversation."""
    verdict = conversation_verdict(agent, conversation, rules.Action.CREDIT_NOTE)
    if not verdict.allowed:
        raise HeldByAnother(verdict.message)


# Who may do what ---------------------------------------------------------------------------------

def may_approve_credit_notes(user) -> bool:
    """Supervisors approve, reject and re-send credit notes."""
    return user.is_authenticated and user.has_perm("desk.approve_credit_notes")


def require_approver(user) -> None:
    """Raise PermissionDenied unless the user is a supervisor."""
    if not may_approve_credit_notes(user):
        raise PermissionDenied("Only supervisors approve credit notes.")


def access_credit_note(user, request_id: int) -> CreditNoteRequest:
    """Return the credit-note request when the user may decide on it; else raise PermissionDenied (or 404)."""
    require_approver(user)
    return get_object_or_404(CreditNoteRequest, pk=request_id)


# Reads -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CustomerInvoices:
    """The invoices billing holds for a customer; `state` is ok | unavailable | not_found | unidentified."""

    state: str
    invoices: tuple = ()
    error: str = ""

    def find(self, invoice_id: str) -> dict | None:
        return next((invoice for invoice in self.invoices if invoice.get("id") == invoice_id), None)


def customer_invoices(*, customer_id: str) -> CustomerInvoices:
    """Ask billing for the customer's last invoices (newest first)."""
    if not customer_id:
        return CustomerInvoices(state="unidentified")
    try:
        result = billing_client().invoices(customer_id, limit=INVOICES_LISTED)
    except Exception:  # a broken client must cost this form, not the conversation page
        logger.exception("invoices of %s failed", customer_id)
        return CustomerInvoices(state="unavailable", error="client_error")
    if result.should_escalate:
        return CustomerInvoices(state="unavailable", error=result.error.code if result.error else "")
    if not result.ok:
        return CustomerInvoices(state="not_found", error=result.error.message if result.error else "")
    return CustomerInvoices(state="ok", invoices=tuple(result.data.get("invoices") or ()))


# What each figure billing's computations may find on an invoice means, for the approver.
FIGURE_LABELS = {
    "overcharge": "Charged twice (duplicate)",
    "delta": "Change from the previous invoice",
    "total": "Invoice total",
    "charge": "One-off charge",
    "tax_change_effect": "Effect of the tax-rate change",
    "outage_credit": "Outage credit",
    "discount_ended": "Discount that ended",
    "prorated_amount": "Prorated amount",
    "balance": "Balance",
    "late_fee": "Late fee",
    "late_fee_basis": "Late-fee basis",
    "payment_amount": "Payment",
}


def invoice_context(*, customer_id: str, invoice: dict) -> dict:
    """Return what an approver needs of the invoice: its total, what was paid on it and the money figures
    billing's computations find on it (the same computations the bot's answers quote), or {"unavailable":
    reason} when billing cannot say now. Amounts are machine strings ("162.40") in the invoice's currency."""
    try:
        result = billing_client().invoice_change(customer_id, period=invoice.get("period") or None)
    except Exception:  # the context helps the approver; its absence must not cost the proposal
        logger.exception("invoice context of %s %s failed", customer_id, invoice.get("id"))
        return {**_invoice_basics(invoice), "unavailable": "billing's computations failed"}
    if not result.ok:
        return {**_invoice_basics(invoice),
                "unavailable": result.error.message if result.error else "billing did not answer"}
    return invoice_context_of(invoice=invoice, data=result.data, evidence=result.evidence,
                              key_figures=result.key_figures)


def _invoice_basics(invoice: dict) -> dict:
    total = invoice.get("total") or {}
    return {"period": invoice.get("period", ""), "total": str(total.get("amount") or ""),
            "currency": total.get("currency", "")}


def invoice_context_of(*, invoice: dict, data: dict, evidence, key_figures) -> dict:
    """Return the approver's context from an invoice_change answer billing already gave (the bot's turn has one)."""
    context = _invoice_basics(invoice)
    # What was paid is billing's own finding (succeeded payments against the total), not a second sum here.
    try:
        current = parse_invoice(data.get("current_invoice"))
        paid = find_payments(current, [parse_payment(p) for p in data.get("payments") or []])[0].paid
    except (ValueError, TypeError, IndexError):  # a record off the contract, or payments in another currency
        logger.exception("invoice context of %s: unreadable records", invoice.get("id"))
        return {**context, "unavailable": "billing's records could not be read"}
    figures = []
    for figure in key_figures:
        fact = evidence[figure.index] if figure.index < len(evidence) else None
        if figure.name in FIGURE_LABELS and isinstance(figure.value, Decimal) and fact is not None:
            figures.append({"name": figure.name, "label": FIGURE_LABELS[figure.name], "amount": figure.figure,
                            "text": fact.text})
    return {**context, "paid": f"{paid:.2f}", "figures": figures}


def conversation_credit_notes(*, conversation: Conversation) -> QuerySet[CreditNoteRequest]:
    """Return the conversation's credit-note requests, newest first."""
    return (conversation.credit_notes.select_related("proposed_by", "decided_by")
            .order_by("-proposed_at", "-pk"))


def credit_notes_pending() -> QuerySet[CreditNoteRequest]:
    """Return the requests waiting for a supervisor, oldest first."""
    return (CreditNoteRequest.objects.filter(status=CreditNoteRequest.Status.PENDING)
            .select_related("conversation__contact", "proposed_by")
            .order_by("proposed_at", "pk"))


def credit_notes_proposed_by(*, user, limit: int = 50) -> QuerySet[CreditNoteRequest]:
    """Return the requests `user` proposed, newest first, with their decision."""
    return (CreditNoteRequest.objects.filter(proposed_by=user)
            .select_related("conversation__contact", "decided_by")
            .order_by("-proposed_at", "-pk")[:limit])


def credit_notes_decided(*, limit: int = 50) -> QuerySet[CreditNoteRequest]:
    """Return the most recently decided requests (approved, sent, failed, rejected), newest decision first."""
    return (CreditNoteRequest.objects.exclude(status=CreditNoteRequest.Status.PENDING)
            .select_related("conversation__contact", "proposed_by", "decided_by")
            .order_by("-decided_at", "-pk")[:limit])


# Writes ------------------------------------------------------------------------------------------

def _event(request: CreditNoteRequest, actor, kind: str, **detail) -> Event:
    return Event.objects.create(
        conversation_id=request.conversation_id, actor=actor, kind=kind,
        detail={"credit_note_request": request.pk, "invoice_id": request.invoice_id,
                "amount": f"{request.amount:.2f}", "currency": request.currency, **detail},
    )


def _language(conversation: Conversation) -> str:
    """The contact's language for amounts (billing's notation); one billing cannot write reads as Spanish."""
    language = conversation.contact.language
    return language if language in LANGUAGES else "es"


def _amount(value) -> Decimal:
    amount = params.decimal(str(value), label="The amount", places=2,
                            max_digits=CreditNoteRequest._meta.get_field("amount").max_digits)
    if amount.error or amount.value is None:
        raise CreditNoteError(amount.error or "The amount is not a number, e.g. 5.00.")
    if amount.value <= 0:
        raise CreditNoteError("The amount must be above zero.")
    return amount.value


@transaction.atomic
def credit_note_propose(*, conversation: Conversation, agent, invoice_id: str, amount, currency: str,
                        reason: str) -> CreditNoteRequest:
    """Propose a credit note on one of the conversation's customer's invoices; a supervisor decides.

    The invoice is checked against billing now (it exists, same currency, the amount fits in its total);
    when billing cannot be asked nothing is saved. The same proposal submitted twice is one request. While
    another agent holds the conversation, only they or a supervisor may propose (HeldByAnother).
    """
    require_desk_worker(agent, "Only agents and supervisors propose credit notes.")
    invoice_id = (invoice_id or "").strip()
    currency = (currency or "").strip().upper()
    reason = (reason or "").strip()
    amount = _amount(amount)
    if not reason:
        raise CreditNoteError("Say why the customer gets this credit note.")
    if len(reason) > REASON_MAX:
        raise CreditNoteError(f"The reason has at most {REASON_MAX} characters.")
    if currency and currency not in CURRENCIES:
        raise CreditNoteError("The currency is USD or VES.")
    if not invoice_id:
        raise CreditNoteError("Pick the invoice the credit note is for.")
    _holder_allows(agent, conversation)  # before asking billing; again under the lock below
    customer_id = Conversation.objects.filter(pk=conversation.pk).values_list("contact__customer_id",
                                                                            flat=True).get()
    if not customer_id:
        raise CreditNoteError("The customer is not identified yet: link a billing account first.")
    # Billing is asked before any lock: a slow or failing API must not hold up the conversation's row
    # (the bot's send point and take-over lock it too).
    billing = customer_invoices(customer_id=customer_id)
    if billing.state == "unavailable":
        raise BillingUnavailable("Billing system unavailable: the invoice cannot be checked, so nothing was "
                                 "saved. Try again in a minute.")
    if billing.state != "ok":
        raise CreditNoteError(f"Billing has no account {customer_id}.")
    invoice = billing.find(invoice_id)
    if invoice is None:
        raise CreditNoteError(f"Invoice {invoice_id} is not one of {customer_id}'s invoices.")
    total = invoice.get("total") or {}
    currency = currency or str(total.get("currency") or "")  # a credit note is in its invoice's currency
    if total.get("currency") != currency:
        raise CreditNoteError(f"Invoice {invoice_id} is in {total.get('currency')}, not {currency}.")
    invoice_total = Decimal(total.get("amount") or "0")
    context = invoice_context(customer_id=customer_id, invoice=invoice)
    # Serialize proposals on one conversation: a double click waits here, then finds its twin.
    conversation = Conversation.objects.select_for_update().get(pk=conversation.pk)
    _holder_allows(agent, conversation)
    twin = conversation.credit_notes.filter(
        status=CreditNoteRequest.Status.PENDING, invoice_id=invoice_id, amount=amount, currency=currency,
        reason=reason, proposed_by=agent,
    ).first()
    if twin is not None:
        return twin
    already = (CreditNoteRequest.objects.filter(customer_id=customer_id, invoice_id=invoice_id,
                                                status__in=COUNTING)
               .aggregate(total=Sum("amount"))["total"] or Decimal("0"))
    if amount + already > invoice_total:
        room = invoice_total - already
        language = _language(conversation)

        def money(value: Decimal) -> str:
            return money_text(value, currency, language)

        raise CreditNoteError(
            f"{money(amount)} is more than invoice {invoice_id} allows: its total is {money(invoice_total)}"
            + (f" and {money(already)} are already requested on it ({money(max(room, Decimal('0')))} left)."
               if already else ".")
        )
    request = CreditNoteRequest.objects.create(
        conversation=conversation, customer_id=customer_id, invoice_id=invoice_id, amount=amount,
        currency=currency, reason=reason, proposed_by=agent, context=context,
    )
    _event(request, agent, "credit_note_proposed", reason=reason)
    return request


@dataclass(frozen=True)
class BotCreditNote:
    """A credit note the bot's turn drafts from a verified finding (a charge billed twice), for a supervisor."""

    invoice_id: str
    amount: Decimal
    currency: str
    reason: str
    invoice_total: Decimal  # billing's total of the invoice, from the turn's own billing answer
    context: dict  # what the approver decides with (invoice_context_of)
    text_without: str  # the reply without the sentence that tells the customer the request is filed


@transaction.atomic
def bot_reply_with_credit_note(*, conversation_id: int, text: str, credit_note: BotCreditNote
                               ) -> tuple[Message | None, CreditNoteRequest | None]:
    """Record the bot's reply and the credit note it drafted, or the reply without it; nothing while a person holds
    the conversation (the state gate, under the conversation's row lock, as bot_reply_record).

    The same finding (customer, invoice, amount) is one proposal however often the customer asks: a repeated
    question finds the pending one and the reply still says it is filed; after a supervisor rejected it, or when
    the invoice has no room left for it, the reply goes without the sentence and no proposal is made.
    """
    conversation = Conversation.objects.select_for_update().select_related("contact").get(pk=conversation_id)
    if conversation.held_by_human:
        return None, None
    request = _bot_credit_note_file(conversation, credit_note)
    reply = bot_reply_record(conversation_id=conversation.pk, text=text if request else credit_note.text_without)
    if request is not None and request.reply_id is None:
        request.reply = reply
        request.save(update_fields=["reply"])
    return reply, request


def _bot_credit_note_file(conversation: Conversation, note: BotCreditNote) -> CreditNoteRequest | None:
    """Return the bot's proposal for this finding, filed now or before; None when none may stand."""
    customer_id = conversation.contact.customer_id
    if not customer_id or note.amount <= 0 or note.currency not in CURRENCIES:
        return None
    same = CreditNoteRequest.objects.filter(drafted_by_bot=True, customer_id=customer_id,
                                            invoice_id=note.invoice_id, amount=note.amount)
    existing = same.first()
    if existing is not None:
        return None if existing.status == CreditNoteRequest.Status.REJECTED else existing
    already = (CreditNoteRequest.objects.filter(customer_id=customer_id, invoice_id=note.invoice_id,
                                                status__in=COUNTING)
               .aggregate(total=Sum("amount"))["total"] or Decimal("0"))
    if note.amount + already > note.invoice_total:
        return None  # a person already asked for (part of) it: theirs stands, the bot adds nothing
    try:
        with transaction.atomic():  # another conversation of the same customer filed it this instant
            request = CreditNoteRequest.objects.create(
                conversation=conversation, customer_id=customer_id, invoice_id=note.invoice_id, amount=note.amount,
                currency=note.currency, reason=note.reason[:REASON_MAX], proposed_by=None, drafted_by_bot=True,
                context=note.context)
    except IntegrityError:
        existing = same.first()
        return None if existing is None or existing.status == CreditNoteRequest.Status.REJECTED else existing
    _event(request, None, "credit_note_proposed", reason=request.reason, agent="the bot", by_bot=True)
    return request


def _locked(request: CreditNoteRequest) -> CreditNoteRequest:
    return (CreditNoteRequest.objects.select_for_update(of=("self",))
            .select_related("conversation__contact").get(pk=request.pk))


def _decided(request: CreditNoteRequest) -> str:
    who = request.decided_by.get_username() if request.decided_by else "someone"
    return f"This credit note is already {request.get_status_display().lower()} ({who})."


@transaction.atomic
def credit_note_approve(*, request: CreditNoteRequest, supervisor) -> CreditNoteRequest:
    """Approve a pending request and, once that commits, send it to billing.

    The row is locked (SELECT … FOR UPDATE): of a double click or two supervisors at once, one
    approves and the other is told it is already approved; billing is called once.
    """
    require_approver(supervisor)
    request = _locked(request)
    if request.status != CreditNoteRequest.Status.PENDING:
        raise CreditNoteError(_decided(request))
    if request.proposed_by_id == supervisor.pk:
        raise CreditNoteError("You proposed this credit note: another supervisor approves it.")
    request.status = CreditNoteRequest.Status.APPROVED
    request.decided_by = supervisor
    request.decided_at = clock.now()
    request.save(update_fields=["status", "decided_by", "decided_at"])
    _event(request, supervisor, "credit_note_approved", by_bot=request.drafted_by_bot)
    decision_notify(request, supervisor)
    request_id = request.pk
    transaction.on_commit(lambda: credit_note_send(request_id=request_id, actor=supervisor))
    return request


@transaction.atomic
def credit_note_reject(*, request: CreditNoteRequest, supervisor, note: str) -> CreditNoteRequest:
    """Reject a pending request with a note the proposer reads; billing is never asked."""
    require_approver(supervisor)
    note = (note or "").strip()
    if not note:
        raise CreditNoteError("Say why the credit note is rejected.")
    request = _locked(request)
    if request.status != CreditNoteRequest.Status.PENDING:
        raise CreditNoteError(_decided(request))
    request.status = CreditNoteRequest.Status.REJECTED
    request.decided_by = supervisor
    request.decided_at = clock.now()
    request.decision_note = note[:2000]
    request.save(update_fields=["status", "decided_by", "decided_at", "decision_note"])
    _event(request, supervisor, "credit_note_rejected", note=request.decision_note, by_bot=request.drafted_by_bot)
    decision_notify(request, supervisor)
    return request


@transaction.atomic
def credit_note_send_retry(*, request: CreditNoteRequest, supervisor) -> CreditNoteRequest:
    """Send an approved request again after a failure, with the same Idempotency-Key (never a second note)."""
    require_approver(supervisor)
    request = _locked(request)
    if request.status not in (CreditNoteRequest.Status.FAILED, CreditNoteRequest.Status.APPROVED):
        raise CreditNoteError(_decided(request) if request.status != CreditNoteRequest.Status.PENDING
                              else "Approve the credit note first.")
    _event(request, supervisor, "credit_note_retried")
    request_id = request.pk
    transaction.on_commit(lambda: credit_note_send(request_id=request_id, actor=supervisor))
    return request


@transaction.atomic
def credit_note_send(*, request_id: int, actor=None) -> CreditNoteRequest:
    """Ask billing for the approved credit note and record the answer (sent, or failed with the error).

    Runs after the approval committed. The row stays locked during the one HTTP call (bounded by
    BILLING_API_TIMEOUT_S), so two senders never both call: the second finds it sent.
    """
    request = CreditNoteRequest.objects.select_for_update(of=("self",)).select_related(
        "conversation__contact", "proposed_by").get(pk=request_id)
    if request.status not in (CreditNoteRequest.Status.APPROVED, CreditNoteRequest.Status.FAILED):
        return request
    try:
        result = billing_client().request_credit_note(
            request.customer_id, invoice_id=request.invoice_id, amount=request.amount,
            currency=request.currency, reason=request.reason, idempotency_key=request.idempotency_key,
            # Part of the body billing fingerprints per key: it must be the same on every attempt.
            requested_by=_requested_by(request), language=request.conversation.contact.language,
        )
    except Exception as exc:  # a bug in the client must leave a retryable row, not an approved limbo
        logger.exception("credit note request %s failed", request.pk)
        error, note = f"client_error: {type(exc).__name__}: {exc}", None
    else:
        note = result.data.get("credit_note") if result.ok else None
        error = "" if note else (f"{result.error.code}: {result.error.message}" if result.error
                                 else "billing gave no credit note")
    if note:
        request.status = CreditNoteRequest.Status.SENT
        request.billing_credit_note_id = str(note.get("id", ""))[:64]
        request.billing_status = str(note.get("status", ""))[:32]
        request.error = ""
        request.sent_at = clock.now()
        _event(request, actor, "credit_note_sent", billing_id=request.billing_credit_note_id,
               billing_status=request.billing_status)
    else:
        request.status = CreditNoteRequest.Status.FAILED
        request.error = error[:2000]
        _event(request, actor, "credit_note_failed", error=request.error)
    request.save(update_fields=["status", "billing_credit_note_id", "billing_status", "error", "sent_at"])
    return request


def _requested_by(request: CreditNoteRequest) -> str | None:
    if request.drafted_by_bot:
        return "tracedesk:bot"
    if request.proposed_by is None:
        return None
    return f"tracedesk:{request.proposed_by.get_username()}"[:100]


def proposal_notice(proposal: CreditNoteRequest) -> str:
    """What the conversation's panel says once a credit note is proposed, the amount in the contact's notation."""
    amount = money_text(proposal.amount, proposal.currency, _language(proposal.conversation))
    return f"Credit note of {amount} on {proposal.invoice_id} proposed; a supervisor approves it."


def credit_note_panel(*, conversation: Conversation, values: dict | None = None, error: str = "",
                      notice: str = "", billing: CustomerInvoices | None = None) -> dict:
    """Return what the conversation's credit-note panel shows: its requests, the invoices, the form."""
    if billing is None:
        billing = customer_invoices(customer_id=conversation.contact.customer_id)
    values = dict(values or {})
    requests = list(conversation_credit_notes(conversation=conversation))
    for request in requests:  # what the agent may tell the customer once a supervisor decided
        request.tell = tell_customer_text(request, conversation.contact.language)
    if not values.get("currency") and billing.invoices:
        values["currency"] = (billing.invoices[0].get("total") or {}).get("currency", "")
    return {
        "requests": requests,
        "window_open": reply_window_open(conversation),
        "billing": billing,
        "values": values,
        "kept": bool(values.get("invoice")),  # input to show again even when billing is down
        "currencies": CURRENCIES,
        "error": error,
        "notice": notice,
    }
