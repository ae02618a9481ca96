"""Store what a WhatsApp webhook carries: contacts, conversations, inbound messages, delivery statuses.

Deduplication lives in the database: a message row is inserted with
`INSERT … ON CONFLICT (provider_message_id) DO NOTHING RETURNING id`, so of two deliveries of
the same wamid — days apart or at the same instant — exactly one gets an id back, and only
that one queues a bot turn. No savepoint, no IntegrityError, nothing logged as an error by
PostgreSQL for Meta's routine redeliveries.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import partial

from django.db import IntegrityError, connection, transaction
from django.db.models.fields import NOT_PROVIDED
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from core.tasks import task_queue
from desk.models import Channel, Contact, Conversation, Event, Message
from desk.whatsapp import InboundMessage, StatusUpdate, WebhookBatch

logger = logging.getLogger(__name__)

# A status only moves forward. `failed` outranks `sent` (a sent message can still fail) but not
# `delivered`/`read`: once the phone has it, a late or out-of-order `failed` does not undo that.
STATUS_RANK = {
    Message.Status.RECEIVED: 0,
    Message.Status.QUEUED: 0,
    Message.Status.SENT: 1,
    Message.Status.FAILED: 2,
    Message.Status.DELIVERED: 3,
    Message.Status.READ: 4,
}

_WA_ID_MAX = Contact._meta.get_field("wa_id").max_length
_USER_ID_MAX = Contact._meta.get_field("user_id").max_length
_NAME_MAX = Contact._meta.get_field("name").max_length


@dataclass
class StoreReport:
    stored: list[int] = field(default_factory=list)  # ids of the new message rows
    duplicates: list[str] = field(default_factory=list)  # wamids that were already stored
    queued: list[int] = field(default_factory=list)  # message ids whose bot turn is queued on commit
    rejected: list[str] = field(default_factory=list)  # messages that cannot be stored, with the reason
    statuses_applied: int = 0
    statuses_stale: int = 0  # not newer than what the message already has (out of order or repeated)
    statuses_unknown: int = 0  # no outbound message carries that wamid
    identity_changes: int = 0  # number or business-scoped id changes applied to a contact


@transaction.atomic
def webhook_batch_store(*, batch: WebhookBatch) -> StoreReport:
    """Store the batch's new messages, apply its statuses, queue a bot turn per new message that wants one."""
    report = StoreReport()
    seen: set[str] = set()
    by_sender: dict[str, list[InboundMessage]] = {}
    for inbound in batch.messages:
        if inbound.wamid in seen:  # the same wamid twice in one body
            report.duplicates.append(inbound.wamid)
            continue
        seen.add(inbound.wamid)
        problem = _identity_problem(inbound)
        if problem:
            report.rejected.append(f"{inbound.wamid}: {problem}")
            logger.warning("WhatsApp message %s not stored: %s", inbound.wamid, problem)
            continue
        by_sender.setdefault(inbound.wa_id or f"user:{inbound.user_id}", []).append(inbound)

    # Contacts are locked in one global order, so two batches naming the same senders never deadlock.
    for sender in sorted(by_sender):
        _sender_messages_store(messages=by_sender[sender], report=report)
    for update in sorted(batch.statuses, key=lambda s: (s.wamid, STATUS_RANK[s.status], s.timestamp)):
        _status_apply(update=update, report=report)
    return report


def _identity_problem(inbound: InboundMessage) -> str:
    if len(inbound.wa_id) > _WA_ID_MAX:
        return f"wa_id longer than {_WA_ID_MAX} characters"
    if len(inbound.user_id) > _USER_ID_MAX:
        return f"user_id longer than {_USER_ID_MAX} characters"
    return ""


def _sender_messages_store(*, messages: list[InboundMessage], report: StoreReport) -> None:
    """Store one sender's messages in their order; call inside the batch transaction."""
    first = messages[0]
    contact, previous_wa_id = _contact_lock(wa_id=first.wa_id, user_id=first.user_id, name=first.name)
    if previous_wa_id:
        # The same business-scoped user now writes from another number: answer the new one.
        Event.objects.create(conversation=_conversation_open(contact=contact), kind="number_changed",
                             detail={"from": previous_wa_id, "to": contact.wa_id, "source": "user_id"})
        report.identity_changes += 1
    for inbound in messages:
        stored = _message_insert(contact=contact, inbound=inbound)
        if stored is None:  # delivered before, or by a concurrent delivery that committed first
            report.duplicates.append(inbound.wamid)
            continue
        message_id, conversation_id = stored
        report.stored.append(message_id)
        if inbound.kind == "system":
            report.identity_changes += _contact_identity_change(
                contact=contact, conversation_id=conversation_id, inbound=inbound, message_id=message_id)
        if inbound.wants_turn:
            transaction.on_commit(partial(turn_queue, message_id))
            report.queued.append(message_id)


def _contact_lock(*, wa_id: str, user_id: str, name: str) -> tuple[Contact, str]:
    """Return the sender's contact, created if new and locked until commit, and its replaced wa_id if any."""
    contacts = Contact.objects.select_for_update().filter(channel=Channel.WHATSAPP)
    contact = contacts.filter(wa_id=wa_id).first() if wa_id else None
    if contact is None and user_id:
        contact = contacts.filter(user_id=user_id).order_by("pk").first()
    if contact is None:
        try:
            with transaction.atomic():
                created = Contact.objects.create(channel=Channel.WHATSAPP, wa_id=wa_id, user_id=user_id,
                                                 name=name[:_NAME_MAX])
            return created, ""
        except IntegrityError:
            # The same new sender arrived in another delivery at this instant; its row is committed now
            # (unique on wa_id, and on user_id for senders known only by their business-scoped id).
            contact = contacts.filter(wa_id=wa_id).first() if wa_id else None
            if contact is None:
                contact = contacts.get(user_id=user_id)

    changed, previous_wa_id = [], ""
    if name and contact.name != name[:_NAME_MAX]:
        contact.name = name[:_NAME_MAX]
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


