"""Reads for the agent desk: the escalation queue, a conversation's thread, its last bot turn, the agents."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Count, F, Max, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.utils import timezone

from billing.answers.money import LANGUAGES, money_text
from core import clock
from core.fulltext import Matches, bilingual_query, newest_first
from core.keyset import cursor_decode, cursor_encode, keyset_after, keyset_page
from desk.disagreement import RULE_LABELS
from desk.graph_errors import failure_explained
from desk.identifiers import whatsapp_digits
from desk.models import Attachment, ComplaintSignal, Contact, Conversation, Escalation, Event, Message
from desk.reasons import reason_label
from desk.storable import TEXT_MAX

logger = logging.getLogger(__name__)
ACTIVE = [Escalation.Status.OPEN, Escalation.Status.TAKEN]


VIEWS = {
    "open": "All open",
    "unassigned": "Unassigned",
    "mine": "Mine",
    "waiting": "Waiting on the customer",
    "resolved": "Resolved",
}


@dataclass(frozen=True)
class QueueFilters:
    """What the agent narrowed the queue to; empty values mean "any".

    `view` picks the list: every open escalation, the ones nobody holds, the agent's own, the ones whose
    last word was an agent's (waiting on the customer), or resolved ones (between two dates, newest first).
    """

    view: str = "open"
    reason: str = ""
    channel: str = ""
    language: str = ""
    waiting_over_minutes: int | None = None
    search: str = ""
    oldest_first: bool = True
    resolved_since: date | None = None
    resolved_until: date | None = None  # inclusive

    @property
    def resolved(self) -> bool:
        return self.view == "resolved"

    @property
    def order_field(self) -> str:
        """The keyset's time column: when it was resolved for the resolved view, else when it escalated."""
        return "resolved_at" if self.resolved else "created_at"

    @property
    def descending(self) -> bool:
        return self.resolved or not self.oldest_first


@dataclass(frozen=True)
class QueueCursor:
    """The keyset position of the last row shown: (time, pk), written as every cursor is (core.keyset).

    The time is the view's order field (escalated at, or resolved at in the resolved view)."""

    created_at: datetime
    pk: int

    def encode(self) -> str:
        return cursor_encode(self.created_at, self.pk)

    @classmethod
    def decode(cls, value: str | None) -> QueueCursor | None:
        """Return the cursor in `value`, or None when it is missing or malformed (the first page)."""
        decoded = cursor_decode(value or "")
        return cls(*decoded) if decoded else None

    @classmethod
    def of(cls, escalation: Escalation, field: str = "created_at") -> QueueCursor:
        return cls(created_at=getattr(escalation, field), pk=escalation.pk)


def _last_inbound(field: str) -> Subquery:
    return Subquery(
        # What the customer wrote: WhatsApp's system notices (a number changed) are not the customer's words.
        Message.objects.filter(conversation=OuterRef("conversation_id"), direction=Message.Direction.INBOUND,
                               author=Message.Author.CUSTOMER)
        .order_by("-created_at", "-pk")
        .values(field)[:1]
    )


def _waiting_on_customer() -> Q:
    """An agent replied after the customer last wrote (or the customer has not written): the ball is in the
    customer's court. Two columns of the conversation, so no message is read."""
    return (Q(conversation__last_agent_reply_at__isnull=False)
            & (Q(conversation__last_inbound_at__isnull=True)
               | Q(conversation__last_inbound_at__lt=F("conversation__last_agent_reply_at"))))


def _in_view(view: str, agent) -> Q:
    """What puts an active escalation in an open view (the inbox's rows and its tab counts alike)."""
    if view == "unassigned":
        return Q(status=Escalation.Status.OPEN, conversation__assignee__isnull=True)
    if view == "mine":
        return Q(conversation__assignee=agent)
    if view == "waiting":
        return Q(status=Escalation.Status.TAKEN) & _waiting_on_customer()
    return Q()  # all open, or resolved (chosen by status above)


