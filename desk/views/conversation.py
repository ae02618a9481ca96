"""A conversation: its page, the thread partial, and the actions an agent takes on it."""

from __future__ import annotations

import uuid

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from core import params
from desk import complaints, rules, services
from desk.access import access_conversation, conversation_verdict, may_supervise_desk, may_work_desk
from desk.account import account_summary
from desk.composer import TemplateComposer, template_composer, typed_values
from desk.credit_notes import credit_note_panel
from desk.forms import AssignForm, MarkWrongForm, NoteForm, ReplyForm
from desk.identify import CustomerSearch, customer_search, whatsapp_offer
from desk.media_types import size_label
from desk.models import CannedReply, Conversation, Message
from desk.reasons import reason_label
from desk.selectors import (
    conversation_escalation,
    conversation_thread,
    escalation_attachments,
    next_waiting_escalation,
    take_requests_pending,
    thread_version,
)

NEXT_TAG = "offer-next"  # a confirmation that offers the next escalation waiting


def _verdicts(user, conversation: Conversation) -> dict[str, rules.Verdict]:
    """Return, per action, what the rules say this user may do now (the page offers only what is allowed)."""
    requested = take_requests_pending(conversation=conversation)
    # reason=None: the take-over form asks a supervisor for the reason, so it is not missing yet.
    return {action.value: conversation_verdict(user, conversation, action, reason=None,
                                               already_requested=any(r.actor_id == user.pk for r in requested))
            for action in rules.Action}


def _reopen_outcome(conversation: Conversation) -> str:
    """Say what the customer's next message does to this resolved conversation (desk.inbound's reopen rule)."""
    if not settings.DESK_REOPEN_TO_HUMAN:
        return ("If the customer writes again, this conversation reopens and the bot answers them; "
                "nobody holds it any more.")
    if conversation.held_by_human and conversation.assignee_id:
        return (f"If the customer writes again, this conversation reopens for "
                f"{conversation.assignee.get_username()} to answer and the bot stays silent. It does not come "
                "back into the escalation queue.")
    return ("If the customer writes again, this conversation reopens for a person to answer, held by nobody, "
            "and the bot stays silent. It does not come back into the escalation queue.")


def _work_context(request, conversation: Conversation, *, error: str = "", composer_text: str = "",
                  with_composer: bool = True) -> dict:
    """Return what the thread and the action forms need (no trace; billing only for a template's amount)."""
    user = request.user
    can_act = may_work_desk(user)
    holding = conversation.held_by_human and conversation.assignee_id == user.pk
    context = {
        "conversation": conversation,
        "contact": conversation.contact,
        "thread": conversation_thread(conversation=conversation),
        "thread_version": thread_version(conversation=conversation),
        "can_act": can_act,
        "holding": holding,
        "held_by_other": conversation.held_by_human and conversation.assignee_id not in (None, user.pk),
        "resolved": conversation.status == Conversation.Status.RESOLVED,
        "error": error,
    }
    if can_act:
        may = _verdicts(user, conversation)
        window_open = services.reply_window_open(conversation)
        context.update(
            may=may,
            window_open=window_open,
            composer_text=composer_text,
            form_key=uuid.uuid4().hex,
            canned=(list(CannedReply.objects.filter(language=conversation.contact.language))
                    if may["reply"].allowed else []),
            assign_form=AssignForm(initial={"assignee": conversation.assignee_id or user.pk}),
            take_requests=(take_requests_pending(conversation=conversation)
                           if (holding or may["reassign"].allowed) and not context["resolved"] else []),
            reopen_outcome=_reopen_outcome(conversation) if context["resolved"] else "",
            may_supervise=may_supervise_desk(user),
            media_max=size_label(settings.DESK_MEDIA_MAX_BYTES),
        )
        if with_composer and may["reply"].allowed and not window_open and not context["resolved"]:
            context["composer"] = _template_composer(request, conversation)
    return context


