"""Desk pages: the web chat, the escalation queue, a conversation with its actions."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from core import params
from desk import chat as webchat
from desk import complaints, services
from desk.access import access_conversation, may_work_desk
from desk.credit_notes import credit_note_panel
from desk.forms import AssignForm, MarkWrongForm, NoteForm, QueueFilterForm, ReplyForm
from desk.models import CannedReply, Conversation, Message
from desk.selectors import (
    QueueCursor,
    QueueFilters,
    account_summary,
    conversation_escalation,
    conversation_thread,
    escalation_counts,
    escalation_queue,
    thread_version,
    wait_level,
    wait_thresholds,
)

QUEUE_PAGE_SIZE = 50


CHAT_LANGUAGES = ("es", "en")
CHAT_MESSAGE_MAX = 4000  # what a visitor may type; longer is refused (the inbound path itself cuts at 4,096)


def chat(request):
    """Web chat for demos and tests: pick a simulator customer and talk to the bot through the real pipeline."""
    conversation = webchat.current_conversation(request)
    error = ""
    if request.method == "POST":
        if "customer_id" in request.POST:
            customer_id = params.text(request.POST["customer_id"], label="The customer", max_length=64)
            language = params.choice(request.POST.get("language"), CHAT_LANGUAGES, label="The language",
                                     default="es")
            webchat.chat_start(request=request, customer_id=customer_id.or_bad_request(),
                               language=language.or_bad_request())
            return redirect("desk:chat")
        text = params.text(request.POST.get("text"), label="The message", max_length=CHAT_MESSAGE_MAX)
        error = text.error
        if conversation is not None and text.value and not error:
            webchat.chat_message_receive(conversation=conversation, text=text.value)
        if request.htmx:
            return render(request, "desk/chat.html#thread", {"conversation": conversation, "error": error,
                                                             "messages": webchat.thread(conversation)})
        if not error:
            return redirect("desk:chat")
    template = "desk/chat.html#thread" if request.htmx and conversation else "desk/chat.html"
    return render(request, template, {
        "conversation": conversation, "error": error,
        "messages": webchat.thread(conversation) if conversation else [],
        "customers": [] if conversation else webchat.demo_customers(),
    }, status=400 if error else 200)


@require_POST
def chat_reset(request):
    """Forget the visitor's conversation and pick another customer."""
    request.session.pop(webchat.SESSION_KEY, None)
    return redirect("desk:chat")


# The escalation queue ----------------------------------------------------------------------------

