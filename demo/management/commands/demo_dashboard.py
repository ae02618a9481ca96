"""Two weeks of past traffic for the dashboard, rolled up, so the dial tells a true story on first open.

The questions are the ones the product is measured on: the routing examples (bot/data/routing_examples.jsonl,
every route in Spanish and English) and the sample golden set's queries. Each turn's outcome follows what the
bot does on its route: a request for a person always escalates as USER_REQUEST, an action the bot cannot carry
out as CAPABILITY_MISSING, a photo or voice note as MEDIA; small talk is answered or met with silence; document and account
questions are mostly answered, sometimes asked to clarify or escalated for the reasons those routes have (no
context, an answer the verifier refused, the billing API down).

The story ends on the configuration the live demo runs (the one demo_conversations' turns recorded, or the one
in force): eight days ago the writer's prompt moved to the version in use — the previous one gave more answers
the verifier refused and agents marked wrong; three days ago the retrieval prune margin moved to the one in
use from a stricter one that pruned away context, so document questions escalated with no context more often.
The dashboard's marks are exactly those two changes, and live traffic continues the last one.

About 1,700 turns, written in bulk (a few seconds). Deterministic (seeded) and idempotent: a second run finds
its traces (provider ids "demo-dash-…") and only rolls the hours up again.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from dataclasses import dataclass, replace
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from bot.configuration import configuration_parts
from bot.routing.classifier import EXAMPLES_PATH, get_router
from bot.writer import get_writer
from core import clock
from demo.management.commands.demo_conversations import GOLDEN_FILE
from desk.backfill import (
    complaint_signals_backfill,
    conversations_backfill,
    escalations_backfill,
    messages_backfill,
)
from desk.models import ComplaintSignal, Contact, Escalation, Message
from evals.golden import read_golden_rows
from kb.search import current_index_version
from traces.fingerprint import ConfigurationParts
from traces.models import Trace
from traces.rollups import rollups_rebuild
from traces.services import configuration_first_seen_set, configuration_record, traces_backfill

DAYS = 14
PROMPT_CHANGE_DAY = 8  # days ago
MARGIN_CHANGE_DAY = 3
PREFIX = "demo-dash-"
ROUTE_SHARE = [("document", 38), ("account", 30), ("smalltalk", 10), ("human", 8), ("unsupported", 8), ("media", 6)]
MEDIA_KINDS = ("image", "audio", "sticker", "video")


@dataclass(frozen=True)
class Phase:
    """One configuration's days and how its answers fared on the document and account routes."""

    name: str
    parts: ConfigurationParts
    ungrounded: float  # share of document/account turns escalated because the verifier refused every draft
    no_context: float  # share of document turns escalated with no context
    wrong: float  # share of answered document/account turns an agent marked wrong
    complaint: float  # share of answered turns the customer complained about


def _pick(rng: random.Random, weighted):
    return rng.choices([v for v, _ in weighted], weights=[w for _, w in weighted])[0]


def live_configuration() -> ConfigurationParts:
    """Return the configuration the live demo runs: the one its latest real turn recorded, else the one in
    force (the configured writer and router, the current index and the settings)."""
    latest = (Trace.objects.exclude(provider_message_id__startswith=PREFIX).exclude(configuration=None)
              .select_related("configuration").order_by("-created_at", "-pk").first())
    if latest is not None:
        return latest.configuration.parts()
    return configuration_parts(writer=get_writer(), router_version=get_router().version,
                               index_version=current_index_version())


def earlier_prompt(version: str) -> str:
    """Return the prompt version before `version` ("template-2" → "template-1")."""
    match = re.fullmatch(r"(.*?)(\d+)", version)
    if match and int(match[2]) > 1:
        return f"{match[1]}{int(match[2]) - 1}"
    return f"{version}-previous"


def story(live: ConfigurationParts) -> list[Phase]:
    """Return the three phases, oldest first; the last is the live configuration."""
    stricter = replace(live, kb_prune_margin=round(live.kb_prune_margin / 2, 4) or 0.05)
    return [
        Phase("previous prompt", replace(stricter, prompt_version=earlier_prompt(live.prompt_version)),
              ungrounded=0.10, no_context=0.16, wrong=0.08, complaint=0.05),
        Phase("stricter prune", stricter, ungrounded=0.03, no_context=0.16, wrong=0.03, complaint=0.02),
        Phase("live", live, ungrounded=0.03, no_context=0.07, wrong=0.025, complaint=0.02),
    ]


