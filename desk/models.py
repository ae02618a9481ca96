"""Conversations with subscribers: contacts, conversations, messages, escalations and the audit trail."""

import uuid

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.core.files.storage import storages
from django.db import models
from django.db.models import F, Q, Value

from core import clock
from core.fields import ClockDateTimeField
from core.fulltext import bilingual_vector


class Channel(models.TextChoices):
    WHATSAPP = "whatsapp", "WhatsApp"
    WEBCHAT = "webchat", "Web chat"


class Contact(models.Model):
    """A subscriber as a channel knows them; linked to a billing customer once identified."""

    channel = models.CharField(max_length=20, choices=Channel.choices)
    wa_id = models.CharField(max_length=32, blank=True, help_text="WhatsApp id (phone number digits).")
    user_id = models.CharField(max_length=160, blank=True, help_text="WhatsApp business-scoped user id.")
    name = models.CharField(max_length=200, blank=True)
    customer_id = models.CharField(max_length=64, blank=True, help_text="Billing API customer id once known.")
    language = models.CharField(max_length=2, default="es")
    created_at = ClockDateTimeField(auto_now_add=True)
    updated_at = ClockDateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["channel", "wa_id"], condition=~Q(wa_id=""), name="desk_contact_unique_wa_id"
            ),
            # Two deliveries at the same instant from a sender known only by username: one contact.
            models.UniqueConstraint(
                fields=["channel", "user_id"], condition=~Q(user_id=""), name="desk_contact_unique_user_id"
            ),
        ]

    def __str__(self):
        return self.name or self.wa_id or f"contact {self.pk}"


class Conversation(models.Model):
    """One thread with a contact. `handler` is the state gate: the bot writes only while it is 'bot'."""

    class Handler(models.TextChoices):
        BOT = "bot", "Bot"
        HUMAN = "human", "Human"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        RESOLVED = "resolved", "Resolved"

    contact = models.ForeignKey(Contact, on_delete=models.PROTECT, related_name="conversations")
    channel = models.CharField(max_length=20, choices=Channel.choices)
    handler = models.CharField(max_length=10, choices=Handler.choices, default=Handler.BOT)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A question the bot could not answer until it knows who the customer is.
    pending_query = models.TextField(blank=True)
    # A clarifying question the bot asked: {"query": the original question, "kind": "document"|"period",
    # "options": [{"label", "doc"|"period"}]}; empty when none is pending.
    pending_clarification = models.JSONField(default=dict, db_default=Value({}, models.JSONField()), blank=True)
    created_at = ClockDateTimeField(auto_now_add=True)
    updated_at = ClockDateTimeField(auto_now=True)
    last_inbound_at = models.DateTimeField(null=True, blank=True)
    # When an agent last replied (desk.services.agent_reply_send): later than last_inbound_at means the
    # conversation waits on the customer (the inbox's view), read without looking at the messages.
    last_agent_reply_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        permissions = [('use_desk', 'Work the escalation queue and conversations'),
                       ('supervise_conversations', 'Take over from anyone and act on conversations others hold')]
        indexes = [models.Index(fields=["contact", "status"], name="desk_conv_contact_status")]

    def __str__(self):
        return f"conversation {self.pk} with {self.contact}"

    @property
    def held_by_human(self) -> bool:
        return self.handler == self.Handler.HUMAN