def _waited_label(waited: timedelta) -> str:
    minutes = max(0, int(waited.total_seconds() // 60))
    if minutes < 60:
        return f"{minutes} min"
    if minutes < 60 * 48:
        return f"{minutes // 60} h {minutes % 60:02d} min"
    return f"{minutes // (60 * 24)} days"


@login_required
@require_GET
def queue(request):
    """List open and taken escalations with their reason, summary, last customer message and waiting time."""
    if not may_work_desk(request.user):
        raise PermissionDenied("Only agents and supervisors work the queue.")
    form = QueueFilterForm(request.GET or None)
    filters = form.filters() if form.is_bound else QueueFilters()
    after = QueueCursor.decode(request.GET.get("after"))
    now = timezone.now()
    page = list(escalation_queue(agent=request.user, filters=filters, after=after, limit=QUEUE_PAGE_SIZE + 1,
                                 now=now))
    older = None
    if len(page) > QUEUE_PAGE_SIZE:
        page = page[:QUEUE_PAGE_SIZE]
        query = request.GET.copy()
        query["after"] = QueueCursor.of(page[-1]).encode()
        older = query.urlencode()
    amber, red = wait_thresholds()
    rows = []
    for escalation in page:
        waited = now - escalation.created_at
        # A taken escalation has someone on it: only the ones nobody holds turn amber or red.
        level = "" if escalation.status != "open" else wait_level(waited, amber_minutes=amber,
                                                                  red_minutes=red)
        rows.append({"escalation": escalation, "conversation": escalation.conversation,
                     "waited": _waited_label(waited), "level": level})
    counts = escalation_counts()
    context = {
        "form": form, "filters": filters, "rows": rows, "older_query": older, "paged": after is not None,
        "counts": counts, "counts_total": sum(c["total"] for c in counts),
        "amber_minutes": amber, "red_minutes": red,
    }
    template = "desk/queue.html#rows" if request.htmx else "desk/queue.html"
    return render(request, template, context)


# A conversation ----------------------------------------------------------------------------------

def _work_context(request, conversation: Conversation, *, error: str = "", composer_text: str = "") -> dict:
    """Return what the thread and the action forms need (no billing call, no trace)."""
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
        "error": error,
    }
    if can_act:
        window_open = services.reply_window_open(conversation)
        context.update(
            window_open=window_open,
            composer_text=composer_text,
            canned=(list(CannedReply.objects.filter(language=conversation.contact.language))
                    if holding else []),
            assign_form=AssignForm(initial={"assignee": conversation.assignee_id or user.pk}),
        )
    return context


def _page_context(request, conversation: Conversation, **work) -> dict:
    context = _work_context(request, conversation, **work)
    escalation = conversation_escalation(conversation=conversation)
    context.update(
        escalation=escalation,
        draft=escalation.suggested_reply if escalation and escalation.status != "resolved" else "",
    )
    if context["can_act"]:
        # Agents see the account they are answering for; analysts read the conversation, not the account.
        context["account"] = account_summary(customer_id=conversation.contact.customer_id,
                                             language=conversation.contact.language)
        context["credit"] = credit_note_panel(conversation=conversation)
        if not context["composer_text"]:
            context["composer_text"] = _prefill(request, context)
    return context


def _prefill(request, context) -> str:
    """Text for the composer when JavaScript is off: ?draft=1 (the bot's draft) or ?canned=<id>."""
    if request.GET.get("draft") and context["draft"]:
        return context["draft"]
    canned = params.integer(request.GET.get("canned"), label="The canned reply").value
    reply = next((c for c in context["canned"] if c.pk == canned), None)
    return reply.text if reply else ""


@login_required
@require_GET
def conversation_detail(request, conversation_id):
    """Show the thread with its events, the bot's last turn, the account and the actions the user may take."""
    conversation = access_conversation(request.user, conversation_id)
    return render(request, "desk/conversation.html", _page_context(request, conversation))


@login_required
@require_GET
def conversation_thread_part(request, conversation_id):
    """Return the thread partial for polling; 204 when nothing changed since the version the page holds."""
    conversation = access_conversation(request.user, conversation_id)
    context = _work_context(request, conversation)
    if request.GET.get("v") and request.GET["v"] == context["thread_version"]:
        return HttpResponse(status=204)
    return render(request, "desk/conversation.html#thread", context)


def _after_action(request, conversation_id: int, *, error: str = "", composer_text: str = "",
                  status: int = 409):
    """Answer an action: the work area for htmx; otherwise a redirect, or the page with the error."""
    conversation = access_conversation(request.user, conversation_id, write=True)
    if request.htmx:
        return render(request, "desk/conversation.html#work",
                      _work_context(request, conversation, error=error, composer_text=composer_text))
    if not error:
        return redirect(reverse("desk:conversation", args=[conversation_id]))
    return render(request, "desk/conversation.html",
                  _page_context(request, conversation, error=error, composer_text=composer_text),
                  status=status)


def _run(request, conversation_id: int, action, *, composer_text: str = ""):
    """Run one service (the caller checked write access) and answer with its outcome."""
    try:
        action()
    except services.AlreadyTaken as exc:
        holder = exc.holder.get_username()
        return _after_action(request, conversation_id, error=f"{holder} has this conversation.")
    except services.DeskActionError as exc:
        return _after_action(request, conversation_id, error=str(exc), composer_text=composer_text)
    return _after_action(request, conversation_id)


@login_required
@require_POST
def take_over(request, conversation_id):
    """Take the conversation: it is assigned to you and the bot goes silent."""
    access_conversation(request.user, conversation_id, write=True)
    return _run(request, conversation_id,
                lambda: services.conversation_take_over(conversation_id=conversation_id, agent=request.user))


@login_required
@require_POST
def reply(request, conversation_id):
    """Send the agent's reply through the conversation's channel."""
    access_conversation(request.user, conversation_id, write=True)
    form = ReplyForm(request.POST)
    text = request.POST.get("text", "")
    if not form.is_valid():
        return _after_action(request, conversation_id, error="Write a reply of at most 4096 characters.",
                             composer_text=text, status=400)
    return _run(request, conversation_id, lambda: services.agent_reply_send(
        conversation_id=conversation_id, agent=request.user, text=form.cleaned_data["text"]),
        composer_text=text)


@login_required
@require_POST
def note(request, conversation_id):
    """Add a private note (never sent to the customer)."""
    access_conversation(request.user, conversation_id, write=True)
    form = NoteForm(request.POST)
    if not form.is_valid():
        return _after_action(request, conversation_id, error="Write a note of at most 4000 characters.",
                             status=400)
    return _run(request, conversation_id, lambda: services.note_add(
        conversation_id=conversation_id, agent=request.user, text=form.cleaned_data["text"]))


@login_required
@require_POST
def assign(request, conversation_id):
    """Assign or reassign the conversation to an agent."""
    access_conversation(request.user, conversation_id, write=True)
    form = AssignForm(request.POST)
    if not form.is_valid():
        return _after_action(request, conversation_id, error="Pick an agent or supervisor.", status=400)
    return _run(request, conversation_id, lambda: services.conversation_assign(
        conversation_id=conversation_id, actor=request.user, assignee=form.cleaned_data["assignee"]))


@login_required
@require_POST
def hand_back(request, conversation_id):
    """Give the conversation back to the bot."""
    access_conversation(request.user, conversation_id, write=True)
    return _run(request, conversation_id,
                lambda: services.conversation_hand_back(conversation_id=conversation_id, agent=request.user))


@login_required
@require_POST
def resolve(request, conversation_id):
    """Close the conversation and its escalations."""
    access_conversation(request.user, conversation_id, write=True)
    return _run(request, conversation_id,
                lambda: services.conversation_resolve(conversation_id=conversation_id, agent=request.user))


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
