"""The one inbound path of every channel: store a customer's messages once, reopen, queue the turn.

WhatsApp (`webhook_batch_store`, from the webhook) and the web chat (`desk.chat`) both hand their
messages to `inbound_messages_store`, so they agree on everything that follows:

- Deduplication lives in the database: a message row is inserted with `INSERT … ON CONFLICT
  (provider_message_id) DO NOTHING RETURNING id`, so of two deliveries of the same id — days apart
  or at the same instant — exactly one gets an id back, and only that one queues a bot turn. No
  savepoint, no IntegrityError, nothing logged as an error by PostgreSQL for Meta's routine
  redeliveries.
- The reopen rule: a message that wants a turn, written to a resolved conversation, reopens that
  same conversation — to the bot, or to the humans when DESK_REOPEN_TO_HUMAN is set — and the
  thread shows an Event `reopened`. A message that wants no turn (a reaction, an edit…) is filed
  in the conversation without reopening it.
- Text is cut at 4,096 characters (`payload["truncated"]` says so; the bot must escalate it
  rather than answer a message it only read part of).
- An edit replaces the text of the message it edits while no turn has read that message yet
  (the turn queued for it then answers the edited text, and no second turn is queued);
  otherwise the edit stays a line of the thread. A deletion marks the message deleted.
- A reaction on a bot answer (👎, 😡, 😠) is a complaint signal; a text written within 10 minutes of a
  bot answer that disputes it is a suspected one (desk/complaints.py).
- The turn is queued by task name on commit, so the desk does not import the bot.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from django.conf import settings
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import Case, When
from django.db.models.fields import NOT_PROVIDED
from kombu.exceptions import OperationalError as BrokerError

from core import clock, db_faults
from core.tasks import task_queue
from desk.channel import MEDIA_KINDS, InboundMessage
from desk.complaints import followup_complaint_check, reaction_complaint_apply
from desk.media import attachment_track
from desk.models import Channel, Contact, Conversation, Event, Message
from desk.satisfaction import satisfaction_answer_record
from desk.storable import text_capped
from desk.whatsapp import StatusUpdate, WebhookBatch

logger = logging.getLogger(__name__)

# A status only moves forward. `failed` outranks `sent` (a sent message can still fail) but not
# `delivered`/`read`: once the phone has it, a late or out-of-order `failed` does not undo that.
STATUS_RANK = {
    Message.Status.RECEIVED: 0,
    Message.Status.QUEUED: 0,
    Message.Status.SENDING: 0,
    Message.Status.SENT: 1,
    Message.Status.FAILED: 2,
    Message.Status.DELIVERED: 3,
    Message.Status.READ: 4,
}
# Meta's statuses the desk keeps under another name: a played voice message has been read.
STATUS_STORED_AS = {"played": Message.Status.READ}

_NAME_MAX = Contact._meta.get_field("name").max_length
_KIND_MAX = Message._meta.get_field("kind").max_length


@dataclass
class StoreReport:
    stored: list[int] = field(default_factory=list)  # ids of the new message rows
    duplicates: list[str] = field(default_factory=list)  # provider ids that were already stored
    queued: list[int] = field(default_factory=list)  # message ids whose bot turn is queued on commit
    rejected: list[str] = field(default_factory=list)  # messages that cannot be stored, with the reason
    reopened: list[int] = field(default_factory=list)  # resolved conversations a message reopened
    statuses_applied: int = 0
    statuses_stale: int = 0  # not newer than what the message already has (out of order or repeated)
    statuses_unknown: int = 0  # no outbound message carries that wamid
    identity_changes: int = 0  # number or business-scoped id changes applied to a contact

    def add(self, other: StoreReport) -> None:
        """Add another report's counts to this one."""
        for name, value in vars(other).items():
            setattr(self, name, getattr(self, name) + value)