class Message(models.Model):
    class Direction(models.TextChoices):
        INBOUND = "in", "Inbound"
        OUTBOUND = "out", "Outbound"

    class Author(models.TextChoices):
        CUSTOMER = "customer", "Customer"
        BOT = "bot", "Bot"
        AGENT = "agent", "Agent"
        SYSTEM = "system", "System"

    class Status(models.TextChoices):
        RECEIVED = "received", "Received"
        QUEUED = "queued", "Queued"
        SENDING = "sending", "Sending"
        SENT = "sent", "Sent"
        DELIVERED = "delivered", "Delivered"
        READ = "read", "Read"
        FAILED = "failed", "Failed"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    direction = models.CharField(max_length=3, choices=Direction.choices)
    author = models.CharField(max_length=10, choices=Author.choices)
    agent = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    kind = models.CharField(max_length=20, default="text", help_text="text, image, audio, document, location, "
                                                                     "reaction, sticker, system, …")
    text = models.TextField(blank=True)
    provider_message_id = models.CharField(max_length=128, null=True, blank=True,
                                           help_text="WhatsApp wamid (inbound or returned on send).")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RECEIVED)
    error = models.TextField(blank=True)
    payload = models.JSONField(default=dict, blank=True)
    # Set atomically by the first bot turn that claims this inbound message (redeliveries do nothing).
    turn_claimed_at = models.DateTimeField(null=True, blank=True, help_text="When a bot turn claimed it.")
    turn_lease_until = models.DateTimeField(
        null=True, blank=True, help_text="The claiming turn's lease; renewed while it runs. Expired and no trace: "
                                         "the turn died, and the sweep queues the message again.")
    # An agent's verdict that this bot answer is wrong (analysts pull these into review sessions).
    verified_wrong_reason = models.CharField(max_length=300, blank=True)
    verified_wrong_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                          related_name="+")
    verified_wrong_at = models.DateTimeField(null=True, blank=True)
    created_at = ClockDateTimeField(auto_now_add=True)
    status_at = models.DateTimeField(null=True, blank=True)
    # The desk's message search: the text folded and stemmed in Spanish and English (core.fulltext).
    search_vector = models.GeneratedField(expression=bilingual_vector(F("text")), output_field=SearchVectorField(),
                                          db_persist=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            # Meta redelivers webhooks for days; the database, not the code, keeps one row per message.
            models.UniqueConstraint(fields=["provider_message_id"], condition=Q(provider_message_id__isnull=False),
                                    name="desk_message_unique_provider_id"),
        ]
        indexes = [
            models.Index(fields=["conversation", "created_at"], name="desk_msg_conv_created"),
            # Analysts pull "verified wrong" answers into review sessions; few rows, found at once.
            models.Index(fields=["verified_wrong_at"], condition=Q(verified_wrong_at__isnull=False),
                         name="desk_msg_verified_wrong"),
            # The minutely sweep for unanswered inbound messages reads the last day's inbound rows.
            models.Index(fields=["created_at"], condition=Q(direction="in"), name="desk_msg_inbound_created"),
            # The delivery sweep reads the replies still waiting to be sent: a handful, whatever the table's size.
            models.Index(fields=["created_at"], condition=Q(direction="out", status="queued"),
                         name="desk_msg_outbound_queued"),
            # Message search: the GIN index finds rare words; newest-first pages of common words walk this one.
            GinIndex(fields=["search_vector"], name="desk_msg_text_search"),
            models.Index(fields=["created_at", "id"], name="desk_msg_created"),
            # The dashboard's hourly rollup finds the escalations a person first answered in the last hours.
            models.Index(fields=["created_at"], condition=Q(author="agent"), name="desk_msg_agent_created"),
        ]

    def __str__(self):
        return f"{self.author} message {self.pk}"

    @property
    def is_bot_answer(self) -> bool:
        """Whether the bot answered with this message (not the fixed "a person will answer you" notice)."""
        payload = self.payload if isinstance(self.payload, dict) else {}
        return self.author == Message.Author.BOT and not payload.get("escalation_notice")


# Lines the desk once appended to an escalation's detail when it closed; never the customer's words.
SYSTEM_MARKERS = frozenset({"[resolved]", "[handed back]"})