def _template_composer(request, conversation: Conversation) -> TemplateComposer:
    """The template composer after the window closed: ?template= picks one; ?typed=1&v1=… keeps typed values
    (and a refused send keeps what the agent typed)."""
    source = request.POST if request.method == "POST" else request.GET
    chosen = params.integer(source.get("template"), label="The template").value
    values = typed_values(source) if source.get("typed") else None
    return template_composer(conversation=conversation, template_id=chosen, values=values)


def page_context(request, conversation: Conversation, **work) -> dict:
    context = _work_context(request, conversation, **work)
    escalation = conversation_escalation(conversation=conversation)
    context.update(
        escalation=escalation,
        escalation_files=escalation_attachments(conversation=conversation) if escalation else [],
        draft=escalation.suggested_reply if escalation and escalation.status != "resolved" else "",
    )
    if context["can_act"]:
        # Agents see the account they are answering for; analysts read the conversation, not the account.
        context["account"] = account_summary(customer_id=conversation.contact.customer_id,
                                             language=conversation.contact.language)
        context["credit"] = credit_note_panel(conversation=conversation)
        context["offer"] = _offer(conversation, context["may"])
        if not context["composer_text"]:
            context["composer_text"] = _prefill(request, context)
    return context


def _offer(conversation: Conversation, may: dict):
    """The customer billing has for this conversation's WhatsApp number, when the user may link it."""
    return whatsapp_offer(conversation.contact) if may["link"].allowed else None


def _with_next(request, context: dict) -> dict:
    """After a take over, hand back or resolve, offer the longest-waiting escalation nobody has taken."""
    if any(NEXT_TAG in m.tags for m in messages.get_messages(request)):
        context["offer_next"] = True
        waiting = next_waiting_escalation(exclude_conversation_id=context["conversation"].pk)
        context["next_escalation"] = waiting
        context["next_reason"] = reason_label(waiting.reason) if waiting else ""
    return context


def _prefill(request, context) -> str:
    """Text for the composer: ?draft=1 (the bot's draft), ?tell=<credit note> (the decision, for the customer) or
    ?canned=<id>."""
    if request.GET.get("draft") and context["draft"]:
        return context["draft"]
    tell = params.integer(request.GET.get("tell"), label="The credit note").value
    decided = next((r for r in context["credit"]["requests"] if r.pk == tell and r.tell), None) if tell else None
    if decided is not None:
        return decided.tell
    canned = params.integer(request.GET.get("canned"), label="The canned reply").value
    reply = next((c for c in context["canned"] if c.pk == canned), None)
    return reply.text if reply else ""


@login_required
@require_GET
def conversation_detail(request, conversation_id):
    """Show the thread with its events, the bot's last turn, the account and the actions the user may take."""
    conversation = access_conversation(request.user, conversation_id)
    return render(request, "desk/conversation.html", _with_next(request, page_context(request, conversation)))


@login_required
@require_GET
def conversation_thread_part(request, conversation_id):
    """Return the thread partial for polling; 204 when nothing changed since the version the page holds."""
    conversation = access_conversation(request.user, conversation_id)
    context = _work_context(request, conversation, with_composer=False)  # the thread alone, every 5 s
    if request.GET.get("v") and request.GET["v"] == context["thread_version"]:
        return HttpResponse(status=204)
    return render(request, "desk/conversation.html#thread", context)


def _after_action(request, conversation_id: int, *, error: str = "", composer_text: str = "",
                  status: int = 409):
    """Answer an action: the work area for htmx; otherwise a redirect, or the page with the error."""
    conversation = access_conversation(request.user, conversation_id, write=True)
    if request.htmx:
        context = _work_context(request, conversation, error=error, composer_text=composer_text)
        return render(request, "desk/conversation.html#work", _with_next(request, context))
    if not error:
        return redirect(reverse("desk:conversation", args=[conversation_id]))
    return render(request, "desk/conversation.html",
                  page_context(request, conversation, error=error, composer_text=composer_text),
                  status=status)


