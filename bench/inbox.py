#!/usr/bin/env python
"""The agent desk's inbox at scale: every view's first page, its counts, and message search, p50/p95.

    .venv/bin/python bench/inbox.py [--escalations 10000] [--messages 1000000] [--repeats 30] [--reuse]

* Database: its own, `tracedesk_bench_inbox` on the embedded server (EMBEDDED_PG_DATABASE is set before
  django.setup(); `config.embedded_db.ensure_running()` creates it), migrated at every run.
* Data, generated inside PostgreSQL (INSERT … SELECT generate_series): 50,000 contacts with a conversation
  each, `--messages` messages spread over 90 days across them (Spanish and English sentences with accents;
  one message in 500 names an account number), and `--escalations` open ones (a third taken by one of 20
  agents, half of those answered by their agent last), plus as many resolved ones over 90 days.
  `--reuse` keeps an already loaded database of the same size.
* Timing: the exact calls the pages make — `escalation_queue` (first page of 50) with `view_counts` and
  `escalation_counts` for each view, a resolved view with a 7-day range, and `message_search` (first page
  of 30) for a common word, a mid-frequency one, a rare one, a phrase and an account number — over
  `--repeats` runs after two warm-ups. Baseline, same run: one conversation's thread (`conversation_thread`),
  the cheapest page an agent opens. Printed, not asserted. Target: p95 ≤ 150 ms.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

from core import clock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ["EMBEDDED_PG_DATABASE"] = "tracedesk_bench_inbox"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

CONTACTS = 50_000
SEARCH_INDEX = "desk_msg_text_search"
AGENTS = 20
SENTENCES = [
    "¿Cuánto cuesta la reconexión del servicio?", "Me llegaron dos facturas este mes",
    "me hicieron un cobro doble en octubre", "hola, buenas tardes, necesito ayuda con mi pago",
    "¿por qué mi factura llegó más alta?", "quiero hablar con una persona por favor",
    "the late charges were removed from your invoice", "why was I charged twice this month?",
    "ya pagué por Pago Móvil y sigue apareciendo la deuda", "¿cuándo vence mi factura de noviembre?",
    "el técnico no vino a la visita programada", "can I change my plan to the annual one?",
    "gracias, ya quedó resuelto", "tengo el servicio suspendido desde ayer", "ok",
    "¿aceptan pagos en dólares por Zelle?", "my internet has been down since Monday",
    "le escribe Ana del equipo de facturación, ya revisamos su cuenta",
]
SEARCHES = [("common word (factura)", "factura"), ("mid-frequency word (zelle)", "zelle"),
            ("rare word (programada)", "programada"), ('phrase ("cobro doble")', '"cobro doble"'),
            ("account number", None), ("no match", "xilofono")]

MESSAGES_SQL = """
INSERT INTO desk_message (conversation_id, direction, author, agent_id, kind, text, status, error, payload,
                          verified_wrong_reason, created_at)
SELECT %(first)s + (g %% %(conversations)s),
       CASE WHEN g %% 3 = 0 THEN 'out' ELSE 'in' END,
       CASE WHEN g %% 3 = 0 THEN (CASE WHEN g %% 2 = 0 THEN 'bot' ELSE 'agent' END) ELSE 'customer' END,
       NULL, 'text',
       CASE WHEN g %% 500 = 0 THEN 'mi cuenta es la 0102' || lpad((g %% 100000000)::text, 8, '0')
            ELSE (ARRAY[%(sentences)s])[1 + (g %% %(n_sentences)s)] END,
       'received', '', '{}'::jsonb, '', now() - ((g::float / %(total)s) * interval '90 days')