class Escalation(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", "Open"
        TAKEN = "taken", "Taken"
        RESOLVED = "resolved", "Resolved"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="escalations")
    reason = models.CharField(max_length=40)
    summary = models.TextField(help_text="What the agent needs to know, written for the agent.")
    detail = models.TextField(blank=True)
    suggested_reply = models.TextField(blank=True, help_text="The best verified draft, if any.")
    internal_note = models.TextField(blank=True, db_default="",
                                     help_text="What the bot knew: root cause, evidence, formulas, doubts.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    created_at = ClockDateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["status", "created_at"], name="desk_esc_status_created"),
            # The inbox walks these in order and stops at a page: open views by when they escalated, the
            # resolved view by when they were resolved.
            models.Index(fields=["created_at", "id"], condition=Q(status__in=["open", "taken"]),
                         name="desk_esc_active_created"),
            models.Index(fields=["resolved_at", "id"], condition=Q(status="resolved"),
                         name="desk_esc_resolved_at"),
        ]

    def __str__(self):
        return f"{self.reason} on conversation {self.conversation_id}"

    @property
    def detail_shown(self) -> str:
        """The detail as agents read it: without the "[resolved]" / "[handed back]" markers older versions
        appended (how an escalation ended is an event in the thread, not something the customer wrote)."""
        return "\n".join(line for line in self.detail.splitlines()
                         if line.strip() not in SYSTEM_MARKERS).strip()


class Event(models.Model):
    """Audit trail and thread events: escalated, taken over, handed back, resolved, number changed…"""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    kind = models.CharField(max_length=40)
    detail = models.JSONField(default=dict, blank=True)
    created_at = ClockDateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self):
        return f"{self.kind} on conversation {self.conversation_id}"


class CannedReply(models.Model):
    """A reply agents insert with one click; a small editable list per language."""

    language = models.CharField(max_length=2, default="es")
    title = models.CharField(max_length=80)
    text = models.TextField()
    order = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["language", "order", "title"]

    def __str__(self):
        return f"{self.language}: {self.title}"


def credit_note_idempotency_key() -> str:
    """Return a fresh Idempotency-Key, unique across databases: a reset never reuses one billing remembers."""
    import uuid

    return f"tracedesk-cn-{uuid.uuid4().hex}"


