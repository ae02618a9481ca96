#!/usr/bin/env python
"""Trace browser at scale: the first page (and its count) of every filter and text search, p50/p95.

    .venv/bin/python bench/traces.py [--traces 1000000] [--repeats 30] [--keep] [--reuse]

* Database: its own, `tracedesk_bench_traces` on the embedded server (EMBEDDED_PG_DATABASE is set before
  django.setup(); `config.embedded_db.ensure_running()` creates it), migrated at every run.
* Data: N traces spread over 90 days, generated inside PostgreSQL (INSERT … SELECT generate_series — faster
  than COPY from Python on a 2-core machine because no row crosses the socket), with the real JSON shapes
  of `attempts` so the generated `verdict` / `has_derived` columns are computed by the database as in
  production; plus review notes on 0.2 % of traces (some classified), 0.1 % "verified wrong" replies and
  tagged session items. `--reuse` keeps an already loaded table of the right size.
  Queries, replies and internal notes are drawn from a few dozen real-looking sentences (es and en, with
  accents), and one trace in 50 names an account number, so a text search can hit a common word, a rare
  one or a single trace.
* Timing: each filter's first page through `traces.selectors.trace_page` — the exact query the browser runs
  (keyset on created_at, id; 50 rows) — plus the page's count (`trace_count`, exact up to 1,000, then
  PostgreSQL's estimate, `trace_count_estimate`), over
  `--repeats` random parameter values; baseline: the unfiltered page in the same run. The filter choices
  (distinct values of seven columns) are timed once per repeat. Printed, not asserted. Target: p95 ≤ 200 ms.
  `--traces` sets the size (default 1,000,000); `--only text` times the text searches alone.
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
os.environ["EMBEDDED_PG_DATABASE"] = "tracedesk_bench_traces"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

OUTCOMES = ["answered", "escalated", "silenced"]
REASONS = ["NO_CONTEXT", "USER_REQUEST", "CAPABILITY_MISSING", "UNGROUNDED", "BILLING_DOWN", "UNSUPPORTED_MEDIA"]
ROUTES = ["document", "account", "human", "unsupported"]
PROMPTS = [f"v{i}" for i in range(1, 9)] + ["template-1"]
MODELS = ["template", "gpt-4o-mini", "qwen2.5-7b", "llama-3.1-8b"]

GENERATE_SQL = """
INSERT INTO traces_trace (conversation_id, provider_message_id, channel, customer_id, language, route,
    routing_rule, outcome, escalation_reason, silenced_at, query, retrieval, tool_calls, evidence, prompt_version,
    model, attempts, humanizer, final_text, citations, index_version, latency_ms, total_ms, token_usage, created_at,
    internal_note, router_version)