FROM generate_series(%(start)s, %(stop)s) AS g
"""


def build(escalations: int, messages: int, *, reuse: bool) -> None:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection

    from desk.models import Contact, Conversation, Escalation, Message

    call_command("migrate", verbosity=0)
    # The agents' own answers come on top of --messages, so a loaded database holds a few more.
    if reuse and Escalation.objects.count() == 2 * escalations and Message.objects.count() >= messages:
        print(f"reusing {messages:,} messages and {escalations:,} open escalations")
        return
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE desk_contact, desk_conversation, desk_message, desk_escalation, desk_event "
                       "RESTART IDENTITY CASCADE")
        # The text-search index is built once after the load (as the migration builds it on an existing
        # table), not row by row during it; its build time is reported.
        cursor.execute(f"DROP INDEX IF EXISTS {SEARCH_INDEX}")
    User = get_user_model()
    agents = [User.objects.get_or_create(username=f"bench-agent-{i}")[0] for i in range(AGENTS)]
    contacts = Contact.objects.bulk_create(
        Contact(channel="whatsapp", wa_id=f"58412{i:07d}", name=f"Cliente {i}", customer_id=f"C-{100000 + i}")
        for i in range(CONTACTS))
    conversations = Conversation.objects.bulk_create(
        Conversation(contact=c, channel="whatsapp") for c in contacts)
    first = min(c.pk for c in conversations)
    sentences = ", ".join("'" + s.replace("'", "''") + "'" for s in SENTENCES)
    batch = 200_000
    with connection.cursor() as cursor:
        for start in range(1, messages + 1, batch):
            stop = min(messages, start + batch - 1)
            cursor.execute(MESSAGES_SQL % {"first": first, "conversations": len(conversations), "total": messages,
                                           "start": start, "stop": stop, "sentences": sentences,
                                           "n_sentences": len(SENTENCES)})
            print(f"  {stop:,} messages ({time.perf_counter() - started:.0f} s)", flush=True)
    loaded = time.perf_counter()
    index = next(i for i in Message._meta.indexes if i.name == SEARCH_INDEX)
    with connection.schema_editor() as editor:
        editor.add_index(Message, index)
    print(f"  text-search index built in {time.perf_counter() - loaded:.0f} s", flush=True)
    rng = random.Random(2026)
    held = rng.sample(range(escalations), escalations // 3)
    held_set = set(held)
    open_rows, updates = [], []
    for i in range(escalations):
        conversation = conversations[i]
        agent = agents[i % AGENTS] if i in held_set else None
        if agent:
            updates.append(Conversation(pk=conversation.pk, handler="human", assignee=agent))
        open_rows.append(Escalation(conversation=conversation, reason=rng.choice(
            ["NO_CONTEXT", "USER_REQUEST", "TOOL_ERROR", "UNGROUNDED_OUTPUT"]), summary="Resumen",
            status="taken" if agent else "open"))
    Conversation.objects.bulk_update(updates, ["handler", "assignee"], batch_size=5000)
    Escalation.objects.bulk_create(open_rows, batch_size=5000)
    answered = [Message(conversation_id=conversations[i].pk, direction="out", author="agent",
                        agent=agents[i % AGENTS], text="ya lo reviso") for i in held[::2]]
    Message.objects.bulk_create(answered, batch_size=5000)
    # What desk.services.agent_reply_send keeps on the conversation (bulk_create bypasses it).
    with connection.cursor() as cursor:
        cursor.execute("""UPDATE desk_conversation c SET last_agent_reply_at = m.at
                          FROM (SELECT conversation_id, max(created_at) AS at FROM desk_message
                                WHERE author = 'agent' AND agent_id IS NOT NULL GROUP BY conversation_id) m
                          WHERE m.conversation_id = c.id""")
    # As many resolved ones, on other conversations, over 90 days.
    resolved = [Escalation(conversation=conversations[escalations + i], reason="NO_CONTEXT", summary="Resumen",
                           status="resolved") for i in range(escalations)]
    Escalation.objects.bulk_create(resolved, batch_size=5000)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE desk_escalation SET created_at = now() - (random() * interval '90 days') "
                       "WHERE status <> 'resolved'")
        cursor.execute("UPDATE desk_escalation SET resolved_at = now() - (random() * interval '90 days'), "
                       "created_at = now() - interval '91 days' WHERE status = 'resolved'")
        cursor.execute("VACUUM ANALYZE")
    print(f"built {Message.objects.count():,} messages and {escalations:,} open escalations in "
          f"{time.perf_counter() - started:.0f} s")


def _percentiles(timings: list[float]) -> tuple[float, float]:
    timings = sorted(timings)
    return statistics.median(timings), timings[min(len(timings) - 1, round(0.95 * (len(timings) - 1)))]


def _time(call, repeats: int) -> tuple[float, float, int]:
    timings, rows = [], 0
    for i in range(repeats + 2):
        started = time.perf_counter()
        result = call()
        elapsed = (time.perf_counter() - started) * 1000
        if i >= 2:
            timings.append(elapsed)
            rows = result
    return (*_percentiles(timings), rows)


def measure(repeats: int, messages: int) -> list[tuple[str, float, float, int]]:
    import datetime as dt

    from django.contrib.auth import get_user_model

    from desk.models import Conversation
    from desk.selectors import (
        VIEWS,
        QueueFilters,
        conversation_thread,
        escalation_counts,
        escalation_queue,
        message_search,
        view_counts,
    )

    agent = get_user_model().objects.get(username="bench-agent-3")
    conversation = Conversation.objects.order_by("pk")[1234]
    rows = [("baseline: one conversation's thread",
             *_time(lambda: len(conversation_thread(conversation=conversation)), repeats))]

    def page(filters):
        def run():
            listed = list(escalation_queue(agent=agent, filters=filters, limit=51))
            view_counts(agent=agent)
            escalation_counts()
            return len(listed)
        return run

    for view in VIEWS:
        rows.append((f"view: {VIEWS[view].lower()}", *_time(page(QueueFilters(view=view)), repeats)))
    week = clock.today() - dt.timedelta(days=7)
    rows.append(("view: resolved, last 7 days",
                 *_time(page(QueueFilters(view="resolved", resolved_since=week)), repeats)))
    rows.append(("view: open, search by name", *_time(page(QueueFilters(search="Cliente 42")), repeats)))
    rng = random.Random(7)
    for name, text in SEARCHES:
        def search(text=text):
            typed = text or "0102" + f"{rng.randrange(500, messages, 500):08d}"
            hits, _ = message_search(text=typed)
            return len(hits)
        rows.append((f"message search: {name}", *_time(search, repeats)))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--escalations", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--reuse", action="store_true", help="keep an already loaded database of the same size")
    args = parser.parse_args()
    if args.escalations * 2 > CONTACTS:
        parser.error(f"--escalations is at most {CONTACTS // 2:,} (one conversation each, open and resolved)")

    from config import embedded_db

    if not os.environ.get("DATABASE_URL"):
        embedded_db.ensure_running()
    import django

    django.setup()
    build(args.escalations, args.messages, reuse=args.reuse)
    rows = measure(args.repeats, args.messages)
    base = rows[0][2] or 1e-9
    print(f"\n{args.messages:,} messages · {args.escalations:,} open escalations · {args.repeats} runs each")
    print(f"{'page':42} {'p50 ms':>8} {'p95 ms':>8} {'p95/base':>9} {'rows':>5}  target p95 ≤ 150 ms")
    worst = 0.0
    for name, p50, p95, seen in rows:
        worst = max(worst, p95) if not name.startswith("baseline") else worst
        print(f"{name:42} {p50:8.1f} {p95:8.1f} {p95 / base:9.1f} {seen:5d}  {'ok' if p95 <= 150 else 'SLOW'}")
    print(f"\nworst p95 {worst:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