def webhook_batch_store(*, batch: WebhookBatch) -> StoreReport:
    """Store the batch's new messages, apply its statuses, queue a bot turn per new message that wants one.

    One transaction for the whole body (run again after a serialization failure or a deadlock). Should the
    database refuse something the parser let through, the body is stored again item by item, so the good
    messages are kept and only the refused one is reported (with the reason) instead of the whole delivery
    failing. When the database is away (restarting, unreachable, the conflicts outlasting their retries),
    raise DatabaseUnavailable: nothing of the body is left half-stored by the failed transaction, and the
    caller asks the sender to deliver it again (items stored before are then duplicates).
    """
    try:
        return db_faults.retrying(partial(_batch_store_atomic, batch), what="WhatsApp webhook body")
    except DatabaseError:
        logger.exception("WhatsApp webhook: the database refused the body; storing its items one by one")
    report = StoreReport()
    items = [(m.wamid, WebhookBatch(messages=[m])) for m in batch.messages]
    items += [(s.wamid, WebhookBatch(statuses=[s])) for s in batch.statuses]
    for wamid, item in items:
        try:
            report.add(db_faults.retrying(partial(_batch_store_atomic, item), what=f"WhatsApp item {wamid}"))
        except DatabaseError as exc:
            report.rejected.append(f"{wamid}: the database refused it ({type(exc).__name__})")
            logger.warning("WhatsApp item %s not stored: the database refused it (%s)", wamid, exc)
    return report


def _batch_store_atomic(batch: WebhookBatch) -> StoreReport:
    with transaction.atomic():
        return _batch_store(batch)


def _batch_store(batch: WebhookBatch) -> StoreReport:
    report = StoreReport()
    seen: set[str] = set()
    by_sender: dict[str, list[InboundMessage]] = {}
    for inbound in batch.messages:
        if inbound.wamid in seen:  # the same wamid twice in one body
            report.duplicates.append(inbound.wamid)
            continue
        seen.add(inbound.wamid)
        by_sender.setdefault(inbound.wa_id or f"user:{inbound.user_id}", []).append(inbound)

    # Contacts are locked in one global order, so two batches naming the same senders never deadlock.
    for sender in sorted(by_sender):
        _sender_messages_store(messages=by_sender[sender], report=report)
    in_order = sorted(batch.statuses, key=lambda s: (s.wamid, STATUS_RANK[_stored_status(s)], s.timestamp))
    for update in in_order:
        _status_apply(update=update, report=report)
    return report


def _sender_messages_store(*, messages: list[InboundMessage], report: StoreReport) -> None:
    """Store one WhatsApp sender's messages in their order; call inside the batch transaction."""
    first = messages[0]
    contact, previous_wa_id = _contact_lock(wa_id=first.wa_id, user_id=first.user_id, name=first.name)
    if previous_wa_id:
        # The same business-scoped user now writes from another number: answer the new one.
        Event.objects.create(conversation=_conversation_current(contact=contact, channel=Channel.WHATSAPP),
                             kind="number_changed",
                             detail={"from": previous_wa_id, "to": contact.wa_id, "source": "user_id"})
        report.identity_changes += 1
    inbound_messages_store(contact=contact, channel=Channel.WHATSAPP, messages=messages, report=report)


