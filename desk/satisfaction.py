"""The satisfaction question after a person resolved a conversation, its answer, and the dashboard's read of them.

Asked by `satisfaction_ask` from the resolve action (desk.services.conversation_resolve), inside its transaction
and under its row lock; desk/satisfaction_rules.py decides whether. The question is one WhatsApp interactive
message with three reply buttons, queued like every outbound message (desk.services.outbound_deliver sends it).
The customer's tap comes back as a button reply (desk.whatsapp reads it as kind `satisfaction`), which never gets a
bot turn: `satisfaction_answer_record` stores it on the conversation. A reply that cannot be read (a button id
that names no question, or a question of another customer) is kept as a message and changes nothing.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import Count, Min, Q
from django.db.models.functions import TruncDate

from desk.models import Contact, Conversation, Event, Message, Satisfaction
from desk.reasons import reason_label
from desk.satisfaction_rules import ANSWERS, TITLES, Facts, decide, interactive, read_button

logger = logging.getLogger(__name__)


def _facts(conversation: Conversation) -> Facts:
    messages = conversation.messages
    took_over = conversation.events.filter(kind="taken_over").aggregate(at=Min("created_at"))["at"]
    first_reply = messages.filter(author=Message.Author.AGENT).aggregate(at=Min("created_at"))["at"]
    person_since = min((at for at in (took_over, first_reply) if at is not None), default=None)
    from_customer = messages.filter(direction=Message.Direction.INBOUND, author=Message.Author.CUSTOMER)
    return Facts(
        enabled=settings.DESK_CSAT_ENABLED, after_bot=settings.DESK_CSAT_AFTER_BOT, channel=conversation.channel,
        already_asked=Satisfaction.objects.filter(conversation=conversation).exists(),
        handled_by_person=person_since is not None,
        customer_wrote=from_customer.exists(),
        customer_wrote_after_person=person_since is not None and from_customer.filter(
            created_at__gt=person_since).exists(),
    )


def satisfaction_ask(*, conversation: Conversation) -> Satisfaction | None:
    """Record the question that asks the customer how it went, unless the rules say not to; return it (None: not
    asked). The caller queues the delivery of `satisfaction.question` on commit.

    Call inside the resolve's transaction while holding the conversation's row lock (SELECT … FOR UPDATE): that
    lock and the one-to-one row make a double click, or a resolve after a reopen, ask once.
    """
    decision = decide(_facts(conversation))
    if not decision.ask:
        logger.info("No satisfaction question on conversation %s: %s", conversation.pk, decision.why)
        return None
    escalation = conversation.escalations.order_by("-created_at", "-pk").first()
    # Rated: who holds it as it is resolved, else the last person who replied (it was handed back to the bot).
    agent = conversation.assignee if conversation.held_by_human and conversation.assignee_id else None
    if agent is None:
        last_reply = (conversation.messages.filter(author=Message.Author.AGENT, agent__isnull=False)
                      .select_related("agent").order_by("-created_at", "-pk").first())
        agent = last_reply.agent if last_reply else None
    satisfaction = Satisfaction.objects.create(conversation=conversation, agent=agent,
                                               reason=escalation.reason if escalation else "")
    language = conversation.contact.language
    body = interactive(satisfaction.pk, language)
    question = Message.objects.create(
        conversation=conversation, direction=Message.Direction.OUTBOUND, author=Message.Author.SYSTEM,
        kind="interactive", text=body["body"]["text"] + " " + " / ".join(TITLES.get(language, TITLES["es"]).values()),
        status=Message.Status.QUEUED, payload={"interactive": body, "satisfaction": satisfaction.pk})
    satisfaction.question = question
    satisfaction.save(update_fields=["question"])
    Event.objects.create(conversation=conversation, kind="satisfaction_asked", detail={"why": decision.why})
    return satisfaction


def satisfaction_answer_record(*, contact: Contact, message_id: int, reply_id: str) -> Satisfaction | None:
    """Store the customer's tap on a satisfaction button; the first answer counts, later taps change nothing.

    Call inside the inbound transaction (desk.inbound holds the contact's row lock). Returns None when the reply
    names no question of this contact (it stays a message in the thread).
    """
    button = read_button(reply_id)
    satisfaction = None
    if button is not None:
        satisfaction = (Satisfaction.objects.select_for_update(of=("self",))
                        .filter(pk=button.satisfaction_id, conversation__contact=contact).first())
    if satisfaction is None:
        logger.warning("A satisfaction button reply %r from contact %s names no question of theirs", reply_id,
                       contact.pk)
        return None
    if satisfaction.answer:
        return satisfaction
    message = Message.objects.get(pk=message_id)
    satisfaction.answer = button.answer
    satisfaction.answered_at = message.status_at or message.created_at
    satisfaction.answer_message = message
    satisfaction.save(update_fields=["answer", "answered_at", "answer_message"])
    Event.objects.create(conversation_id=satisfaction.conversation_id, kind="satisfaction_answered",
                         detail={"answer": button.answer, "message_id": message_id})
    return satisfaction


# The dashboard's read -------------------------------------------------------------------------------------------

@dataclass
class Tally:
    """Answers to the satisfaction question for one agent, reason or day: asked, answered and each answer."""

    key: str
    label: str
    asked: int = 0
    answers: dict = field(default_factory=lambda: dict.fromkeys(ANSWERS, 0))

    @property
    def answered(self) -> int:
        return sum(self.answers.values())

    def rate(self, answer: str) -> str:
        """Return the share of answers that were `answer`, with its counts: "67% (2 of 3)"."""
        if not self.answered:
            return "—"
        return f"{self.answers[answer] / self.answered:.0%} ({self.answers[answer]} of {self.answered})"

    @property
    def rates(self) -> dict[str, str]:
        return {answer: self.rate(answer) for answer in ANSWERS}

    @property
    def response_rate(self) -> str:
        return f"{self.answered / self.asked:.0%} ({self.answered} of {self.asked})" if self.asked else "—"


@dataclass
class SatisfactionSummary:
    total: Tally
    per_agent: list[Tally]
    per_reason: list[Tally]
    per_day: list[Tally]


def satisfaction_summary(*, start: dt.datetime, end: dt.datetime, channel: str = "", language: str = "",
                         agent_id: int | None = None) -> SatisfactionSummary:
    """Return the satisfaction questions asked in [start, end) and their answers, per agent, per escalation reason
    and per day (a few rows a day: read straight from the table)."""
    asked = Satisfaction.objects.filter(asked_at__gte=start, asked_at__lt=end)
    if channel:
        asked = asked.filter(conversation__channel=channel)
    if language:
        asked = asked.filter(conversation__contact__language=language)
    if agent_id is not None:
        asked = asked.filter(agent_id=agent_id)
    counts = {f"n_{answer}": Count("pk", filter=Q(answer=answer)) for answer in ANSWERS}

    def tallies(rows, key_of, label_of) -> list[Tally]:
        found = []
        for row in rows:
            tally = Tally(key=key_of(row), label=label_of(row), asked=row["asked"])
            tally.answers = {answer: row[f"n_{answer}"] for answer in ANSWERS}
            found.append(tally)
        return found

    [total] = tallies([asked.aggregate(asked=Count("pk"), **counts)], lambda r: "all", lambda r: "All")
    per_agent = tallies(asked.values("agent_id", "agent__username").annotate(asked=Count("pk"), **counts)
                        .order_by("agent__username"),
                        lambda r: str(r["agent_id"] or ""), lambda r: r["agent__username"] or "Nobody held it")
    per_reason = tallies(asked.values("reason").annotate(asked=Count("pk"), **counts).order_by("reason"),
                         lambda r: r["reason"], lambda r: reason_label(r["reason"]) if r["reason"] else
                         "Not escalated")
    per_day = tallies(asked.annotate(day=TruncDate("asked_at")).values("day").annotate(asked=Count("pk"), **counts)
                      .order_by("day"), lambda r: r["day"].isoformat(), lambda r: r["day"].isoformat())
    return SatisfactionSummary(total, per_agent, per_reason, per_day)


def conversation_satisfaction(*, conversation: Conversation) -> Satisfaction | None:
    """Return the conversation's satisfaction question and answer, if it was asked."""
    return Satisfaction.objects.filter(conversation=conversation).first()