class CreditNoteRequest(models.Model):
    """A credit note an agent proposes on a customer's invoice; a supervisor approves, then billing has it."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending approval"
        APPROVED = "approved", "Approved, sending"
        REJECTED = "rejected", "Rejected"
        SENT = "sent", "Sent to billing"
        FAILED = "failed", "Sending failed"

    conversation = models.ForeignKey(Conversation, on_delete=models.PROTECT, related_name="credit_notes")
    customer_id = models.CharField(max_length=64)
    invoice_id = models.CharField(max_length=32)
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3)
    reason = models.CharField(max_length=500)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    proposed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
                                    related_name="+")
    proposed_at = ClockDateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.TextField(blank=True)
    # Sent with every attempt: billing creates at most one credit note per key, however often we retry.
    idempotency_key = models.CharField(max_length=128, unique=True, default=credit_note_idempotency_key,
                                       editable=False)
    billing_credit_note_id = models.CharField(max_length=64, blank=True)
    billing_status = models.CharField(max_length=32, blank=True)
    error = models.TextField(blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    # What billing said of the invoice when the credit note was proposed (desk.credit_notes.invoice_context):
    # its total, what was paid, and the figures billing's computations find on it (a duplicate charge, the
    # change from the previous invoice) — the approver decides with them.
    context = models.JSONField(default=dict, db_default=Value({}, models.JSONField()), blank=True)
    # Drafted by the bot from a verified finding (a charge billed twice), not by a person; the reply that told the
    # customer is `reply` (its trace shows the evidence).
    drafted_by_bot = models.BooleanField(default=False, db_default=False)
    reply = models.ForeignKey(Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                              help_text="The bot's reply that told the customer the request was filed.")

    class Meta:
        permissions = [('approve_credit_notes', 'Approve credit notes')]
        ordering = ["proposed_at", "pk"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="desk_credit_note_amount_positive"),
            # The same finding asked about again (or by two turns at once) is one proposal, whatever its fate.
            models.UniqueConstraint(fields=["customer_id", "invoice_id", "amount"], condition=Q(drafted_by_bot=True),
                                    name="desk_cn_bot_once_per_finding"),
        ]
        indexes = [models.Index(fields=["status", "proposed_at"], name="desk_cn_status_proposed")]

    def __str__(self):
        return f"credit note request {self.pk}: {self.amount} {self.currency} on {self.invoice_id}"


class ComplaintSignal(models.Model):
    """A sign that the customer complained about one bot message: who said so, when, and how.

    Confirmed when an agent marks it or the customer reacts to the message with 👎 / 😡 / 😠; suspected
    when the customer's next message, soon after, reads as disagreeing (desk/disagreement.py decides).
    One signal per bot message and source: a double click or a redelivered reaction adds nothing.
    """

    class Source(models.TextChoices):
        AGENT = "agent", "Marked by an agent"
        REACTION = "reaction", "Negative reaction on WhatsApp"
        FOLLOWUP = "followup", "Disagreeing follow-up message"

    class Certainty(models.TextChoices):
        CONFIRMED = "confirmed", "Confirmed complaint"
        SUSPECTED = "suspected", "Suspected complaint"

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="complaints",
                                help_text="The bot message complained about.")
    source = models.CharField(max_length=10, choices=Source.choices)
    certainty = models.CharField(max_length=10, choices=Certainty.choices)
    marked_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="+", help_text="The agent who marked it (agent source).")
    customer_message = models.ForeignKey(Message, null=True, blank=True, on_delete=models.SET_NULL,
                                         related_name="+", help_text="The customer's reaction or follow-up.")
    detail = models.CharField(max_length=64, blank=True,
                              help_text="The reaction's emoji, or the rule that read the follow-up as disagreeing.")
    at = models.DateTimeField(help_text="When the complaint was made: the agent's click or the customer's message.")
    created_at = ClockDateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["message", "source"], name="desk_complaint_once_per_source"),
        ]
        indexes = [models.Index(fields=["certainty", "at"], name="desk_complaint_certainty_at"),
                   # The dashboard's hourly rollup re-rolls the turns complained about since its last run.
                   models.Index(fields=["created_at"], name="desk_complaint_created")]

    def __str__(self):
        return f"{self.get_certainty_display()} on message {self.message_id} ({self.source})"


class AgentProfile(models.Model):
    """How an agent takes escalations: available or away, and how many open conversations they hold at once.

    Automatic assignment (desk/routing.py) hands a waiting escalation only to an available agent with room,
    and locks these rows while it decides, so two assigners never give one agent more than their capacity.
    """

    class Status(models.TextChoices):
        AVAILABLE = "available", "Available"
        AWAY = "away", "Away"

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="desk_profile")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.AWAY)
    capacity = models.PositiveSmallIntegerField(null=True, blank=True,
                                                help_text="Open conversations at once; empty: DESK_AGENT_CAPACITY.")
    last_assigned_at = models.DateTimeField(null=True, blank=True,
                                            help_text="When an escalation was last assigned to them automatically.")
    status_changed_at = ClockDateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.user} ({self.status})"

    @property
    def effective_capacity(self) -> int:
        return self.capacity if self.capacity is not None else settings.DESK_AGENT_CAPACITY


class Notification(models.Model):
    """A line in the desk's header for one person (`recipient`) or, with none, for everyone who works the desk."""

    recipient = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE,
                                  related_name="+", help_text="Empty: everyone who works the desk.")
    text = models.CharField(max_length=300)
    url = models.CharField(max_length=300, blank=True)
    conversation = models.ForeignKey(Conversation, null=True, blank=True, on_delete=models.CASCADE,
                                     related_name="notifications")
    created_at = ClockDateTimeField(auto_now_add=True)
    # One person dismissing a notification meant for everyone dismisses it for all: someone has seen to it.
    dismissed_at = models.DateTimeField(null=True, blank=True)
    dismissed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["recipient", "created_at"], condition=Q(dismissed_at__isnull=True),
                                name="desk_notification_open")]

    def __str__(self):
        return self.text