def inbound_messages_store(*, contact: Contact, channel: str, messages: Sequence[InboundMessage],
                           report: StoreReport | None = None) -> StoreReport:
    """Store a customer's messages in their order, each once; reopen, apply edits, queue turns on commit.

    The one inbound path of every channel. Call inside a transaction while holding the contact's
    row lock (SELECT … FOR UPDATE): that lock is what makes "find the conversation, open or reopen
    it" safe against a concurrent message of the same sender.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("inbound_messages_store needs a transaction holding the contact's row lock")
    report = report if report is not None else StoreReport()
    to_human = settings.DESK_REOPEN_TO_HUMAN  # read per call: a changed setting applies at once
    for inbound in messages:
        stored = _message_insert(contact=contact, channel=channel, inbound=inbound, to_human=to_human)
        if stored is None:  # delivered before, or by a concurrent delivery that committed first
            report.duplicates.append(inbound.wamid)
            continue
        report.stored.append(stored.message_id)
        if stored.reopened:
            Event.objects.create(conversation_id=stored.conversation_id, kind="reopened",
                                 detail={"to": "human" if to_human else "bot", "channel": channel,
                                         "message_id": stored.message_id})
            report.reopened.append(stored.conversation_id)
        if inbound.kind == "system":
            report.identity_changes += _contact_identity_change(
                contact=contact, conversation_id=stored.conversation_id, inbound=inbound,
                message_id=stored.message_id)
        elif inbound.kind in ("edit", "revoke"):
            _change_apply(contact=contact, inbound=inbound)
        elif inbound.kind == "satisfaction":
            satisfaction_answer_record(contact=contact, message_id=stored.message_id,
                                       reply_id=str(inbound.payload.get("reply_id") or ""))
        elif inbound.kind == "reaction":
            reaction_complaint_apply(contact=contact, inbound=inbound, message_id=stored.message_id)
        elif inbound.kind == "text" and inbound.text.strip():
            followup_complaint_check(conversation_id=stored.conversation_id, inbound=inbound,
                                     message_id=stored.message_id)
        elif inbound.kind in MEDIA_KINDS and channel == Channel.WHATSAPP:
            # The file is fetched by a worker after commit (desk.media), never inside the webhook's request.
            attachment_track(message_id=stored.message_id, payload=inbound.payload)
        if inbound.wants_turn:
            transaction.on_commit(partial(turn_queue, stored.message_id))
            report.queued.append(stored.message_id)
    return report


def _contact_lock(*, wa_id: str, user_id: str, name: str) -> tuple[Contact, str]:
    """Return the sender's contact, created if new and locked until commit, and its replaced wa_id if any."""
    name = name[:_NAME_MAX]
    contacts = Contact.objects.select_for_update().filter(channel=Channel.WHATSAPP)
    contact = contacts.filter(wa_id=wa_id).first() if wa_id else None
    if contact is None and user_id:
        contact = contacts.filter(user_id=user_id).order_by("pk").first()
    if contact is None:
        try:
            with transaction.atomic():
                created = Contact.objects.create(channel=Channel.WHATSAPP, wa_id=wa_id, user_id=user_id, name=name)
            return created, ""
        except IntegrityError:
            # The same new sender arrived in another delivery at this instant; its row is committed now
            # (unique on wa_id, and on user_id for senders known only by their business-scoped id).
            contact = contacts.filter(wa_id=wa_id).first() if wa_id else None
            if contact is None:
                contact = contacts.get(user_id=user_id)

    changed, previous_wa_id = [], ""
    if name and contact.name != name:
        contact.name = name
        changed.append("name")
    if user_id and contact.user_id != user_id:
        contact.user_id = user_id
        changed.append("user_id")
    if wa_id and contact.wa_id != wa_id:
        # Found by its business-scoped id under another (or no) number: the number is the one to answer.
        previous_wa_id = contact.wa_id
        contact.wa_id = wa_id
        changed.append("wa_id")
    if changed:
        contact.save(update_fields=[*changed, "updated_at"])
    return contact, previous_wa_id


def _conversation_current(*, contact: Contact, channel: str) -> Conversation:
    """Return the conversation the contact's next message goes to (opened if none).

    Call while holding the contact's row lock.
    """
    conversation = (
        Conversation.objects.filter(contact=contact, channel=channel)
        .order_by(Case(When(status=Conversation.Status.OPEN, then=0), default=1), "-pk")
        .first()
    )
    if conversation is None:
        conversation = Conversation.objects.create(contact=contact, channel=channel)
    return conversation


