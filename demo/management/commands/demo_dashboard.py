"""Two weeks of past traffic for the dashboard, rolled up, so the dial tells a story on first open.

The story: the writer prompt changed from demo-writer-1 to demo-writer-2 eight days ago — the bot became
bolder, so it escalated less and was marked wrong and complained about more; three days ago a new
knowledge-base index (v2) gave it better context, and the wrong answers fell back while escalations stayed
low. Agents "agent" and "supervisor" answered the escalations (first replies of a few minutes to an hour).

About 1,700 turns, written in bulk (a few seconds). Deterministic (seeded) and idempotent: a second run finds
its traces (provider ids "demo-dash-…") and only rolls the hours up again.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import replace

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from core import clock
from desk.backfill import complaint_signals_backfill, conversations_backfill, escalations_backfill, messages_backfill
from desk.models import ComplaintSignal, Contact, Escalation, Message
from traces.fingerprint import ConfigurationParts
from traces.models import Trace
from traces.rollups import rollups_rebuild
from traces.services import configuration_first_seen_set, configuration_record, traces_backfill

DAYS = 14
PROMPT_CHANGE_DAY = 8  # days ago
INDEX_CHANGE_DAY = 3
PREFIX = "demo-dash-"
REASONS = [("NO_CONTEXT", 5), ("USER_REQUEST", 3), ("UNGROUNDED_OUTPUT", 2), ("TOOL_ERROR", 1),
           ("CAPABILITY_MISSING", 2)]
ROUTES = [("document", 6), ("account", 4), ("human", 1), ("smalltalk", 1)]
BASE = ConfigurationParts(prompt_version="demo-writer-1", model="template", router_version="rules-3",
                          index_version=1, kb_prune_margin=0.12, kb_context_min_score=0.835, bot_max_rewrites=2,
                          phrases_hash="0" * 16)


def _pick(rng: random.Random, weighted):
    return rng.choices([v for v, _ in weighted], weights=[w for _, w in weighted])[0]


class Command(BaseCommand):
    help = "Seed two weeks of dashboard traffic (two prompt versions, an index change, marks) and roll it up."

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
        configurations = {
            "before": BASE, "bolder": replace(BASE, prompt_version="demo-writer-2"),
            "new index": replace(BASE, prompt_version="demo-writer-2", index_version=2)}
        fingerprints = {name: configuration_record(parts=parts) for name, parts in configurations.items()}
        for name, days_ago in (("before", DAYS), ("bolder", PROMPT_CHANGE_DAY), ("new index", INDEX_CHANGE_DAY)):
            configuration_first_seen_set(fingerprint=fingerprints[name], at=now - dt.timedelta(days=days_ago, hours=2))
        agents = list(get_user_model().objects.filter(username__in=["agent", "supervisor"]))
        conversations = conversations_backfill(contacts=[
            Contact(channel="whatsapp" if i % 3 else "webchat", name=f"Demo customer {i}", language="es" if i % 4
                    else "en", wa_id=f"58412000{i:04d}" if i % 3 else "") for i in range(120)], status="resolved")
        turns = []
        for day in range(DAYS, 0, -1):
            phase = "before" if day > PROMPT_CHANGE_DAY else "bolder" if day > INDEX_CHANGE_DAY else "new index"
            # (escalation probability, wrong probability, complaint probability) per phase
            escalate, wrong, complain = {"before": (0.30, 0.03, 0.02), "bolder": (0.16, 0.10, 0.07),
                                         "new index": (0.15, 0.04, 0.025)}[phase]
            for _ in range(rng.randint(100, 140)):
                when = now - dt.timedelta(days=day) + dt.timedelta(seconds=rng.randrange(86_400))
                conversation = rng.choice(conversations)
                roll = rng.random()
                outcome = ("escalated" if roll < escalate else "clarify" if roll < escalate + 0.05
                           else "silenced" if roll < escalate + 0.08 else "answered")
                turns.append({"when": when, "conversation": conversation, "outcome": outcome, "phase": phase,
                              "wrong": outcome == "answered" and rng.random() < wrong,
                              "complaint": outcome == "answered" and rng.random() < complain,
                              "reason": _pick(rng, REASONS), "route": _pick(rng, ROUTES)})
        # Bot replies for the answered turns, escalations (and a person's first reply) for the escalated ones.
        replied = [t for t in turns if t["outcome"] in ("answered", "clarify")]
        replies = messages_backfill(messages=[
            Message(conversation=t["conversation"], direction="out", author="bot", text="Respuesta de demostración.",
                    status="read", provider_message_id=f"{PREFIX}reply-{i}",
                    verified_wrong_at=t["when"] + dt.timedelta(hours=3) if t["wrong"] else None,
                    verified_wrong_reason="El monto no corresponde a la factura." if t["wrong"] else "",
                    verified_wrong_by=agents[0] if t["wrong"] and agents else None)
            for i, t in enumerate(turns) if t["outcome"] in ("answered", "clarify")],
            created_at=[t["when"] for t in replied])
        reply_of = iter(replies)
        escalated = [t for t in turns if t["outcome"] == "escalated"]
        escalations = escalations_backfill(escalations=[
            Escalation(conversation=t["conversation"], reason=t["reason"], summary="Demo escalation.",
                       status="resolved") for t in escalated], created_at=[t["when"] for t in escalated])
        first_replies = []
        for t, escalation in zip(escalated, escalations):
            t["escalation"] = escalation
            if agents:
                first_replies.append((Message(conversation=t["conversation"], direction="out", author="agent",
                                              agent=rng.choice(agents), text="Hola, le ayudo.", status="read"),
                                      t["when"] + dt.timedelta(seconds=rng.randint(60, 3600))))
        messages_backfill(messages=[m for m, _ in first_replies], created_at=[at for _, at in first_replies])
        for t in turns:
            if t["outcome"] in ("answered", "clarify"):
                t["reply"] = next(reply_of)
        complaint_signals_backfill(signals=[
            ComplaintSignal(message=t["reply"], source="agent", certainty="confirmed",
                            marked_by=agents[0] if agents else None, at=t["when"] + dt.timedelta(hours=1))
            for t in turns if t["complaint"]])
        traces_backfill(traces=[
            Trace(conversation=t["conversation"], reply=t.get("reply"), escalation=t.get("escalation"),
                  provider_message_id=f"{PREFIX}{i}", channel=t["conversation"].channel,
                  language=t["conversation"].contact.language, route=t["route"], outcome=t["outcome"],
                  escalation_reason=t["reason"] if t["outcome"] == "escalated" else "",
                  silenced_at="gate" if t["outcome"] == "silenced" else "", query="¿Cuánto debo este mes?",
                  prompt_version=configurations[t["phase"]].prompt_version, model="template",
                  index_version=configurations[t["phase"]].index_version, router_version="rules-3",
                  configuration_id=fingerprints[t["phase"]],
                  total_ms=rng.lognormvariate(6.3, 0.6), latency_ms={
                      "gate": 1.0, "route": rng.uniform(2, 8), "retrieve": rng.uniform(30, 90),
                      "write_1": rng.uniform(200, 900), "verify_1": rng.uniform(1, 5)},
                  token_usage={"prompt_tokens": rng.randint(600, 1400), "completion_tokens": rng.randint(60, 220)})
            for i, t in enumerate(turns)], created_at=[t["when"] for t in turns])
        return len(turns)