def _run(request, conversation_id: int, action, *, composer_text: str = "", done: str = "",
         offer_next: bool = False):
    """Run one service (the caller checked write access) and answer with its outcome.

    `done` confirms what happened; with `offer_next` the answer links the next escalation waiting.
    A double click (services.Unchanged) is no error: the page says the conversation is already so.
    """
    try:
        action()
    except services.Unchanged as exc:
        messages.info(request, str(exc))
        return _after_action(request, conversation_id)
    except services.DeskActionError as exc:
        return _after_action(request, conversation_id, error=str(exc), composer_text=composer_text)
    if done:
        messages.success(request, done, extra_tags=NEXT_TAG if offer_next else "")
    return _after_action(request, conversation_id)


@login_required
@require_POST
def take_over(request, conversation_id):
    """Take the conversation: it is assigned to you and the bot goes silent (a supervisor gives a reason)."""
    access_conversation(request.user, conversation_id, write=True)
    reason = params.text(request.POST.get("reason"), label="The reason", max_length=services.REASON_MAX)
    if reason.error:
        return _after_action(request, conversation_id, error=reason.error, status=400)
    return _run(request, conversation_id,
                lambda: services.conversation_take_over(conversation_id=conversation_id, agent=request.user,
                                                        reason=reason.value or ""),
                done="You have this conversation now; the bot is silent.", offer_next=True)


@login_required
@require_POST
def take_request(request, conversation_id):
    """Ask the agent who holds the conversation to give it to you."""
    access_conversation(request.user, conversation_id, write=True)
    text = params.text(request.POST.get("text"), label="The request", max_length=services.REASON_MAX)
    if text.error:
        return _after_action(request, conversation_id, error=text.error, status=400)
    return _run(request, conversation_id,
                lambda: services.take_request(conversation_id=conversation_id, agent=request.user,
                                              text=text.value or ""),
                done="Asked. The request shows in the thread for the agent who has the conversation.")


def _form_error(form: forms.Form) -> str:
    return next(iter(form.errors.values()))[0]


@login_required
@require_POST
def reply(request, conversation_id):
    """Send the agent's reply through the conversation's channel."""
    access_conversation(request.user, conversation_id, write=True)
    form = ReplyForm(request.POST)
    text = request.POST.get("text", "")
    if not form.is_valid():
        return _after_action(request, conversation_id, error=_form_error(form), composer_text=text, status=400)
    return _run(request, conversation_id, lambda: services.agent_reply_send(
        conversation_id=conversation_id, agent=request.user, text=form.cleaned_data["text"],
        form_key=form.cleaned_data["form_key"]), composer_text=text)


@login_required
@require_POST
def note(request, conversation_id):
    """Add a private note (never sent to the customer)."""
    access_conversation(request.user, conversation_id, write=True)
    form = NoteForm(request.POST)
    if not form.is_valid():
        return _after_action(request, conversation_id, error=_form_error(form), status=400)
    return _run(request, conversation_id, lambda: services.note_add(
        conversation_id=conversation_id, agent=request.user, text=form.cleaned_data["text"],
        form_key=form.cleaned_data["form_key"]))


@login_required
@require_POST
def assign(request, conversation_id):
    """Assign or reassign the conversation to an agent."""
    access_conversation(request.user, conversation_id, write=True)
    form = AssignForm(request.POST)
    if not form.is_valid():
        return _after_action(request, conversation_id, error="Pick an agent or supervisor.", status=400)
    assignee = form.cleaned_data["assignee"]
    return _run(request, conversation_id, lambda: services.conversation_assign(
        conversation_id=conversation_id, actor=request.user, assignee=assignee),
        done=f"Assigned to {assignee.get_username()}.")


@login_required
@require_POST
def hand_back(request, conversation_id):
    """Give the conversation back to the bot."""
    access_conversation(request.user, conversation_id, write=True)
    return _run(request, conversation_id,
                lambda: services.conversation_hand_back(conversation_id=conversation_id, agent=request.user),
                done="Handed back: the bot answers the customer's next message.", offer_next=True)


@login_required
@require_POST
def resolve(request, conversation_id):
    """Close the conversation and its escalations."""
    access_conversation(request.user, conversation_id, write=True)
    return _run(request, conversation_id,
                lambda: services.conversation_resolve(conversation_id=conversation_id, agent=request.user),
                done="Resolved.", offer_next=True)