class _Sql(str):
    """An SQL expression to place in an INSERT instead of a parameter."""


def _insert_parts(model, explicit: dict, *, prefix: str) -> tuple[str, str, dict]:
    """Return the column list, value list and parameters that insert one row of `model`.

    Fields not in `explicit` get their model default (auto_now fields: now), so a field added to
    the model later with a default needs no change here.
    """
    now = clock.now()
    quote = connection.ops.quote_name
    columns, values, params = [], [], {}
    for model_field in model._meta.concrete_fields:
        if model_field.primary_key or getattr(model_field, "generated", False):
            continue
        if model_field.name not in explicit and model_field.db_default is not NOT_PROVIDED:
            continue  # the database fills it
        if model_field.name in explicit:
            value = explicit[model_field.name]
        elif getattr(model_field, "auto_now", False) or getattr(model_field, "auto_now_add", False):
            value = now
        else:
            value = model_field.get_default()
        columns.append(quote(model_field.column))
        if isinstance(value, _Sql):
            values.append(value)
        else:
            key = f"{prefix}_{model_field.column}"
            values.append(f"%({key})s")
            params[key] = model_field.get_db_prep_save(value, connection)
    return ", ".join(columns), ", ".join(values), params


@dataclass(frozen=True)
class _Stored:
    message_id: int
    conversation_id: int
    reopened: bool  # the message reopened a resolved conversation


