"""Turns for rollup and dashboard tests: traces with replies, marks, complaints, escalations and first replies."""

from __future__ import annotations

import datetime as dt
import random
import uuid
from dataclasses import replace

from desk.models import ComplaintSignal, Contact, Conversation, Escalation, Message
from traces.models import Trace
from traces.services import configuration_record
from traces.tests.test_configuration import BASE

CONFIG_A = BASE
CONFIG_B = replace(BASE, prompt_version="writer-8")
REASONS = ["NO_CONTEXT", "USER_REQUEST", "TOOL_ERROR"]


def _at(model, pk, when):
    model.objects.filter(pk=pk).update(created_at=when)


def turn(*, when: dt.datetime, outcome="answered", channel="webchat", language="es", route="document", reason="",
         configuration=None, total_ms=120.0, latency_ms=None, tokens=(0, 0), wrong=False, complaint="",
         agent=None, reply_after: dt.timedelta | None = None) -> Trace:
    """Create one turn as the bot and the desk would leave it, at `when` (UTC).

    complaint: "" / "confirmed" / "suspected". agent and reply_after: a person replies to the escalation.
    """
    contact = Contact.objects.create(channel=channel, name="T", language=language or "es")
    conversation = Conversation.objects.create(contact=contact, channel=channel)
    reply = escalation = None
    if outcome in ("answered", "clarify"):
        reply = Message.objects.create(conversation=conversation, direction="out", author="bot", text="Son Bs. 3",
                                       provider_message_id=f"rec-{uuid.uuid4().hex}",
                                       verified_wrong_at=when if wrong else None,
                                       verified_wrong_reason="wrong fee" if wrong else "")
        if complaint:
            ComplaintSignal.objects.create(
                message=reply, source="agent" if complaint == "confirmed" else "followup", certainty=complaint,
                at=when)
    if outcome == "escalated":
        escalation = Escalation.objects.create(conversation=conversation, reason=reason or "NO_CONTEXT",
                                               summary="s")
        _at(Escalation, escalation.pk, when)
        if agent is not None:
            answer = Message.objects.create(conversation=conversation, direction="out", author="agent", agent=agent,
                                            text="Hola, le ayudo.")
            _at(Message, answer.pk, when + (reply_after or dt.timedelta(minutes=5)))
    trace = Trace.objects.create(
        conversation=conversation, reply=reply, escalation=escalation, channel=channel, language=language,
        route=route, outcome=outcome, escalation_reason=(reason or "NO_CONTEXT") if outcome == "escalated" else "",
        query="cuanto cuesta", total_ms=total_ms, latency_ms=latency_ms or {"gate": 1.0, "write_1": 50.0},
        token_usage={"prompt_tokens": tokens[0], "completion_tokens": tokens[1]},
        configuration_id=configuration_record(parts=configuration) if configuration else None)
    _at(Trace, trace.pk, when)
    return trace


def random_turns(rng: random.Random, *, start: dt.datetime, hours: int, count: int, agents=()) -> list[Trace]:
    """Create `count` varied turns spread over `hours` hours from `start`."""
    made = []
    for _ in range(count):
        outcome = rng.choice(["answered", "answered", "escalated", "silenced", "clarify"])
        made.append(turn(
            when=start + dt.timedelta(seconds=rng.randrange(hours * 3600)), outcome=outcome,
            channel=rng.choice(["webchat", "whatsapp"]), language=rng.choice(["es", "en", ""]),
            route=rng.choice(["document", "account"]), reason=rng.choice(REASONS),
            configuration=rng.choice([CONFIG_A, CONFIG_B, None]), total_ms=rng.uniform(1, 70_000),
            latency_ms={"gate": rng.uniform(0, 5), "write_1": rng.uniform(10, 900), "write_2": rng.uniform(10, 900)},
            tokens=(rng.randrange(500), rng.randrange(200)), wrong=rng.random() < 0.2,
            complaint=rng.choice(["", "", "confirmed", "suspected"]),
            agent=rng.choice([*agents, None]) if agents else None,
            reply_after=dt.timedelta(seconds=rng.randrange(20, 90_000))))
    return made