SELECT %(first_conversation)s + (g %% %(conversations)s),
       'wamid.bench' || g,
       CASE WHEN g %% 3 = 0 THEN 'webchat' ELSE 'whatsapp' END,
       'C-' || (1000 + g %% 5000),
       CASE WHEN g %% 4 = 0 THEN 'en' ELSE 'es' END,
       (ARRAY['document','account','human','unsupported'])[1 + (hashint(g, 1) %% 4)],
       'rule-' || (g %% 20),
       o.outcome,
       CASE WHEN o.outcome = 'escalated'
            THEN (ARRAY['NO_CONTEXT','USER_REQUEST','CAPABILITY_MISSING','UNGROUNDED','BILLING_DOWN',
                        'UNSUPPORTED_MEDIA'])[1 + (hashint(g, 2) %% 6)] ELSE '' END,
       CASE WHEN o.outcome = 'silenced' THEN 'gate' ELSE '' END,
       CASE WHEN g %% 4 = 0 THEN (ARRAY[%(queries_en)s])[1 + (hashint(g, 11) %% %(n_queries_en)s)]
            ELSE (ARRAY[%(queries_es)s])[1 + (hashint(g, 11) %% %(n_queries_es)s)] END
         || CASE WHEN hashint(g, 12) %% 50 = 0 THEN ' cuenta ' || (7000000 + g) ELSE '' END,
       '[{"rank": 1, "chunk_id": 1, "doc": "reconexion-fibra-es", "section": "Tarifas", "vector_score": 0.8,
          "text_rank": 1, "matched_by_text": true, "matched_by_identifier": false, "rrf": 0.03, "kept": true,
          "prune_reason": ""}]'::jsonb,
       '[]'::jsonb,
       '[{"id": "E1", "kind": "chunk", "text": "La reconexion cuesta Bs. 350,00", "doc": "reconexion-fibra-es"}]'::jsonb,
       (ARRAY['v1','v2','v3','v4','v5','v6','v7','v8','template-1'])[1 + (hashint(g, 3) %% 9)],
       (ARRAY['template','gpt-4o-mini','qwen2.5-7b','llama-3.1-8b'])[1 + (hashint(g, 4) %% 4)],
       CASE WHEN o.outcome <> 'answered' AND hashint(g, 5) %% 2 = 0 THEN '[]'::jsonb
            WHEN hashint(g, 6) %% 10 < 7 THEN
              '[{"attempt": 1, "reply": "Bs. 350,00 [E1]", "verdict": {"grounded": true, "problems": [],
                 "warnings": [], "derived": []}}]'::jsonb
            WHEN hashint(g, 6) %% 10 < 9 THEN
              '[{"attempt": 1, "reply": "Bs. 999 [E1]", "verdict": {"grounded": false, "problems":
                 [{"token": "999", "sentence": "Bs. 999", "reason": "not in evidence"}], "warnings": [],
                 "derived": []}}, {"attempt": 2, "reply": "Bs. 700 [E1]", "verdict": {"grounded": true,
                 "problems": [], "warnings": [], "derived": [{"token": "700", "expression": "350+350"}]}}]'::jsonb
            ELSE
              '[{"attempt": 1, "reply": "Bs. 1", "verdict": {"grounded": false, "problems": [{"token": "1"}],
                 "warnings": [], "derived": []}}, {"attempt": 2, "reply": "Bs. 1", "verdict": {"grounded": false,
                 "problems": [{"token": "1"}], "warnings": [], "derived": []}}]'::jsonb END,
       '{}'::jsonb,
       CASE WHEN o.outcome = 'answered' THEN (ARRAY[%(replies)s])[1 + (hashint(g, 13) %% %(n_replies)s)] ELSE '' END,
       '["E1"]'::jsonb,
       1 + hashint(g, 7) %% 12,
       '{"gate": 1, "route": 2, "retrieve": 40, "write_1": 300, "verify_1": 3}'::jsonb,
       (50 + (hashint(g, 8) %% 3000) + CASE WHEN hashint(g, 9) %% 100 = 0 THEN 20000 ELSE 0 END)::float,
       '{}'::jsonb,
       now() - ((g::float / %(total)s) * interval '90 days'),
       CASE WHEN o.outcome = 'escalated' THEN (ARRAY[%(notes)s])[1 + (hashint(g, 14) %% %(n_notes)s)] ELSE '' END,
       'bench-router'
FROM generate_series(%(start)s, %(stop)s) AS g,
     LATERAL (SELECT CASE WHEN hashint(g, 10) %% 10 < 7 THEN 'answered'
                          WHEN hashint(g, 10) %% 10 < 9 THEN 'escalated' ELSE 'silenced' END AS outcome) o