def _message_insert(*, contact: Contact, channel: str, inbound: InboundMessage,
                    to_human: bool) -> _Stored | None:
    """Insert the inbound message unless its provider id is stored; return where it went (None: a duplicate).

    It goes to the contact's open conversation, else to its latest one (reopened when resolved and
    the message wants a turn), else to a conversation opened here. One statement, so the webhook
    answers after four round trips (BEGIN, contact lock, this, COMMIT). Call while holding the
    contact's row lock: that lock is what makes "find the conversation or open one" safe against a
    concurrent message of the same sender.
    """
    quote = connection.ops.quote_name
    conversation_table, message_table = quote(Conversation._meta.db_table), quote(Message._meta.db_table)
    provider_id = quote(Message._meta.get_field("provider_message_id").column)
    customer_wrote = inbound.kind != "system"
    text = text_capped(inbound.text)
    payload = inbound.payload
    if text.truncated:
        payload = {**payload, "truncated": True, "text_length": text.length}
    conversation_columns, conversation_values, params = _insert_parts(Conversation, {
        "contact": contact.pk,
        "channel": channel,
        "status": Conversation.Status.OPEN,
        # When the customer wrote (Meta's timestamp): it opens WhatsApp's 24-hour reply window.
        "last_inbound_at": inbound.timestamp if customer_wrote else None,
    }, prefix="c")
    message_columns, message_values, message_params = _insert_parts(Message, {
        "conversation": _Sql("conversation.id"),
        "direction": Message.Direction.INBOUND,
        "author": Message.Author.CUSTOMER if customer_wrote else Message.Author.SYSTEM,
        "kind": inbound.kind[:_KIND_MAX],
        "text": text.text,
        "provider_message_id": inbound.wamid,
        "status": Message.Status.RECEIVED,
        "payload": payload,
        "status_at": inbound.timestamp,  # when the customer sent it, per the channel
    }, prefix="m")
    params.update(message_params)
    params.update({"contact": contact.pk, "channel": channel, "open": Conversation.Status.OPEN,
                   "resolved": Conversation.Status.RESOLVED, "wamid": inbound.wamid,
                   "inbound_at": inbound.timestamp, "touch": customer_wrote, "reopens": inbound.wants_turn,
                   "handler": Conversation.Handler.HUMAN if to_human else Conversation.Handler.BOT,
                   "unassign": not to_human, "now": clock.now()})
    sql = f"""
        WITH latest AS (
            -- locked, so a resolve committing meanwhile is seen here and the reopening is recorded
            SELECT id, status FROM {conversation_table}
            WHERE contact_id = %(contact)s AND channel = %(channel)s
            ORDER BY status = %(open)s DESC, id DESC LIMIT 1
            FOR UPDATE
        ), opened AS (
            -- the contact's first conversation here, unless this is a redelivery of a stored message
            INSERT INTO {conversation_table} ({conversation_columns})
            SELECT {conversation_values}
            WHERE NOT EXISTS (SELECT 1 FROM latest)
              AND NOT EXISTS (SELECT 1 FROM {message_table} WHERE {provider_id} = %(wamid)s)
            RETURNING id
        ), conversation AS (
            SELECT id FROM latest UNION ALL SELECT id FROM opened
        ), inserted AS (
            INSERT INTO {message_table} ({message_columns})
            SELECT {message_values} FROM conversation
            -- the partial unique index desk_message_unique_provider_id decides, atomically
            ON CONFLICT ({provider_id}) WHERE {provider_id} IS NOT NULL DO NOTHING
            RETURNING id, conversation_id
        ), updated AS (
            -- an existing conversation (one opened above is open and carries last_inbound_at): move
            -- last_inbound_at forward, and reopen it when resolved and the message wants a turn.
            -- SET reads the row as it was, so c.status below is the status before this statement.
            UPDATE {conversation_table} AS c
            SET last_inbound_at = CASE WHEN %(touch)s
                    THEN GREATEST(COALESCE(c.last_inbound_at, %(inbound_at)s), %(inbound_at)s)
                    ELSE c.last_inbound_at END,
                status = CASE WHEN %(reopens)s THEN %(open)s ELSE c.status END,
                handler = CASE WHEN %(reopens)s AND c.status = %(resolved)s
                    THEN %(handler)s ELSE c.handler END,
                assignee_id = CASE WHEN %(reopens)s AND c.status = %(resolved)s AND %(unassign)s
                    THEN NULL ELSE c.assignee_id END,
                updated_at = %(now)s
            FROM inserted, latest
            WHERE c.id = latest.id AND inserted.conversation_id = latest.id
              AND (%(touch)s OR (%(reopens)s AND latest.status = %(resolved)s))
            RETURNING %(reopens)s AND latest.status = %(resolved)s AS reopened
        )
        SELECT id, conversation_id, COALESCE((SELECT reopened FROM updated), FALSE) FROM inserted
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return _Stored(*row) if row else None


def _change_apply(*, contact: Contact, inbound: InboundMessage) -> None:
    """Apply an edit or a deletion (revoke) to the customer's message it names, if stored.

    An edit replaces the text while no turn has claimed the message: the turn queued for it reads
    the edited text, so no second turn is needed. Once a turn has read it, the text stays what the
    turn answered and the edit row shows the new text in the thread. The row lock orders this
    against the turn's claim (an UPDATE of the same row).
    """
    original = (Message.objects.select_for_update()
                .filter(provider_message_id=inbound.original_message_id, direction=Message.Direction.INBOUND,
                        conversation__contact=contact).first())
    if original is None:  # sent before this number was connected, or never stored: the edit row remains
        return
    payload = dict(original.payload) if isinstance(original.payload, dict) else {}
    if inbound.kind == "revoke":
        payload.update(deleted=True, deleted_at=inbound.timestamp.isoformat())
        original.payload = payload
        original.save(update_fields=["payload"])
        return
    if original.turn_claimed_at is not None:
        payload["edited_after_turn"] = True
        original.payload = payload
        original.save(update_fields=["payload"])
        return
    text = text_capped(inbound.text)
    payload.setdefault("text_before_edit", original.text)
    payload["edited"] = True
    for key in ("truncated", "text_length"):  # describe the new text, not the one it replaces
        payload.pop(key, None)
    if text.truncated:
        payload.update(truncated=True, text_length=text.length)
    original.text, original.payload = text.text, payload
    original.save(update_fields=["text", "payload"])


def _contact_identity_change(*, contact: Contact, conversation_id: int, inbound: InboundMessage,
                             message_id: int) -> int:
    """Apply a `system` message changing the contact's number or business-scoped id; return 1 if applied."""
    if inbound.system_type == "user_changed_number" and inbound.new_wa_id:
        previous = contact.wa_id
        if inbound.new_wa_id == previous:
            return 0
        detail = {"from": previous, "to": inbound.new_wa_id, "message_id": message_id}
        try:
            with transaction.atomic():
                contact.wa_id = inbound.new_wa_id
                contact.save(update_fields=["wa_id", "updated_at"])
        except IntegrityError:
            # The customer already wrote from the new number, so it has its own contact. Merging two
            # histories is an agent's call; the desk shows both ids.
            contact.wa_id = previous
            other = Contact.objects.get(channel=Channel.WHATSAPP, wa_id=inbound.new_wa_id)
            Event.objects.create(conversation_id=conversation_id, kind="number_changed",
                                 detail={**detail, "applied": False, "other_contact_id": other.pk})
            return 0
        Event.objects.create(conversation_id=conversation_id, kind="number_changed",
                             detail={**detail, "applied": True})
        return 1
    if inbound.system_type == "user_changed_user_id" and inbound.new_user_id:
        detail = {"from": contact.user_id, "to": inbound.new_user_id, "message_id": message_id}
        contact.user_id = inbound.new_user_id
        contact.save(update_fields=["user_id", "updated_at"])
        Event.objects.create(conversation_id=conversation_id, kind="user_id_changed", detail=detail)
        return 1
    return 0