@login_required
@require_POST
def reopen(request, conversation_id):
    """Open a resolved conversation again."""
    access_conversation(request.user, conversation_id, write=True)
    return _run(request, conversation_id,
                lambda: services.conversation_reopen(conversation_id=conversation_id, agent=request.user),
                done="Reopened.")


# Identify the customer ---------------------------------------------------------------------------

@login_required
@require_GET
def identify(request, conversation_id):
    """Search billing for the contact's customer by account number, cédula/RIF or phone."""
    conversation = access_conversation(request.user, conversation_id, write=True)
    query = params.text(request.GET.get("q"), label="The search", max_length=100)
    search = customer_search(query.value) if query.value and not query.error else None
    if query.error:
        search = CustomerSearch(query="", state="invalid", message=query.error)
    if request.htmx:
        may = _verdicts(request.user, conversation)
        return render(request, "desk/conversation.html#identify", {
            "conversation": conversation, "contact": conversation.contact, "search": search, "may": may,
            "offer": _offer(conversation, may)})
    context = page_context(request, conversation)
    context["search"] = search
    return render(request, "desk/conversation.html", context, status=400 if query.error else 200)


@login_required
@require_POST
def customer_link(request, conversation_id):
    """Link the contact to the billing customer picked from the search."""
    access_conversation(request.user, conversation_id, write=True)
    customer_id = params.text(request.POST.get("customer_id"), label="The customer", max_length=64)
    query = params.text(request.POST.get("q"), label="The search", max_length=100)
    via_whatsapp = request.POST.get("via") == "whatsapp"
    problem = customer_id.error or query.error or ("" if customer_id.value else "Pick a customer to link.")
    if problem:
        return _after_action(request, conversation_id, error=problem, status=400)
    return _run(request, conversation_id, lambda: services.contact_customer_link(
        conversation_id=conversation_id, agent=request.user, customer_id=customer_id.value,
        query=query.value or "", via_whatsapp=via_whatsapp),
        done=f"Linked to billing customer {customer_id.value}. The account panel, credit notes and the bot "
             "now use this customer.")


@login_required
@require_POST
def customer_unlink(request, conversation_id):
    """Unlink the contact from its billing customer."""
    access_conversation(request.user, conversation_id, write=True)
    return _run(request, conversation_id, lambda: services.contact_customer_unlink(
        conversation_id=conversation_id, agent=request.user),
        done="Unlinked: the contact is not identified until someone links a customer again.")


@login_required
@require_POST
def mark_wrong(request, conversation_id, message_id):
    """Mark one of the bot's answers in this conversation as verified wrong, with a reason."""
    access_conversation(request.user, conversation_id, write=True)
    get_object_or_404(Message, pk=message_id, conversation_id=conversation_id)
    form = MarkWrongForm(request.POST)
    if not form.is_valid():
        return _after_action(request, conversation_id, error="Say in a few words what is wrong.", status=400)
    return _run(request, conversation_id, lambda: services.message_mark_wrong(
        message_id=message_id, agent=request.user, reason=form.cleaned_data["reason"]))


@login_required
@require_POST
def complaint_mark(request, conversation_id, message_id):
    """Record that the customer complained about one of the bot's answers in this conversation (idempotent)."""
    access_conversation(request.user, conversation_id, write=True)
    get_object_or_404(Message, pk=message_id, conversation_id=conversation_id)
    return _run(request, conversation_id,
                lambda: complaints.complaint_mark(message_id=message_id, agent=request.user))


@login_required
@require_POST
def complaint_unmark(request, conversation_id, message_id):
    """Take back an agent's complaint mark on one of the bot's answers."""
    access_conversation(request.user, conversation_id, write=True)
    get_object_or_404(Message, pk=message_id, conversation_id=conversation_id)
    return _run(request, conversation_id,
                lambda: complaints.complaint_unmark(message_id=message_id, agent=request.user))