def _local_midnight(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def escalation_queue(*, agent, filters: QueueFilters, after: QueueCursor | None = None,
                     limit: int | None = 50, now: datetime | None = None) -> QuerySet[Escalation]:
    """Return one page of the chosen view after `after`: open views longest waiting first (or newest first),
    resolved newest resolved first.

    One query whatever the page size: the contact, the assignee and the customer's last message
    come in the same SELECT (joins and correlated subqueries on desk_msg_conv_created).
    """
    now = now or clock.now()
    queue = (
        Escalation.objects.select_related("conversation__contact", "conversation__assignee")
        .annotate(last_customer_text=_last_inbound("text"), last_customer_kind=_last_inbound("kind"),
                  last_customer_message_id=_last_inbound("pk"))
    )
    if filters.resolved:
        queue = queue.filter(status=Escalation.Status.RESOLVED, resolved_at__isnull=False)
        if filters.resolved_since:
            queue = queue.filter(resolved_at__gte=_local_midnight(filters.resolved_since))
        if filters.resolved_until:
            queue = queue.filter(resolved_at__lt=_local_midnight(filters.resolved_until + timedelta(days=1)))
    else:
        queue = queue.filter(status__in=ACTIVE)
    queue = queue.filter(_in_view(filters.view, agent))
    if filters.reason:
        queue = queue.filter(reason=filters.reason)
    if filters.channel:
        queue = queue.filter(conversation__channel=filters.channel)
    if filters.language:
        queue = queue.filter(conversation__contact__language=filters.language)
    if filters.waiting_over_minutes and not filters.resolved:
        queue = queue.filter(created_at__lte=now - timedelta(minutes=filters.waiting_over_minutes))
    if filters.search.strip():
        # The contacts first (one pass over the contacts table), then their escalations: testing the name of
        # every escalation's contact while walking the queue in order cost 120–210 ms at 10k open ones.
        matching = Contact.objects.filter(_search(filters.search.strip()))
        queue = queue.filter(conversation__contact__in=matching)
    field = filters.order_field
    queue = queue.order_by(f"-{field}", "-pk") if filters.descending else queue.order_by(field, "pk")
    if after:
        queue = keyset_after(queue, when=after.created_at, pk=after.pk, field=field,
                             descending=filters.descending)
    return queue[:limit] if limit is not None else queue


def _search(term: str, customer_ids: tuple[str, ...] = ()) -> Q:
    """Match a contact by name, WhatsApp number (local, national or international form, any punctuation),
    billing customer id, or one of `customer_ids` (billing's answer for an account number or cédula/RIF)."""
    match = Q(name__icontains=term) | Q(customer_id__iexact=term)
    phone = whatsapp_digits(term)
    if phone:
        match |= Q(wa_id=phone)
    digits = re.sub(r"\D", "", term)
    if len(digits) >= 4:
        match |= Q(wa_id__contains=digits)
    if customer_ids:
        match |= Q(customer_id__in=customer_ids)
    return match


def view_counts(*, agent) -> dict[str, int]:
    """Return how many escalations each open view holds now (one aggregate query; resolved is not counted)."""
    narrowed = {view: Count("pk", filter=_in_view(view, agent)) for view in ("unassigned", "mine", "waiting")}
    return Escalation.objects.filter(status__in=ACTIVE).aggregate(open=Count("pk"), **narrowed)


def escalation_counts() -> list[dict]:
    """Return, per reason, how many escalations are open and how many taken (one aggregate query)."""
    rows = (
        Escalation.objects.filter(status__in=ACTIVE)
        .values("reason")
        .annotate(open=Count("pk", filter=Q(status=Escalation.Status.OPEN)),
                  taken=Count("pk", filter=Q(status=Escalation.Status.TAKEN)),
                  total=Count("pk"))
        .order_by("-total", "reason")
    )
    return list(rows)


def wait_level(waited: timedelta, *, amber_minutes: int, red_minutes: int) -> str:
    """Return "red", "amber" or "" for how long a customer has waited."""
    minutes = waited.total_seconds() / 60
    if minutes >= red_minutes:
        return "red"
    if minutes >= amber_minutes:
        return "amber"
    return ""


def wait_thresholds() -> tuple[int, int]:
    """Return the (amber, red) minutes from settings, read at call time."""
    return (getattr(settings, "DESK_WAIT_AMBER_MINUTES", 5), getattr(settings, "DESK_WAIT_RED_MINUTES", 15))


# Search and a contact's history --------------------------------------------------------------------

SEARCH_PAGE_SIZE = 30
CONTACTS_SHOWN = 20
FEW_MATCHES = 2_000  # up to this many matches, read them through the GIN index and sort (see message_search)


def message_search(*, text: str, after: str = "",
                   size: int = SEARCH_PAGE_SIZE) -> tuple[list[Message], str | None]:
    """Return one page of the messages whose text matches `text`, newest first, and the next page's cursor.

    Full text (core.fulltext): accents folded, Spanish and English stems, web-search syntax ("a phrase",
    -word, or). Each message comes with its conversation, contact and agent in the same query.

    A count bounded at FEW_MATCHES + 1 rows decides the plan: few matches (a rare word, an account number,
    a word nobody wrote) are fetched through the GIN index and sorted; many are found by walking the messages
    newest first, where a page fills within the first rows. At 1M messages the walk alone took 1.1–1.7 s for
    a word with no match; the count, an index-only bitmap, costs milliseconds either way.
    """
    rows = Message.objects.filter(Matches(F("search_vector"), bilingual_query(text)))
    few = rows.order_by()[:FEW_MATCHES + 1].count() <= FEW_MATCHES
    rows = newest_first(rows.select_related("conversation__contact", "agent"), few=few)
    return keyset_page(rows, after=after, size=size)


def contacts_matching(*, term: str, customer_ids: tuple[str, ...] = (),
                      limit: int = CONTACTS_SHOWN) -> list[Contact]:
    """Return the contacts whose name, WhatsApp number or customer id matches `term` (as the queue's search),
    or who are linked to one of `customer_ids`, each with how many conversations it has."""
    return list(Contact.objects.filter(_search(term, customer_ids))
                .annotate(conversation_count=Count("conversations")).order_by("name", "pk")[:limit])


def contact_conversations(*, contact: Contact) -> list[Conversation]:
    """Return every conversation of `contact`, newest first, each with its message count, its last message
    time and its escalations (newest first): three queries whatever the number of conversations."""
    return list(
        Conversation.objects.filter(contact=contact)
        .select_related("assignee")
        .annotate(message_count=Count("messages"), last_message_at=Max("messages__created_at"))
        .prefetch_related(Prefetch("escalations", queryset=Escalation.objects.order_by("-created_at", "-pk")))
        .order_by("-created_at", "-pk")
    )


# The conversation page -------------------------------------------------------------------------

@dataclass(frozen=True)
class ThreadEntry:
    """One line of the thread: a message, or an event (escalated, taken over, a private note…)."""

    at: datetime
    message: Message | None = None
    event: Event | None = None
    language: str = "es"  # the contact's: amounts in the thread are written as the account panel writes them

    @property
    def is_note(self) -> bool:
        return self.event is not None and self.event.kind == "note"

    @property
    def message_marks(self) -> list[str]:
        """Return what the thread says of a customer's message besides its text: deleted, edited, cut."""
        message = self.message
        if message is None or message.direction != Message.Direction.INBOUND:
            return []
        payload = message.payload if isinstance(message.payload, dict) else {}
        shown_as_file = hasattr(message, "attachment")  # the file itself says what it is
        marks = {"edit": ["edited an earlier message"], "revoke": ["deleted an earlier message"]}.get(
            message.kind, [] if message.kind == "text" or shown_as_file else [message.kind])
        if payload.get("deleted"):
            marks.append("deleted by the customer")
        if payload.get("edited"):
            marks.append("edited by the customer before the bot read it")
        if payload.get("edited_after_turn"):
            marks.append("edited by the customer after the bot read it (the edit follows)")
        if payload.get("truncated"):
            marks.append(f"cut at {TEXT_MAX:,} characters: the customer sent {payload.get('text_length', 0):,}")
        return marks

    @property
    def is_bot_answer(self) -> bool:
        return self.message is not None and self.message.is_bot_answer

    @property
    def complaints(self) -> list[dict]:
        """Return the complaint signals on this bot answer, each with the sentence the thread shows."""
        if self.message is None or self.message.author != Message.Author.BOT:
            return []
        lines = []
        for signal in self.message.complaints.all():  # prefetched by conversation_thread
            if signal.source == ComplaintSignal.Source.AGENT:
                who = signal.marked_by.get_username() if signal.marked_by else "an agent"
                text = f"Customer complained about this answer (marked by {who})"
            elif signal.source == ComplaintSignal.Source.REACTION:
                text = f"Customer reacted {signal.detail} to this answer"
            else:
                why = RULE_LABELS.get(signal.detail, signal.detail)
                text = f"Suspected complaint: the customer's next message {why}"
            lines.append({"signal": signal, "text": text, "suspected": signal.certainty == "suspected"})
        return lines

    @property
    def marked_complaint(self) -> bool:
        """Whether an agent already marked this answer as complained about (the button becomes Undo)."""
        return any(line["signal"].source == ComplaintSignal.Source.AGENT for line in self.complaints)

    @property
    def event_label(self) -> str:
        """Return the event as the thread says it: "escalated: Customer asked for a person", "taken over by
        ana"…"""
        event = self.event
        if event is None:
            return ""
        detail = event.detail if isinstance(event.detail, dict) else {}
        who = event.actor.get_username() if event.actor else str(detail.get("agent") or "")
        by = f" by {who}" if who else ""
        labels = {
            "escalated": f"escalated: {reason_label(str(detail.get('reason', '')))}",
            "taken_over": (f"taken over from {detail['previous']}{by}: {detail.get('reason', '')}"
                           if detail.get("previous") else f"taken over{by}"),
            "take_requested": f"{who or 'an agent'} asks {detail.get('holder') or 'the holder'} for this "
                              "conversation" + (f": {detail['text']}" if detail.get("text") else ""),
            "handed_back": f"handed back to the bot{by}",
            "resolved": f"resolved{by}",
            "reopened": f"reopened{by}" if event.actor else (
                "reopened by the customer's message, "
                + ("for a person to answer" if detail.get("to") == "human" else "back to the bot")),
            "assigned": f"assigned to {detail.get('assignee', '?')}"
                        + (" automatically (the available agent with the most room)" if detail.get("automatic")
                           else by),
            "note": f"private note{by}",
            "verified_wrong": f"bot answer marked verified wrong{by}: {detail.get('reason', '')}",
            "complaint_marked": f"customer complaint about a bot answer marked{by}",
            "complaint_unmarked": f"customer complaint mark taken back{by}",
            "send_failed": _send_failed_label(detail),
            "customer_linked": f"linked to billing customer {detail.get('customer_id', '?')}"
                               + (f" ({detail['name']})" if detail.get("name") else "") + by
                               + (f", instead of {detail['previous']}" if detail.get("previous") else ""),
            "customer_unlinked": f"unlinked from billing customer {detail.get('customer_id', '?')}{by}",
            "number_changed": f"number changed from {detail.get('from') or '?'} to {detail.get('to') or '?'}",
            **_credit_note_labels(detail, by, self.language),
            "satisfaction_asked": "satisfaction question sent to the customer (Good / Okay / Bad)",
            "satisfaction_answered": "Customer rated the help: "
                                     + {"good": "Good", "okay": "Okay", "bad": "Bad"}.get(str(detail.get("answer")),
                                                                                       "?"),
        }
        return labels.get(event.kind, event.kind.replace("_", " "))


def _send_failed_label(detail: dict) -> str:
    """The thread's line for a failed send: Meta's words, then what to do when the code is a known one."""
    said = str(detail.get("error") or detail.get("title") or detail.get("code") or "no reason given")
    code = detail.get("code") if isinstance(detail.get("code"), int) else None
    sentence = failure_explained(said, code).sentence
    return f"sending failed: {said}" + (f" — {sentence}" if sentence else "")


def _event_money(detail: dict, language: str) -> str:
    """The event's amount in the one money notation (as recorded when it cannot be read)."""
    try:
        return money_text(Decimal(str(detail.get("amount"))), str(detail.get("currency") or ""),
                          language if language in LANGUAGES else "es")
    except (InvalidOperation, ValueError):
        return f"{detail.get('amount', '?')} {detail.get('currency', '')}".strip()


def _credit_note_labels(detail: dict, by: str, language: str = "es") -> dict[str, str]:
    """The thread's lines for a credit note's life: proposed, approved, rejected, sent, failed, retried."""
    money = _event_money(detail, language)
    what = f"credit note of {money} on invoice {detail.get('invoice_id', '?')}"
    whose = "the bot's" if detail.get("by_bot") else "the"

    def decided(verb: str) -> str:  # "Supervisor sol approved the credit note for USD 162,40 on invoice F-1"
        return (f"Supervisor{by.removeprefix(' by')} {verb} {whose} credit note for {money} on invoice "
                f"{detail.get('invoice_id', '?')}")
    return {
        "credit_note_proposed": f"{what} proposed{by}: {detail.get('reason', '')}",
        "credit_note_approved": f"{decided('approved')}",
        "credit_note_rejected": f"{decided('rejected')}: {detail.get('note', '')}",
        "credit_note_sent": f"{what} sent to billing, which filed it as {detail.get('billing_id') or '?'}",
        "credit_note_failed": f"{what}: billing did not take it ({detail.get('error') or 'no reason given'})",
        "credit_note_retried": f"{what} sent again{by}",
    }


def conversation_thread(*, conversation: Conversation) -> list[ThreadEntry]:
    """Return the conversation's messages (with their complaint signals) and events in time order (three queries)."""
    messages = (
        conversation.messages.select_related("agent", "verified_wrong_by", "attachment")
        .prefetch_related(Prefetch("complaints", ComplaintSignal.objects.select_related("marked_by")))
        .order_by("created_at", "pk")
    )
    events = conversation.events.select_related("actor").order_by("created_at", "pk")
    language = conversation.contact.language
    entries = [ThreadEntry(at=m.created_at, message=m, language=language) for m in messages]
    entries += [ThreadEntry(at=e.created_at, event=e, language=language) for e in events]
    # A message and the event it caused share a transaction; the message reads first.
    entries.sort(key=lambda entry: (entry.at, 0 if entry.message else 1))
    return entries


def conversation_escalation(*, conversation: Conversation) -> Escalation | None:
    """Return the conversation's current escalation (open or taken), else its latest one."""
    escalations = conversation.escalations.order_by("-created_at", "-pk")
    return escalations.filter(status__in=ACTIVE).first() or escalations.first()


def next_waiting_escalation(*, exclude_conversation_id: int | None = None) -> Escalation | None:
    """Return the escalation nobody has taken that has waited longest (not this conversation's), or None."""
    waiting = (Escalation.objects.filter(status=Escalation.Status.OPEN, conversation__assignee__isnull=True)
               .select_related("conversation__contact").order_by("created_at", "pk"))
    if exclude_conversation_id is not None:
        waiting = waiting.exclude(conversation_id=exclude_conversation_id)
    return waiting.first()


def take_requests_pending(*, conversation: Conversation) -> list[Event]:
    """Return the asks to take the conversation made since its holder got it, one per person (latest)."""
    if not (conversation.held_by_human and conversation.assignee_id):
        return []
    since = conversation.events.filter(kind__in=["taken_over", "assigned"]).order_by("-pk").values("pk")[:1]
    asks = (conversation.events.filter(kind="take_requested", pk__gt=Subquery(since))
            .exclude(actor_id=conversation.assignee_id).exclude(actor__isnull=True)
            .select_related("actor").order_by("-pk"))
    latest = {}
    for ask in asks:
        latest.setdefault(ask.actor_id, ask)
    return list(latest.values())


def desk_agents() -> QuerySet:
    """Return the active users who may work the desk (agents and supervisors), by username."""
    perm = Q(groups__permissions__codename="use_desk", groups__permissions__content_type__app_label="desk")
    direct = Q(user_permissions__codename="use_desk", user_permissions__content_type__app_label="desk")
    users = get_user_model().objects.filter(is_active=True)
    ids = users.filter(perm | direct | Q(is_superuser=True)).values("pk")
    return users.filter(pk__in=ids).order_by("username")


def thread_version(*, conversation: Conversation) -> str:
    """Return a token that changes when the thread does: a new message or event, a delivery status, a verdict.

    Statuses only move forward, so the number of messages in each status changes whenever one moves. A
    complaint signal comes with a new message (the reaction, the follow-up) or event (an agent's mark, its undo).
    """
    per_status = {f"n_{status}": Count("pk", filter=Q(status=status)) for status in Message.Status.values}
    wrong = Count("pk", filter=Q(verified_wrong_at__isnull=False))
    messages = conversation.messages.aggregate(last=Max("pk"), wrong=wrong, **per_status)
    events = conversation.events.aggregate(last=Max("pk"))
    # A file downloaded (or failed) changes the thread too: it moves from "downloading" to shown or to Retry.
    files = Attachment.objects.filter(message__conversation=conversation).aggregate(
        last=Max("updated_at"), n=Count("pk"))
    parts = [messages.pop("last"), messages.pop("wrong"), *messages.values(), events["last"], files["n"],
             int(files["last"].timestamp() * 1000) if files["last"] else 0]
    return ".".join(str(part or 0) for part in parts)


def attachments_of(*, message_ids) -> dict[int, Attachment]:
    """Return the attachments of these messages by message id (one query): the inbox shows them on the cards."""
    ids = [i for i in message_ids if i]
    return {a.message_id: a for a in Attachment.objects.filter(message_id__in=ids)} if ids else {}


def escalation_attachments(*, conversation: Conversation, limit: int = 4) -> list[Attachment]:
    """Return the files the customer sent in this conversation, newest first (the escalation card shows them)."""
    return list(Attachment.objects.filter(message__conversation=conversation,
                                          message__direction=Message.Direction.INBOUND)
                .select_related("message").order_by("-message__created_at", "-pk")[:limit])