def questions() -> dict[tuple[str, str], list[str]]:
    """Return the questions per (route, language): the routing examples and the sample golden set's queries."""
    pool: dict[tuple[str, str], list[str]] = {}
    for line in Path(EXAMPLES_PATH).read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            pool.setdefault((row["route"], row.get("language") or "es"), []).append(row["text"])
    for row in read_golden_rows(GOLDEN_FILE):
        route = "account" if row["customer_id"] else "document"
        language = row["language"] or ("en" if re.search(r"\b(the|my|how|what|is|do)\b", row["query"]) else "es")
        pool.setdefault((route, language), []).append(row["query"])
    return {key: sorted(set(texts)) for key, texts in pool.items()}


def outcome_of(rng: random.Random, route: str, phase: Phase) -> tuple[str, str]:
    """Return (outcome, escalation reason) for a turn on `route` under `phase`, as the bot decides them."""
    if route == "human":
        return "escalated", "USER_REQUEST"
    if route == "media":
        return "escalated", "MEDIA"
    if route == "unsupported":
        return "escalated", "CAPABILITY_MISSING"
    roll = rng.random()
    if route == "smalltalk":
        return ("answered", "") if roll < 0.6 else ("silenced", "")
    if roll < phase.ungrounded:
        return "escalated", "UNGROUNDED_OUTPUT"
    roll -= phase.ungrounded
    if route == "document":
        if roll < phase.no_context:
            return "escalated", "NO_CONTEXT"
        return ("clarify", "") if roll < phase.no_context + 0.05 else ("answered", "")
    # account: the billing API down now and then, a question about which invoice, else an answer
    if roll < 0.03:
        return "escalated", "TOOL_ERROR"
    return ("clarify", "") if roll < 0.11 else ("answered", "")


class Command(BaseCommand):
    help = ("Seed two weeks of dashboard traffic — the routing examples' and golden set's questions on every route, "
            "outcomes as the bot decides them, two configuration changes ending on the live one — and roll it up.")

    def handle(self, *args, **options):
        now = clock.now()
        if not Trace.objects.filter(provider_message_id__startswith=PREFIX).exists():
            made = self._seed(now)
            self.stdout.write(f"Dashboard demo: {made} turns over {DAYS} days.")
        report = rollups_rebuild(start=now - dt.timedelta(days=DAYS + 1), end=now, now=now)
        self.stdout.write(f"Rolled {report.hours} hours into {report.rows} rollup rows; open /dashboard/.")

    @transaction.atomic
    def _seed(self, now: dt.datetime) -> int:
        rng = random.Random(2026)
        phases = story(live_configuration())
        fingerprints = {phase.name: configuration_record(parts=phase.parts) for phase in phases}
        for phase, days_ago in zip(phases, (DAYS, PROMPT_CHANGE_DAY, MARGIN_CHANGE_DAY)):
            configuration_first_seen_set(fingerprint=fingerprints[phase.name],
                                         at=now - dt.timedelta(days=days_ago, hours=2))
        agents = list(get_user_model().objects.filter(username__in=["agent", "supervisor"]))
        conversations = conversations_backfill(contacts=[
            Contact(channel="whatsapp" if i % 3 else "webchat", name=f"Demo customer {i}", language="es" if i % 4
                    else "en", wa_id=f"58412000{i:04d}" if i % 3 else "") for i in range(120)], status="resolved")
        turns = _turns(rng, now, phases, conversations, questions())
        return _write(rng, turns, agents, fingerprints)