def _status_apply(*, update: StatusUpdate, report: StoreReport) -> None:
    """Move the outbound message with this wamid forward to the update's status; never backwards."""
    status = _stored_status(update)
    rank = STATUS_RANK[status]
    outbound = Message.objects.filter(provider_message_id=update.wamid, direction=Message.Direction.OUTBOUND)
    changes = {"status": status, "status_at": update.timestamp}
    if update.status == Message.Status.FAILED:
        changes["error"] = update.error or "failed (no reason given by WhatsApp)"
    # One conditional UPDATE: PostgreSQL re-checks the status condition on the latest row version,
    # so concurrent deliveries of `delivered` and `read` cannot leave the message at `delivered`.
    moved = outbound.filter(status__in=[s for s, r in STATUS_RANK.items() if r < rank]).update(**changes)
    if not moved:
        if outbound.exists():
            report.statuses_stale += 1
        else:
            report.statuses_unknown += 1
        return
    report.statuses_applied += 1
    if update.status == Message.Status.FAILED:
        message_id, conversation_id = outbound.values_list("pk", "conversation_id").get()
        Event.objects.create(
            conversation_id=conversation_id, kind="send_failed",
            detail={"message_id": message_id, "provider_message_id": update.wamid, "code": update.error_code,
                    "title": update.error_title, "detail": update.error_detail,
                    "recipient_id": update.recipient_id, "at": update.timestamp.isoformat()},
        )


def _stored_status(update: StatusUpdate) -> str:
    return STATUS_STORED_AS.get(update.status, update.status)


# The bot's turn task, queued by name: the desk does not import the bot. Through the registry (not
# send_task), so eager mode runs it in process when no broker is configured.
TURN_TASK = "bot.handle_inbound"


def turn_queue(message_id: int) -> None:
    """Queue the bot turn for a stored message (runs after commit, for every channel)."""
    try:
        task_queue(TURN_TASK, message_id)
    except BrokerError:
        # The row is committed and a redelivery is dropped as a duplicate, so nothing retries this:
        # say loudly which message is waiting.
        logger.exception("Could not queue the bot turn for message %s: the broker is unreachable; "
                         "the message stays unanswered until it is queued again", message_id)