"""

QUERIES_ES = [
    "¿Cuánto cuesta la reconexión de fibra?", "No entiendo mi factura de este mes", "Quiero cambiar de plan",
    "Me cobraron dos veces el recargo por mora", "¿Cuándo vence mi factura?", "hola buenas tardes",
    "mi internet no funciona desde ayer", "quiero hablar con una persona", "¿Por qué subió mi recibo?",
    "¿Cómo pago con transferencia?", "Necesito la factura fiscal", "¿Tienen promoción para el plan anual?",
]
QUERIES_EN = [
    "How much is the reconnection fee?", "Why is my bill higher this month?", "I want to change my plan",
    "I was charged twice for the late fee", "When is my invoice due?", "hello", "Can I pay by bank transfer?",
]
REPLIES = [
    "La reconexión cuesta Bs. 350,00 y se aplica en 24 horas.", "Tu factura vence el día 15 de cada mes.",
    "El cambio de plan se aplica en el próximo ciclo de facturación.", "The reconnection fee is 12 dollars.",
    "Your invoice is due on the 15th.", "Puedes pagar por transferencia bancaria o en la app.",
]
NOTES = [
    "Root cause: no chunk above the threshold for the question.", "Billing answered HTTP 503; nothing was said.",
    "The customer asked for a person.", "Causa: el recargo por mora se cobró dos veces en noviembre.",
    "The late fee was charged twice; credit note suggested.",
]


def _sql_array(values: list[str]) -> str:
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


SEARCH_INDEX = "trace_text_search"

HASHINT_SQL = """
CREATE OR REPLACE FUNCTION hashint(g bigint, salt int) RETURNS int LANGUAGE sql IMMUTABLE AS
$$ SELECT (((hashtextextended(g::text, salt) % 1000003) + 1000003) % 1000003)::int $$
"""


def load(sql: str, *, total: int, started: float, **extra) -> None:
    """Make 1,000 conversations, then insert `total` traces with `sql` (GENERATE_SQL or a variant of it) in
    batches inside PostgreSQL; `extra` fills any parameters a variant adds."""
    from django.db import connection

    from desk.models import Contact, Conversation

    Conversation.objects.all().delete()
    Contact.objects.all().delete()
    contacts = Contact.objects.bulk_create(Contact(channel="whatsapp", name=f"bench {i}") for i in range(1000))
    conversations = Conversation.objects.bulk_create(Conversation(contact=c, channel="whatsapp") for c in contacts)
    first = min(c.pk for c in conversations)
    batch = 200_000
    with connection.cursor() as cursor:
        for start in range(1, total + 1, batch):
            stop = min(total, start + batch - 1)
            cursor.execute(sql % {
                "first_conversation": first, "conversations": len(conversations), "total": total, "start": start,
                "stop": stop, "queries_es": _sql_array(QUERIES_ES), "n_queries_es": len(QUERIES_ES),
                "queries_en": _sql_array(QUERIES_EN), "n_queries_en": len(QUERIES_EN),
                "replies": _sql_array(REPLIES), "n_replies": len(REPLIES), "notes": _sql_array(NOTES),
                "n_notes": len(NOTES), **extra})
            print(f"  {stop:,} traces ({time.perf_counter() - started:.0f} s)", flush=True)


def build(total: int, *, reuse: bool) -> None:
    from django.core.management import call_command
    from django.db import connection

    from traces.models import Trace

    call_command("migrate", verbosity=0)
    if reuse and Trace.objects.count() == total:
        print(f"reusing {total:,} traces")
        return
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE traces_trace, traces_reviewsession, traces_failureclass RESTART IDENTITY CASCADE")
        cursor.execute(HASHINT_SQL)
        # The text-search index is built once after the load (as the migration builds it on an existing table),
        # not row by row during it; its build time is reported.
        cursor.execute(f"DROP INDEX IF EXISTS {SEARCH_INDEX}")
    load(GENERATE_SQL, total=total, started=started)
    _review_rows(total)
    loaded = time.perf_counter()
    index = next(i for i in Trace._meta.indexes if i.name == SEARCH_INDEX)
    with connection.schema_editor() as editor:
        editor.add_index(Trace, index)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_size_pretty(pg_relation_size(%s::regclass))", [SEARCH_INDEX])
        size = cursor.fetchone()[0]
    print(f"  text-search index built in {time.perf_counter() - loaded:.0f} s ({size})", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE traces_trace")
        cursor.execute("ANALYZE")
    print(f"built {total:,} traces in {time.perf_counter() - started:.0f} s")


def _review_rows(total: int) -> None:
    """Notes on 0.2 % of traces (half classified), 0.1 % verified-wrong replies, tagged session items."""
    import datetime as dt

    from django.contrib.auth import get_user_model
    from django.db import connection

    from desk.models import Message
    from traces.models import FailureClass, ReviewNote, ReviewSession, SessionTrace, Trace

    rng = random.Random(7)
    analyst, _ = get_user_model().objects.get_or_create(username="bench-analyst")
    ids = list(Trace.objects.order_by().values_list("pk", flat=True)[: total])
    now = clock.now()
    session = ReviewSession.objects.create(name="bench", window_start=now - dt.timedelta(days=90), window_end=now,
                                           seed=1, requested_size=len(ids) // 500)
    classes = [FailureClass.objects.create(session=session, name=f"class {i}", definition="d", stage="retrieval")
               for i in range(10)]
    noted = rng.sample(ids, max(1, len(ids) // 500))
    SessionTrace.objects.bulk_create(SessionTrace(session=session, trace_id=t, source="uniform", position=i)
                                     for i, t in enumerate(noted, 1))
    ReviewNote.objects.bulk_create(
        [ReviewNote(session=session, trace_id=t, author=analyst, verdict="fail", first_failure="x", stage="retrieval",
                    failure_class=classes[i % 10] if i % 2 else None) for i, t in enumerate(noted)], batch_size=5000)
    wrong = rng.sample(sorted(set(ids) - set(noted)), max(1, len(ids) // 1000))
    traces = Trace.objects.in_bulk(wrong)
    messages = Message.objects.bulk_create(
        Message(conversation_id=traces[t].conversation_id, direction="out", author="bot", text="x",
                provider_message_id=f"rec-bench-{t}", verified_wrong_at=now, verified_wrong_reason="wrong")
        for t in wrong)
    with connection.cursor() as cursor:
        cursor.executemany("UPDATE traces_trace SET reply_id = %s WHERE id = %s",
                           [(m.pk, t) for m, t in zip(messages, wrong)])
    start = len(noted) + 1
    SessionTrace.objects.bulk_create(SessionTrace(session=session, trace_id=t, source="verified_wrong", position=i)
                                     for i, t in enumerate(wrong, start))


def filter_cases(rng: random.Random):
    """Yield (name, function returning random GET params) for every browser filter."""
    from django.utils import timezone

    from traces.models import FailureClass

    classes = list(FailureClass.objects.values_list("pk", flat=True))

    def date_range():
        day = clock.today() - timezone.timedelta(days=rng.randint(1, 89))
        return {"since": day.isoformat(), "until": day.isoformat()}

    return [
        ("(baseline: no filter)", lambda: {}),
        ("date range (1 day)", date_range),
        ("outcome", lambda: {"outcome": rng.choice(OUTCOMES)}),
        ("escalation reason", lambda: {"escalation_reason": rng.choice(REASONS)}),
        ("route", lambda: {"route": rng.choice(ROUTES)}),
        ("language", lambda: {"language": rng.choice(["es", "en"])}),
        ("channel", lambda: {"channel": rng.choice(["whatsapp", "webchat"])}),
        ("verdict", lambda: {"verdict": rng.choice(["grounded", "rewritten", "ungrounded", "none"])}),
        ("derived numbers", lambda: {"derived": rng.choice(["yes", "no"])}),
        ("prompt version", lambda: {"prompt_version": rng.choice(PROMPTS)}),
        ("index version", lambda: {"index_version": str(rng.randint(1, 12))}),
        ("model", lambda: {"model": rng.choice(MODELS)}),
        ("has note", lambda: {"has_note": rng.choice(["yes", "no"])}),
        ("failure class", lambda: {"failure_class": str(rng.choice(classes))}),
        ("complaint-sourced", lambda: {"complaint_sourced": "yes"}),
        ("verified wrong", lambda: {"verified_wrong": rng.choice(["yes", "no"])}),
        ("latency above X", lambda: {"latency_above": str(rng.choice([100, 1000, 2500, 3000, 10000, 20500]))}),
        ("outcome + date range", lambda: {**date_range(), "outcome": rng.choice(OUTCOMES)}),
        ("reason typed in lower case", lambda: {"escalation_reason": rng.choice(REASONS).lower()}),
    ]


def search_cases(rng: random.Random, total: int):
    """Yield (name, function returning GET params) for text searches of every selectivity."""
    from django.utils import timezone

    def one_account():
        return {"text": str(7000000 + rng.randrange(0, total, 50))}  # may or may not exist: 0 or 1 trace

    def day():
        when = clock.today() - timezone.timedelta(days=rng.randint(1, 89))
        return {"since": when.isoformat(), "until": when.isoformat()}

    return [
        ("text: common word (factura)", lambda: {"text": rng.choice(["factura", "FACTURA", "facturas"])}),
        ("text: no accent typed", lambda: {"text": rng.choice(["reconexion", "cuando vence", "promocion"])}),
        ("text: English stem", lambda: {"text": rng.choice(["charges", "invoices", "bills"])}),
        ("text: phrase", lambda: {"text": rng.choice(['"late fee"', '"recargo por mora"'])}),
        ("text: internal note", lambda: {"text": rng.choice(["503", "threshold", "credit note"])}),
        ("text: rare number (0-1 trace)", one_account),
        ("text: no match", lambda: {"text": rng.choice(["zzyzx", "xylophone", "quux"])}),
        ("text + outcome", lambda: {"text": rng.choice(["factura", "plan"]), "outcome": rng.choice(OUTCOMES)}),
        ("text + 1 day", lambda: {**day(), "text": rng.choice(["factura", "reconexion", "charged"])}),
    ]


def _percentiles(timings: list[float]) -> tuple[float, float]:
    timings = sorted(timings)
    return statistics.median(timings), timings[min(len(timings) - 1, round(0.95 * (len(timings) - 1)))]


def measure(repeats: int, total: int, only: str = "") -> list[tuple[str, float, float, int, float]]:
    """Return (name, p50 page+count, p95 page+count, rows on the page, p95 of the count alone) per case."""
    from django.http import QueryDict

    from traces.selectors import (
        filter_choices,
        parse_trace_filters,
        trace_count,
        trace_count_estimate,
        trace_page,
    )

    rng = random.Random(2026)
    cases = [] if only == "text" else filter_cases(rng)
    cases += search_cases(rng, total)
    rows = []
    choice_timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        filter_choices()
        choice_timings.append((time.perf_counter() - started) * 1000)
    rows.append(("(filter choices from data)", *_percentiles(choice_timings), 0, 0.0))
    for name, params in cases:
        timings, count_timings, rows_seen = [], [], 0
        for i in range(repeats + 2):
            query = QueryDict(mutable=True)
            query.update(params())
            filters = parse_trace_filters(query)
            started = time.perf_counter()
            count, more = trace_count(filters=filters)
            if more:  # the page adds PostgreSQL's estimate beyond the exact count
                trace_count_estimate(filters=filters)
            counted = time.perf_counter()
            page, _ = trace_page(filters=filters, matches=None if more else count)  # as trace_page_and_count
            ended = time.perf_counter()
            if i >= 2:  # two warm-up runs per filter
                timings.append((ended - started) * 1000)
                count_timings.append((counted - started) * 1000)
                rows_seen += len(page)
        rows.append((name, *_percentiles(timings), rows_seen // len(timings), _percentiles(count_timings)[1]))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--traces", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--reuse", action="store_true", help="keep an already loaded table of the same size")
    parser.add_argument("--only", choices=["text"], default="", help="time the text searches only")
    args = parser.parse_args()

    from config import embedded_db

    if not os.environ.get("DATABASE_URL"):
        embedded_db.ensure_running()
    import django

    django.setup()
    build(args.traces, reuse=args.reuse)
    rows = measure(args.repeats, args.traces, args.only)
    base_p95 = (rows[1][2] if len(rows) > 1 else rows[0][2]) or 1e-9
    print(f"\n{args.traces:,} traces · first page of 50 + its count · {args.repeats} random parameter values per "
          f"filter")
    print(f"{'filter':32} {'p50 ms':>8} {'p95 ms':>8} {'p95/base':>9} {'rows':>5} {'count p95':>10}  "
          f"target p95 ≤ 200 ms")
    worst = 0.0
    for name, p50, p95, seen, count_p95 in rows:
        worst = max(worst, p95)
        print(f"{name:32} {p50:8.1f} {p95:8.1f} {p95 / base_p95:9.1f} {seen:5d} {count_p95:10.1f}  "
              f"{'ok' if p95 <= 200 else 'SLOW'}")
    print(f"\nworst p95 {worst:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