def _turns(rng, now, phases, conversations, pool) -> list[dict]:
    turns = []
    for day in range(DAYS, 0, -1):
        phase = phases[0] if day > PROMPT_CHANGE_DAY else phases[1] if day > MARGIN_CHANGE_DAY else phases[2]
        for _ in range(rng.randint(100, 140)):
            conversation = rng.choice(conversations)
            language = conversation.contact.language
            route = _pick(rng, ROUTE_SHARE)
            outcome, reason = outcome_of(rng, route, phase)
            answered = outcome == "answered" and route in ("document", "account")
            turns.append({
                "when": now - dt.timedelta(days=day) + dt.timedelta(seconds=rng.randrange(86_400)),
                "conversation": conversation, "phase": phase, "route": route, "outcome": outcome, "reason": reason,
                "query": "" if route == "media" else rng.choice(pool[(route, language)]),
                "kind": rng.choice(MEDIA_KINDS) if route == "media" else "text",
                "wrong": answered and rng.random() < phase.wrong,
                "complaint": answered and rng.random() < phase.complaint})
    return turns


def _write(rng, turns, agents, fingerprints) -> int:
    """Write the turns' replies, escalations with a person's first reply, complaints and traces, each at its time."""
    replied = [t for t in turns if t["outcome"] in ("answered", "clarify")]
    replies = messages_backfill(messages=[
        Message(conversation=t["conversation"], direction="out", author="bot", text="Respuesta de demostración.",
                status="read", provider_message_id=f"{PREFIX}reply-{i}",
                verified_wrong_at=t["when"] + dt.timedelta(hours=3) if t["wrong"] else None,
                verified_wrong_reason="El monto no corresponde a la factura." if t["wrong"] else "",
                verified_wrong_by=agents[0] if t["wrong"] and agents else None)
        for i, t in enumerate(replied)], created_at=[t["when"] for t in replied])
    for t, reply in zip(replied, replies, strict=True):
        t["reply"] = reply
    escalated = [t for t in turns if t["outcome"] == "escalated"]
    escalations = escalations_backfill(escalations=[
        Escalation(conversation=t["conversation"], reason=t["reason"], summary="Demo escalation.", status="resolved")
        for t in escalated], created_at=[t["when"] for t in escalated])
    first_replies = []
    for t, escalation in zip(escalated, escalations, strict=True):
        t["escalation"] = escalation
        if agents:
            first_replies.append((Message(conversation=t["conversation"], direction="out", author="agent",
                                          agent=rng.choice(agents), text="Hola, le ayudo.", status="read"),
                                  t["when"] + dt.timedelta(seconds=rng.randint(60, 3600))))
    messages_backfill(messages=[m for m, _ in first_replies], created_at=[at for _, at in first_replies])
    complaint_signals_backfill(signals=[
        ComplaintSignal(message=t["reply"], source="agent", certainty="confirmed",
                        marked_by=agents[0] if agents else None, at=t["when"] + dt.timedelta(hours=1))
        for t in turns if t["complaint"]])
    traces_backfill(traces=[_trace(rng, i, t, fingerprints) for i, t in enumerate(turns)],
                    created_at=[t["when"] for t in turns])
    return len(turns)


def _trace(rng, number: int, turn: dict, fingerprints: dict) -> Trace:
    parts = turn["phase"].parts
    answered = turn["outcome"] in ("answered", "clarify") and turn["route"] in ("document", "account")
    latency = {"gate": 1.0, "route": rng.uniform(2, 8)}
    if turn["route"] in ("document", "account"):
        latency |= {"retrieve": rng.uniform(30, 90), "write_1": rng.uniform(200, 900) if answered else 0.0,
                    "verify_1": rng.uniform(1, 5) if answered else 0.0}
    return Trace(
        conversation=turn["conversation"], reply=turn.get("reply"), escalation=turn.get("escalation"),
        provider_message_id=f"{PREFIX}{number}", channel=turn["conversation"].channel,
        language=turn["conversation"].contact.language, route=turn["route"], outcome=turn["outcome"],
        escalation_reason=turn["reason"], silenced_at="ack" if turn["outcome"] == "silenced" else "",
        query=turn["query"] or f"[{turn['kind']}]", prompt_version=parts.prompt_version, model=parts.model,
        index_version=parts.index_version, router_version=parts.router_version,
        configuration_id=fingerprints[turn["phase"].name], total_ms=rng.lognormvariate(6.3, 0.6),
        latency_ms=latency,
        token_usage={"prompt_tokens": rng.randint(600, 1400), "completion_tokens": rng.randint(60, 220)}
        if answered and parts.model != "template" else {})
