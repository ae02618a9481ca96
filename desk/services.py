"""Writes on conversations: bot replies behind the state gate, escalations, agent actions, delivery.

Inbound messages of every channel are stored by desk.inbound.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from functools import partial

from django.db import InterfaceError, OperationalError, connection, transaction
from kombu.exceptions import OperationalError as BrokerError

from core import clock
from core.tasks import task_queue
from desk import rules
from desk.access import conversation_verdict, require_desk_worker
from desk.capacity import assignment_queue_on_commit
from desk.identify import customer_search, customer_search_whatsapp
from desk.media import CheckedUpload, attachment_bytes, attachment_store_outgoing
from desk.models import Attachment, Contact, Conversation, Escalation, Event, Message, MessageTemplate
from desk.satisfaction import satisfaction_ask
from desk.selectors import take_requests_pending
from desk.senders import OutgoingFile, RecordingSender, get_sender
from desk.template_text import language_matches, parameter_problem, template_render, template_variables

logger = logging.getLogger(__name__)


def _deliver_on_commit(message: Message) -> None:
    transaction.on_commit(partial(_delivery_queue, message.pk))


def _delivery_queue(message_id: int) -> None:
    """Queue a recorded message's delivery (after commit). Unreachable broker: desk.delivery's sweep sends it."""
    try:
        task_queue("desk.deliver_outbound", message_id)
    except BrokerError:
        logger.exception("Could not queue the delivery of message %s: the broker is unreachable; the sweep "
                         "sends it once the broker is back", message_id)


@transaction.atomic
def bot_reply_record(*, conversation_id: int, text: str) -> Message | None:
    """Record the bot's reply for sending, unless a human holds the conversation (then return None).

    The state gate is re-checked here under SELECT … FOR UPDATE on the conversation: a take-over
    commits either before this (nothing is recorded) or after it (the reply was already decided).
    """
    conversation = Conversation.objects.select_for_update().get(pk=conversation_id)
    if conversation.held_by_human:
        return None
    message = Message.objects.create(
        conversation=conversation,
        direction=Message.Direction.OUTBOUND,
        author=Message.Author.BOT,
        text=text,
        status=Message.Status.QUEUED,
    )
    _deliver_on_commit(message)
    return message


@transaction.atomic
def conversation_escalate(
    *,
    conversation_id: int,
    reason: str,
    summary: str,
    detail: str = "",
    suggested_reply: str = "",
    notice: str = "",
    internal_note: str = "",
) -> Escalation:
    """Hand the conversation to the humans with a reason, and tell the customer once that a person will answer.

    `internal_note` is what the bot knew (root cause, evidence, formulas, doubts); the agent reads it on the card.
    """
    conversation = Conversation.objects.select_for_update().get(pk=conversation_id)
    already_waiting = conversation.escalations.filter(
        status__in=[Escalation.Status.OPEN, Escalation.Status.TAKEN]
    ).exists()
    conversation.handler = Conversation.Handler.HUMAN
    conversation.status = Conversation.Status.OPEN
    conversation.save(update_fields=["handler", "status", "updated_at"])
    escalation = Escalation.objects.create(
        conversation=conversation, reason=reason, summary=summary, detail=detail,
        suggested_reply=suggested_reply, internal_note=internal_note,
    )
    Event.objects.create(conversation=conversation, kind="escalated", detail={"reason": reason,
                                                                             "escalation": escalation.pk})
    if notice and not already_waiting:
        message = Message.objects.create(
            conversation=conversation, direction=Message.Direction.OUTBOUND, author=Message.Author.BOT,
            kind="text", text=notice, status=Message.Status.QUEUED, payload={"escalation_notice": True},
        )
        _deliver_on_commit(message)
    assignment_queue_on_commit()  # an available agent with room gets it
    return escalation


# How many times a send's result is written before giving up, and the pause before the first retry (doubled each
# time): a database restart cuts every connection for a moment, and the customer already has the reply.
SEND_RECORD_ATTEMPTS = 5
SEND_RECORD_PAUSE_S = 0.5


def outbound_deliver(*, message_id: int, sleep=time.sleep) -> Message | None:
    """Send a queued outbound message through its channel's sender and record the result.

    The claim is committed before the send: the message is `sending` under its row lock, so two deliveries of one
    message (a redelivered task, the sweep's) send it once — the second finds it locked (returns None), sending or
    sent. The send runs outside any transaction, and its result is written again after a database error (a restart
    between the send and the write would otherwise roll the claim back and a redelivery would send the reply a
    second time). A message left `sending` (the process died between the claim and the result) is never sent again
    blindly: desk.delivery marks it failed for an agent to check.
    """
    with transaction.atomic():
        message = (Message.objects.select_for_update(of=("self",), skip_locked=True)
                   .select_related("conversation__contact").filter(pk=message_id).first())
        if message is None:
            return None  # another delivery holds it now (or it is gone)
        if message.status != Message.Status.QUEUED:
            return message  # sending or already sent (a redelivered task must not send twice)
        file = _outgoing_file(message)  # read before the claim: nothing between the claim and the send may fail
        message.status, message.status_at = Message.Status.SENDING, clock.now()
        message.save(update_fields=["status", "status_at"])
    conversation = message.conversation
    sender = get_sender() if conversation.channel == "whatsapp" else RecordingSender()
    result = _send(sender, message, file, to=conversation.contact.wa_id, user_id=conversation.contact.user_id)
    message.provider_message_id = result.provider_message_id or None
    message.status = Message.Status.SENT if result.ok else Message.Status.FAILED
    message.error = "" if result.ok else (result.error or "send failed")
    message.status_at = clock.now()
    for attempt in range(SEND_RECORD_ATTEMPTS):
        try:
            with transaction.atomic():
                message.save(update_fields=["provider_message_id", "status", "error", "status_at"])
                if not result.ok:
                    Event.objects.create(conversation=conversation, kind="send_failed",
                                         detail={"message_id": message.pk, "error": message.error})
            return message
        except (OperationalError, InterfaceError):
            if attempt == SEND_RECORD_ATTEMPTS - 1 or connection.in_atomic_block:
                logger.exception("Message %s was %s but its result could not be recorded", message.pk,
                                 "sent" if result.ok else "refused")
                return message
            connection.close()  # the next query opens a new connection
            sleep(SEND_RECORD_PAUSE_S * 2 ** attempt)
    return message


def _outgoing_file(message: Message) -> OutgoingFile | None:
    """The stored file an image or document message carries, read whole (None for every other message)."""
    if message.kind not in ("image", "document"):
        return None
    attachment = Attachment.objects.filter(message=message, state=Attachment.State.STORED).first()
    if attachment is None:
        return None
    return OutgoingFile(content=attachment_bytes(attachment), mime=attachment.content_type,
                        filename=attachment.filename, kind=message.kind, caption=message.text)


def _send(sender, message: Message, file: OutgoingFile | None, *, to: str, user_id: str):
    """Send one recorded message as what it is: a template, an interactive question, a file, or text.

    No database query here: the send runs after the claim is committed, and a query failing in between (a
    restart) would leave the message claimed and never sent.
    """
    payload = message.payload if isinstance(message.payload, dict) else {}
    if message.kind == "template" and isinstance(payload.get("template"), dict):
        template = payload["template"]
        return sender.send_template(to=to, user_id=user_id, name=template["name"], language=template["language"],
                                    parameters=list(template.get("parameters") or []))
    if message.kind == "interactive" and isinstance(payload.get("interactive"), dict):
        return sender.send_interactive(to=to, user_id=user_id, interactive=payload["interactive"])
    if file is not None:
        return sender.send_file(to=to, user_id=user_id, file=file)
    return sender.send_text(to=to, user_id=user_id, text=message.text)


# ---------------------------------------------------------------------------------------------
# Agent actions. Each checks permission and the desk's rules (desk.rules) under the conversation's
# row lock, changes state, and writes an Event.
# ---------------------------------------------------------------------------------------------

class DeskActionError(Exception):
    """An action that cannot be done in the conversation's current state; the message says why."""


class AlreadyTaken(DeskActionError):
    """Someone else holds the conversation, and the actor may not take it from them."""

    def __init__(self, holder, message: str = ""):
        super().__init__(message or f"{holder.get_username()} already has this conversation.")
        self.holder = holder


class Unchanged(DeskActionError):
    """The conversation is already as the action would leave it (a double click): nothing was done."""


WHATSAPP_WINDOW_HOURS = 24
REPLY_MAX = 4096  # WhatsApp's own limit
NOTE_MAX = 4000
REASON_MAX = 300


def _locked(conversation_id: int) -> Conversation:
    # No select_related("assignee"): a row that waited for the lock is re-read at its newest version, but a
    # joined row is not — a concurrent take-over would read as assignee_id set and assignee None. The
    # holder is loaded after the lock instead.
    return Conversation.objects.select_for_update().get(pk=conversation_id)


def _event(conversation, actor, kind, **detail) -> Event:
    return Event.objects.create(conversation=conversation, actor=actor, kind=kind, detail=detail)


def _allow(action: rules.Action, user, conversation: Conversation, **facts) -> None:
    """Raise unless the rules let the user do the action now: DeskActionError (refused) or Unchanged.

    Call while holding SELECT … FOR UPDATE on the conversation, so the verdict stays true until commit.
    """
    verdict = conversation_verdict(user, conversation, action, **facts)
    if verdict.outcome == rules.Outcome.ALREADY:
        raise Unchanged(verdict.message)
    if verdict.outcome == rules.Outcome.REFUSE:
        if action == rules.Action.TAKE_OVER and conversation.assignee is not None:
            raise AlreadyTaken(conversation.assignee, verdict.message)
        raise DeskActionError(verdict.message)


def _form_key_used(queryset, field: str, form_key: str) -> bool:
    """Whether a row made from the same rendered form exists (a double-clicked button posts its key twice)."""
    return bool(form_key) and queryset.filter(**{f"{field}__form_key": form_key}).exists()


@transaction.atomic
def conversation_take_over(*, conversation_id: int, agent, reason: str = "") -> Conversation:
    """Assign the conversation to the agent and silence the bot.

    A second agent is told who has it (AlreadyTaken); a supervisor takes it from the holder with a
    `reason`, recorded in the event. The holder's own second click raises Unchanged.
    """
    require_desk_worker(agent)
    conversation = _locked(conversation_id)
    reason = " ".join((reason or "").split())[:REASON_MAX]
    _allow(rules.Action.TAKE_OVER, agent, conversation, reason=reason)
    previous = conversation.assignee if conversation.held_by_human else None
    conversation.handler = Conversation.Handler.HUMAN
    conversation.assignee = agent
    conversation.status = Conversation.Status.OPEN
    # A clarifying question the bot asked is a person's business now: the customer's next words answer the
    # agent, not a menu the bot offered before (and after a hand back they start afresh).
    conversation.pending_clarification = {}
    conversation.save(update_fields=["handler", "assignee", "status", "pending_clarification", "updated_at"])
    conversation.escalations.filter(status=Escalation.Status.OPEN).update(status=Escalation.Status.TAKEN)
    if previous is not None:
        _event(conversation, agent, "taken_over", agent=agent.get_username(), previous=previous.get_username(),
               reason=reason)
    else:
        _event(conversation, agent, "taken_over", agent=agent.get_username())
    return conversation


@transaction.atomic
def take_request(*, conversation_id: int, agent, text: str = "") -> Event:
    """Ask the agent who holds the conversation to give it to you; the request shows in their thread."""
    require_desk_worker(agent)
    conversation = _locked(conversation_id)
    asked = any(ask.actor_id == agent.pk for ask in take_requests_pending(conversation=conversation))
    _allow(rules.Action.REQUEST, agent, conversation, already_requested=asked)
    return _event(conversation, agent, "take_requested", holder=conversation.assignee.get_username(),
                  text=" ".join((text or "").split())[:REASON_MAX])


def reply_window_open(conversation, *, now=None) -> bool:
    """WhatsApp accepts free text only within 24 hours of the customer's last message."""
    if conversation.channel != "whatsapp":
        return True
    if conversation.last_inbound_at is None:
        return False
    now = now or clock.now()
    return now - conversation.last_inbound_at <= timedelta(hours=WHATSAPP_WINDOW_HOURS)


@transaction.atomic
def agent_reply_send(*, conversation_id: int, agent, text: str, now=None, form_key: str = "") -> Message:
    """Send the agent's reply through the conversation's channel (the holder's, or a supervisor's).

    `form_key` comes from the rendered composer: the same form posted twice sends once (Unchanged).
    """
    require_desk_worker(agent)
    text = (text or "").strip()
    if not text:
        raise DeskActionError("Write something to send.")
    conversation = _open_to_send(conversation_id, agent, form_key=form_key, now=now, what="reply",
                                 instead="free text")
    message = Message.objects.create(
        conversation=conversation, direction=Message.Direction.OUTBOUND, author=Message.Author.AGENT,
        agent=agent, text=text[:REPLY_MAX], status=Message.Status.QUEUED,
        payload={"form_key": form_key} if form_key else {},
    )
    conversation.last_agent_reply_at = message.created_at
    conversation.save(update_fields=["last_agent_reply_at"])
    _deliver_on_commit(message)
    return message


@transaction.atomic
def agent_template_send(*, conversation_id: int, agent, template_id: int, values: list[str],
                        form_key: str = "") -> Message:
    """Send an approved WhatsApp template with the agent's values for its variables (inside or after the window).

    Recorded as a `template` message whose text is the body as the customer reads it; delivered through the
    same outbox as text (desk.deliver_outbound, retries, the sweep).
    """
    require_desk_worker(agent)
    conversation = _locked(conversation_id)
    if _form_key_used(conversation.messages.filter(agent=agent), "payload", form_key):
        raise Unchanged("This template was sent already.")
    _allow(rules.Action.REPLY, agent, conversation)
    template = MessageTemplate.objects.filter(pk=template_id).first()
    if template is None:
        raise DeskActionError("Pick a template to send.")
    if template.status != MessageTemplate.Status.APPROVED:
        raise DeskActionError(f"“{template.name}” is {template.get_status_display().lower()} in WhatsApp, not "
                              "approved: only an approved template can be sent.")
    if not language_matches(template.language, conversation.contact.language):
        raise DeskActionError(f"“{template.name}” is in {template.language}; the customer's language is "
                              f"{conversation.contact.language}.")
    numbers = template_variables(template.body)
    values = [" ".join((value or "").split(" ")).strip() for value in values]
    if len(values) != len(numbers):
        raise DeskActionError(f"“{template.name}” has {len(numbers)} variables; {len(values)} values were given.")
    for number, value in zip(numbers, values, strict=True):
        problem = parameter_problem(number, value)
        if problem:
            raise DeskActionError(problem)
    text = template_render(template.body, dict(zip(numbers, values, strict=True)))
    payload = {"template": {"id": template.pk, "name": template.name, "language": template.language,
                            "parameters": values}}
    if form_key:
        payload["form_key"] = form_key
    message = Message.objects.create(
        conversation=conversation, direction=Message.Direction.OUTBOUND, author=Message.Author.AGENT, agent=agent,
        kind="template", text=text[:REPLY_MAX], status=Message.Status.QUEUED, payload=payload)
    conversation.last_agent_reply_at = message.created_at
    conversation.save(update_fields=["last_agent_reply_at"])
    _deliver_on_commit(message)
    return message


def _open_to_send(conversation_id: int, agent, *, form_key: str, now, what: str, instead: str) -> Conversation:
    """Lock the conversation for an agent's message: refuse a resent form, an agent the rules do not let reply, and
    free text or a file once WhatsApp's 24-hour window has closed."""
    conversation = _locked(conversation_id)
    if _form_key_used(conversation.messages.filter(agent=agent), "payload", form_key):
        raise Unchanged(f"This {what} was sent already.")
    _allow(rules.Action.REPLY, agent, conversation)
    if not reply_window_open(conversation, now=now):
        raise DeskActionError("The customer's last message is more than 24 hours old: WhatsApp only delivers "
                              f"an approved template now, not {instead}.")
    return conversation


@transaction.atomic
def agent_file_send(*, conversation_id: int, agent, upload: CheckedUpload, caption: str = "", now=None,
                    form_key: str = "") -> Message:
    """Send the agent's image or PDF (checked by desk.media.upload_check) with an optional caption."""
    require_desk_worker(agent)
    conversation = _open_to_send(conversation_id, agent, form_key=form_key, now=now, what="file", instead="a file")
    payload = {"filename": upload.filename}
    if form_key:
        payload["form_key"] = form_key
    message = Message.objects.create(
        conversation=conversation, direction=Message.Direction.OUTBOUND, author=Message.Author.AGENT, agent=agent,
        kind=upload.kind, text=(caption or "").strip()[:1024], status=Message.Status.QUEUED, payload=payload)
    attachment_store_outgoing(message=message, upload=upload)
    conversation.last_agent_reply_at = message.created_at
    conversation.save(update_fields=["last_agent_reply_at"])
    _deliver_on_commit(message)
    return message


@transaction.atomic
def note_add(*, conversation_id: int, agent, text: str, form_key: str = "") -> Event:
    """Add a private note to the thread; it is never sent to the customer. Anyone working the desk may."""
    require_desk_worker(agent)
    text = (text or "").strip()
    if not text:
        raise DeskActionError("Write something in the note.")
    conversation = _locked(conversation_id)
    if _form_key_used(conversation.events.filter(actor=agent, kind="note"), "detail", form_key):
        raise Unchanged("This note was added already.")
    _allow(rules.Action.NOTE, agent, conversation)
    detail = {"text": text[:NOTE_MAX]}
    if form_key:
        detail["form_key"] = form_key
    return _event(conversation, agent, "note", **detail)


@transaction.atomic
def conversation_assign(*, conversation_id: int, actor, assignee) -> Conversation:
    """Assign or reassign the conversation to an agent: it is theirs, and the bot is silent."""
    require_desk_worker(actor)
    require_desk_worker(assignee, "Assign conversations to agents or supervisors only.")
    conversation = _locked(conversation_id)
    _allow(rules.Action.REASSIGN, actor, conversation, assignee_id=assignee.pk)
    conversation.assignee = assignee
    conversation.handler = Conversation.Handler.HUMAN
    conversation.save(update_fields=["assignee", "handler", "updated_at"])
    conversation.escalations.filter(status=Escalation.Status.OPEN).update(status=Escalation.Status.TAKEN)
    _event(conversation, actor, "assigned", assignee=assignee.get_username())
    assignment_queue_on_commit()  # the previous holder has room again
    return conversation


def _close_escalations(conversation) -> None:
    # How it ended is the thread's event (resolved, handed back), never a marker in the bot's detail: the
    # detail says what the customer wrote and what the bot found, and is shown as such.
    conversation.escalations.filter(status__in=[Escalation.Status.OPEN, Escalation.Status.TAKEN]).update(
        status=Escalation.Status.RESOLVED, resolved_at=clock.now())


@transaction.atomic
def conversation_hand_back(*, conversation_id: int, agent) -> Conversation:
    """Give the conversation back to the bot: it answers the next inbound message again."""
    require_desk_worker(agent)
    conversation = _locked(conversation_id)
    _allow(rules.Action.HAND_BACK, agent, conversation)
    conversation.handler = Conversation.Handler.BOT
    conversation.assignee = None
    conversation.pending_clarification = {}  # asked before a person took over: not what the customer answers now
    conversation.save(update_fields=["handler", "assignee", "pending_clarification", "updated_at"])
    _close_escalations(conversation)
    _event(conversation, agent, "handed_back")
    assignment_queue_on_commit()  # the holder has room again
    return conversation


@transaction.atomic
def conversation_resolve(*, conversation_id: int, agent) -> Conversation:
    """Close the conversation and its escalations (who holds it keeps it, should it be reopened)."""
    require_desk_worker(agent)
    conversation = _locked(conversation_id)
    _allow(rules.Action.RESOLVE, agent, conversation)
    conversation.status = Conversation.Status.RESOLVED
    conversation.save(update_fields=["status", "updated_at"])
    _close_escalations(conversation)
    _event(conversation, agent, "resolved")
    assignment_queue_on_commit()  # the holder has room again
    asked = satisfaction_ask(conversation=conversation)  # once per conversation, when a person handled it
    if asked is not None:
        _deliver_on_commit(asked.question)
    return conversation


@transaction.atomic
def conversation_reopen(*, conversation_id: int, agent) -> Conversation:
    """Open a resolved conversation again, with whoever held it (or the bot) as before."""
    require_desk_worker(agent)
    conversation = _locked(conversation_id)
    _allow(rules.Action.REOPEN, agent, conversation)
    conversation.status = Conversation.Status.OPEN
    conversation.save(update_fields=["status", "updated_at"])
    _event(conversation, agent, "reopened", by=agent.get_username())
    return conversation


def contact_customer_link(*, conversation_id: int, agent, customer_id: str, query: str = "", billing=None,
                          via_whatsapp: bool = False) -> Contact:
    """Link the conversation's contact to the billing customer an agent picked from a search for `query`
    (or, `via_whatsapp`, the one billing has for the conversation's WhatsApp number).

    The search runs again here (outside the lock: billing may be slow), so only a customer billing
    matches now can be linked. The contact's customer_id is what the account panel, credit notes and
    the bot's next turns read. A second click finds it linked already (Unchanged).
    """
    require_desk_worker(agent)
    if via_whatsapp:
        wa_id = Conversation.objects.filter(pk=conversation_id).values_list("contact__wa_id", flat=True).get()
        found = customer_search_whatsapp(wa_id, billing=billing)
    else:
        found = customer_search(query, billing=billing)
    if found.state != "ok":
        raise DeskActionError(found.message)
    match = found.match(customer_id)
    if match is None:
        raise DeskActionError(f"Billing no longer matches customer {customer_id} to “{found.query}”: search again."
                              if not via_whatsapp else
                              f"Billing no longer has customer {customer_id} for this WhatsApp number: search "
                              "by account number, cédula or phone instead.")
    with transaction.atomic():
        conversation = _locked(conversation_id)
        _allow(rules.Action.LINK, agent, conversation)
        contact = Contact.objects.select_for_update().get(pk=conversation.contact_id)
        if contact.customer_id == match.id:
            raise Unchanged(f"This contact is already linked to {match.id} ({match.name}).")
        previous = contact.customer_id
        contact.customer_id = match.id
        contact.save(update_fields=["customer_id", "updated_at"])
        # The bot asked "who are you?" and kept the question; a person answered that now.
        Conversation.objects.filter(contact=contact).update(pending_query="")
        _event(conversation, agent, "customer_linked", customer_id=match.id, name=match.name,
               matched_by=match.matched_by, previous=previous)
    return contact


@transaction.atomic
def contact_customer_unlink(*, conversation_id: int, agent) -> Contact:
    """Unlink the contact from its billing customer (a wrong link): nobody is identified until linked again."""
    require_desk_worker(agent)
    conversation = _locked(conversation_id)
    _allow(rules.Action.LINK, agent, conversation)
    contact = Contact.objects.select_for_update().get(pk=conversation.contact_id)
    if not contact.customer_id:
        raise Unchanged("No billing customer is linked to this contact.")
    previous = contact.customer_id
    contact.customer_id = ""
    contact.save(update_fields=["customer_id", "updated_at"])
    _event(conversation, agent, "customer_unlinked", customer_id=previous)
    return contact


@transaction.atomic
def message_mark_wrong(*, message_id: int, agent, reason: str) -> Message:
    """Record an agent's verdict that a bot answer is wrong; analysts find it through its trace.

    While another agent holds the conversation, only they or a supervisor may (desk.rules).
    """
    require_desk_worker(agent)
    reason = (reason or "").strip()
    if not reason:
        raise DeskActionError("Say in a few words what is wrong.")
    conversation_id = Message.objects.filter(pk=message_id).values_list("conversation_id", flat=True).get()
    _allow(rules.Action.MARK_WRONG, agent, _locked(conversation_id))
    message = Message.objects.select_for_update().get(pk=message_id)
    if message.author != Message.Author.BOT:
        raise DeskActionError("Only bot answers can be marked as verified wrong.")
    if message.verified_wrong_at is not None:
        raise Unchanged(f"{message.verified_wrong_by.get_username() if message.verified_wrong_by else 'Someone'} "
                        "marked this answer verified wrong already.")
    message.verified_wrong_reason = reason[:300]
    message.verified_wrong_by = agent
    message.verified_wrong_at = clock.now()
    message.save(update_fields=["verified_wrong_reason", "verified_wrong_by", "verified_wrong_at"])
    _event(message.conversation, agent, "verified_wrong", message=message.pk, reason=message.verified_wrong_reason)
    return message