def _conversation_open(*, contact: Contact) -> Conversation:
    """Return the contact's open conversation, or a new one; call while holding the contact's row lock."""
    conversation = (
        Conversation.objects.filter(contact=contact, channel=Channel.WHATSAPP,
                                    status=Conversation.Status.OPEN)
        .order_by("-pk").first()
    )
    if conversation is None:
        conversation = Conversation.objects.create(contact=contact, channel=Channel.WHATSAPP)
    return conversation


class _Sql(str):
    """An SQL expression to place in an INSERT instead of a parameter."""


def _insert_parts(model, explicit: dict, *, prefix: str) -> tuple[str, str, dict]:
    """Return the column list, value list and parameters that insert one row of `model`.

    Fields not in `explicit` get their model default (auto_now fields: now), so a field added to
    the model later with a default needs no change here.
    """
    now = timezone.now()
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


def _message_insert(*, contact: Contact, inbound: InboundMessage) -> tuple[int, int] | None:
    """Insert the inbound message into the contact's open conversation (opened if none) unless its
    wamid is stored; return (message id, conversation id), or None for a duplicate.

    One statement, so the webhook answers after four round trips (BEGIN, contact lock, this, COMMIT).
    Call while holding the contact's row lock: that lock is what makes "find the open conversation
    or open one" safe against a concurrent message of the same sender.
    """
    quote = connection.ops.quote_name
    conversation_table, message_table = quote(Conversation._meta.db_table), quote(Message._meta.db_table)
    provider_id = quote(Message._meta.get_field("provider_message_id").column)
    customer_wrote = inbound.kind != "system"
    conversation_columns, conversation_values, params = _insert_parts(Conversation, {
        "contact": contact.pk,
        "channel": Channel.WHATSAPP,
        "status": Conversation.Status.OPEN,
        # When the customer wrote (Meta's timestamp): it opens WhatsApp's 24-hour reply window.
        "last_inbound_at": inbound.timestamp if customer_wrote else None,
    }, prefix="c")
    message_columns, message_values, message_params = _insert_parts(Message, {
        "conversation": _Sql("conversation.id"),
        "direction": Message.Direction.INBOUND,
        "author": Message.Author.CUSTOMER if customer_wrote else Message.Author.SYSTEM,
        "kind": inbound.kind[:Message._meta.get_field("kind").max_length],
        "text": inbound.text,
        "provider_message_id": inbound.wamid,
        "status": Message.Status.RECEIVED,
        "payload": inbound.payload,
        "status_at": inbound.timestamp,  # when the customer sent it, per Meta
    }, prefix="m")
    params.update(message_params)
    params.update({"contact": contact.pk, "channel": Channel.WHATSAPP, "open": Conversation.Status.OPEN,
                   "wamid": inbound.wamid, "inbound_at": inbound.timestamp, "touch": customer_wrote,
                   "now": timezone.now()})
    sql = f"""
        WITH found AS (
            SELECT id FROM {conversation_table}
            WHERE contact_id = %(contact)s AND channel = %(channel)s AND status = %(open)s
            ORDER BY id DESC LIMIT 1
        ), opened AS (
            -- no open conversation: open one, unless this is a redelivery of a stored message
            INSERT INTO {conversation_table} ({conversation_columns})
            SELECT {conversation_values}
            WHERE NOT EXISTS (SELECT 1 FROM found)
              AND NOT EXISTS (SELECT 1 FROM {message_table} WHERE {provider_id} = %(wamid)s)
            RETURNING id
        ), conversation AS (
            SELECT id FROM found UNION ALL SELECT id FROM opened
        ), inserted AS (
            INSERT INTO {message_table} ({message_columns})
            SELECT {message_values} FROM conversation
            -- the partial unique index desk_message_unique_provider_id decides, atomically
            ON CONFLICT ({provider_id}) WHERE {provider_id} IS NOT NULL DO NOTHING
            RETURNING id, conversation_id
        ), touched AS (
            -- an existing conversation; one opened above already carries last_inbound_at
            UPDATE {conversation_table} AS c
            SET last_inbound_at = GREATEST(COALESCE(c.last_inbound_at, %(inbound_at)s), %(inbound_at)s),
                updated_at = %(now)s
            FROM inserted, found
            WHERE c.id = found.id AND inserted.conversation_id = found.id AND %(touch)s
        )
        SELECT id, conversation_id FROM inserted
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return (row[0], row[1]) if row else None


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
        contact.user_id = inbound.new_user_id[:_USER_ID_MAX]
        contact.save(update_fields=["user_id", "updated_at"])
        Event.objects.create(conversation_id=conversation_id, kind="user_id_changed", detail=detail)
        return 1
    return 0


def _status_apply(*, update: StatusUpdate, report: StoreReport) -> None:
    """Move the outbound message with this wamid forward to the update's status; never backwards."""
    rank = STATUS_RANK[update.status]
    outbound = Message.objects.filter(provider_message_id=update.wamid, direction=Message.Direction.OUTBOUND)
    changes = {"status": update.status, "status_at": update.timestamp}
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
