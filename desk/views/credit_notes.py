"""Credit-note pages: the proposal form on a conversation, and the supervisors' approval list."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from desk import credit_notes as cn
from desk.access import access_conversation, require_desk_worker
from desk.models import Conversation, CreditNoteRequest
from desk.views.conversation import page_context


class CreditNoteProposeForm(forms.Form):
    """Shape only: whether invoice, currency and amount are right is for the service (it asks billing)."""

    invoice = forms.CharField(max_length=32)
    amount = forms.CharField(max_length=20)
    # The invoice's currency when left out (the form does not offer a choice: a credit note is in its
    # invoice's currency); a different one sent anyway is refused by the service.
    currency = forms.ChoiceField(choices=[("", "")] + [(c, c) for c in cn.CURRENCIES], required=False)
    reason = forms.CharField(max_length=cn.REASON_MAX)


class CreditNoteRejectForm(forms.Form):
    note = forms.CharField(max_length=2000, required=False)


# The panel on a conversation ---------------------------------------------------------------------


def _panel_answer(request, conversation: Conversation, *, values=None, error="", notice="", status=200):
    """Answer a proposal: the panel for htmx; otherwise a redirect, or the whole page with the error."""
    if request.htmx:
        panel = cn.credit_note_panel(conversation=conversation, values=values, error=error, notice=notice)
        return render(request, "desk/conversation.html#credit_notes",
                      {"conversation": conversation, "contact": conversation.contact, "credit": panel})
    if not error:
        messages.success(request, notice)
        return redirect(reverse("desk:conversation", args=[conversation.pk]) + "#credit-notes")
    context = page_context(request, conversation)  # builds the panel once (one billing call)
    context["credit"].update(values=values or {}, kept=bool((values or {}).get("invoice")), error=error)
    return render(request, "desk/conversation.html", context, status=status)


@login_required
@require_POST
def credit_note_propose(request, conversation_id):
    """Propose a credit note on one of the customer's invoices; a supervisor approves it."""
    conversation = access_conversation(request.user, conversation_id, write=True)
    form = CreditNoteProposeForm(request.POST)
    values = {name: request.POST.get(name, "") for name in form.fields}
    if not form.is_valid():
        return _panel_answer(request, conversation, values=values, status=400,
                             error="Pick an invoice, write the amount (e.g. 5.00) and the reason (at most "
                                   f"{cn.REASON_MAX} characters).")
    data = form.cleaned_data
    try:
        proposal = cn.credit_note_propose(conversation=conversation, agent=request.user,
                                          invoice_id=data["invoice"], amount=data["amount"],
                                          currency=data["currency"], reason=data["reason"])
    except cn.BillingUnavailable as exc:
        return _panel_answer(request, conversation, values=values, error=str(exc), status=503)
    except cn.HeldByAnother as exc:  # the holder rules' 409, as every other action on a held conversation
        return _panel_answer(request, conversation, values=values, error=str(exc), status=409)
    except cn.CreditNoteError as exc:
        return _panel_answer(request, conversation, values=values, error=str(exc), status=400)
    return _panel_answer(request, conversation, notice=cn.proposal_notice(proposal))


# The approvers' page -----------------------------------------------------------------------------

def _lists_context(user, *, error: str = "", notice: str = "") -> dict:
    approver = cn.may_approve_credit_notes(user)
    return {
        "approver": approver,
        "pending": list(cn.credit_notes_pending()) if approver else [],
        "decided": list(cn.credit_notes_decided()) if approver else [],
        "mine": list(cn.credit_notes_proposed_by(user=user)),
        "error": error,
        "notice": notice,
    }


@login_required
@require_GET
def credit_notes(request):
    """Supervisors: the credit notes waiting for approval (oldest first, with the invoice's context), then
    the recently decided ones. Everyone who works the desk: the ones they proposed, with the decision."""
    require_desk_worker(request.user, "Only agents and supervisors work with credit notes.")
    template = "desk/credit_notes.html#lists" if request.htmx else "desk/credit_notes.html"
    return render(request, template, _lists_context(request.user))


def _decide(request, request_id: int, action, done) -> object:
    """Check the permission, run one decision, answer with the lists (htmx) or a redirect."""
    proposal = cn.access_credit_note(request.user, request_id)
    try:
        proposal = action(proposal)
    except cn.CreditNoteError as exc:
        if request.htmx:
            return render(request, "desk/credit_notes.html#lists", _lists_context(request.user, error=str(exc)))
        return render(request, "desk/credit_notes.html", _lists_context(request.user, error=str(exc)),
                      status=409)
    proposal.refresh_from_db()  # the send ran after the decision committed
    notice = done(proposal)
    if request.htmx:
        return render(request, "desk/credit_notes.html#lists", _lists_context(request.user, notice=notice))
    messages.success(request, notice)
    return redirect("desk:credit_notes")


def _send_outcome(proposal: CreditNoteRequest) -> str:
    if proposal.status == CreditNoteRequest.Status.SENT:
        return (f"Credit note {proposal.billing_credit_note_id} of {proposal.amount:.2f} {proposal.currency} "
                f"on {proposal.invoice_id} sent to billing ({proposal.billing_status}).")
    if proposal.status == CreditNoteRequest.Status.FAILED:
        return f"Approved, but billing did not take it: {proposal.error}. Retry when billing is back."
    return "Approved; sending to billing."


@login_required
@require_POST
def credit_note_approve(request, request_id):
    """Approve a pending credit note and send it to billing."""
    return _decide(request, request_id,
                   lambda proposal: cn.credit_note_approve(request=proposal, supervisor=request.user),
                   _send_outcome)


@login_required
@require_POST
def credit_note_reject(request, request_id):
    """Reject a pending credit note with a note."""
    form = CreditNoteRejectForm(request.POST)

    def reject(proposal):
        if not form.is_valid():  # a NUL character or a note too long: say so rather than drop the note
            raise cn.CreditNoteError("Write the note as plain text of at most 2000 characters.")
        return cn.credit_note_reject(request=proposal, supervisor=request.user, note=form.cleaned_data["note"])

    return _decide(request, request_id, reject, lambda proposal: f"Credit note on {proposal.invoice_id} rejected.")


@login_required
@require_POST
def credit_note_retry(request, request_id):
    """Send a failed credit note again with the same Idempotency-Key."""
    return _decide(request, request_id,
                   lambda proposal: cn.credit_note_send_retry(request=proposal, supervisor=request.user),
                   _send_outcome)