class Satisfaction(models.Model):
    """The one satisfaction question a conversation's customer gets after a person resolved it, and their answer."""

    class Answer(models.TextChoices):
        GOOD = "good", "Good"
        OKAY = "okay", "Okay"
        BAD = "bad", "Bad"

    conversation = models.OneToOneField(Conversation, on_delete=models.CASCADE, related_name="satisfaction")
    question = models.ForeignKey(Message, null=True, on_delete=models.SET_NULL, related_name="+",
                                 help_text="The interactive message that asked.")
    agent = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+", help_text="Who handled the conversation (held it when resolved).")
    reason = models.CharField(max_length=40, blank=True, help_text="The escalation's reason, if it was escalated.")
    asked_at = ClockDateTimeField(auto_now_add=True)
    answer = models.CharField(max_length=10, choices=Answer.choices, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    answer_message = models.ForeignKey(Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        indexes = [models.Index(fields=["asked_at"], name="desk_satisfaction_asked")]

    def __str__(self):
        return f"satisfaction on conversation {self.conversation_id}: {self.answer or 'no answer'}"


class MessageTemplate(models.Model):
    """A WhatsApp message template as Meta has it: the only message WhatsApp delivers after the 24-hour window.

    Templates are written and approved in Meta's WhatsApp Manager; this row mirrors one so the desk can offer
    it. Only approved ones are offered. `variable_sources[i]` says what fills `{{i+1}}` by default.
    """

    class Category(models.TextChoices):
        MARKETING = "marketing", "Marketing"
        UTILITY = "utility", "Utility"
        AUTHENTICATION = "authentication", "Authentication"

    class Status(models.TextChoices):
        APPROVED = "approved", "Approved"
        PENDING = "pending", "Pending review"
        REJECTED = "rejected", "Rejected"
        PAUSED = "paused", "Paused"

    class Source(models.TextChoices):
        NONE = "", "Typed by the agent"
        CUSTOMER_NAME = "customer_name", "The customer's name"
        AMOUNT_DUE = "amount_due", "The amount of the latest invoice"
        CREDIT_NOTE = "credit_note", "The conversation's credit-note number"

    name = models.CharField(max_length=512, help_text="Meta's template name: lowercase letters, digits and _.")
    language = models.CharField(max_length=15, help_text="Meta's language code: es, en, en_US, es_MX…")
    category = models.CharField(max_length=20, choices=Category.choices, default=Category.UTILITY)
    body = models.TextField(help_text="The body text, variables written {{1}}, {{2}}…")
    buttons = models.JSONField(default=list, blank=True, help_text="Quick-reply button labels.")
    variable_sources = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    created_at = ClockDateTimeField(auto_now_add=True)
    updated_at = ClockDateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "language"]
        constraints = [models.UniqueConstraint(fields=["name", "language"], name="desk_template_name_language")]

    def __str__(self):
        return f"{self.name} ({self.language})"


def attachment_path(instance, filename: str) -> str:
    """Return where a stored file goes: by month, under a random name (the customer's name is kept apart)."""
    today = clock.today()
    return f"desk/media/{today:%Y/%m}/{uuid.uuid4().hex}{filename[filename.rfind('.'):] if '.' in filename else ''}"


def desk_media_storage():
    """Return the storage of the desk's files (settings.STORAGES["desk_media"]: the file system, or S3)."""
    return storages["desk_media"]


class Attachment(models.Model):
    """The file of an image, audio, video, document or sticker message: fetched from WhatsApp, or an agent's."""

    class State(models.TextChoices):
        PENDING = "pending", "Downloading"
        STORED = "stored", "Stored"
        FAILED = "failed", "Download failed"

    message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="attachment")
    media_id = models.CharField(max_length=128, blank=True, help_text="WhatsApp's media id.")
    declared_type = models.CharField(max_length=100, blank=True, help_text="The MIME type the sender declared.")
    content_type = models.CharField(max_length=100, blank=True, help_text="The type the file's bytes prove.")
    size = models.PositiveBigIntegerField(null=True, blank=True)
    filename = models.CharField(max_length=255, blank=True)
    file = models.FileField(upload_to=attachment_path, storage=desk_media_storage, max_length=255, blank=True)
    thumbnail = models.FileField(upload_to=attachment_path, storage=desk_media_storage, max_length=255,
                                 blank=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    created_at = ClockDateTimeField(auto_now_add=True)
    updated_at = ClockDateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.get_state_display()} file of message {self.message_id}"

    @property
    def is_image(self) -> bool:
        return self.content_type.startswith("image/")

    @property
    def is_audio(self) -> bool:
        return self.content_type.startswith("audio/")

    @property
    def is_video(self) -> bool:
        return self.content_type.startswith("video/")
