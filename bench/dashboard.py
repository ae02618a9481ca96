#!/usr/bin/env python
"""The dashboard at scale: 1M traces over 90 days, rolled up hourly, every dashboard view's queries p50/p95.

    .venv/bin/python bench/dashboard.py [--traces 1000000] [--repeats 20] [--reuse] [--views-only]

* Database: its own, `tracedesk_bench_dashboard` on the embedded server, migrated at every run.
* Data: the trace benchmark's generator (bench/traces.py: INSERT … SELECT generate_series inside PostgreSQL),
  plus what the dashboard reads and the browser does not: four configurations over the 90 days (a prompt
  change at day 30, an index change at day 60, a router change at day 80), the writer's token usage, an
  escalation and a person's first reply for 1 escalated turn in 10, verified-wrong marks and complaints on
  0.1 % of the turns each. `--reuse` keeps an already loaded table of the right size.
* Rollups: the full 90-day rebuild (`rollups_rebuild`, what `manage.py rollups_rebuild` runs) once, then the
  hourly beat task's work (`rollups_roll_recent` after un-rolling the last hour), `--repeats` times.
* Views: the dashboard of every range and slice (`traces.views.dashboard_sections.dashboard_build`, the exact queries the page
  runs), and its CSV, timed as a whole and, for 30 and 90 days, per query and as the whole rendered page;
  before them the rollup tables are vacuumed as autovacuum would have done after the rebuild. Baseline, same
  run: the dial's per-day counts read straight from the traces for the same range — what the page would cost
  without rollups.
Printed, not asserted. Target: every view p95 ≤ 200 ms at 1M traces; the hourly task well under a minute.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import os
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

from core import clock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
_spec = importlib.util.spec_from_file_location("bench_traces", ROOT / "bench" / "traces.py")
bench_traces = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_traces)  # names its own database: ours is set after
os.environ["EMBEDDED_PG_DATABASE"] = "tracedesk_bench_dashboard"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

DAYS = 90
# The day (from the start of the 90 days) each configuration starts, and the part it changes.
CONFIGURATION_DAYS = [0, 30, 60, 80]


def _swap(sql: str, old: str, new: str) -> str:
    """Replace one known piece of bench/traces.py's INSERT; a piece no longer there stops the bench instead of
    letting it run without what it measures."""
    if old not in sql:
        raise SystemExit(f"bench/traces.py's GENERATE_SQL no longer contains {old!r}: update bench/dashboard.py")
    return sql.replace(old, new)


def _generate_sql(configurations: list[str]) -> str:
    """The trace benchmark's INSERT, with a configuration by date and the writer's token usage."""
    sql = bench_traces.GENERATE_SQL
    day = "(%(days)s * g::float / %(total)s)"  # days from the start, as created_at counts them
    by_day = "CASE " + " ".join(f"WHEN {day} >= {start} THEN '{fp}'" for start, fp in
                                 reversed(list(zip(CONFIGURATION_DAYS, configurations)))) + " END"
    sql = _swap(sql, "internal_note, router_version)", "internal_note, router_version, configuration_id)")
    sql = _swap(sql, "'bench-router'\nFROM", f"'bench-router', {by_day}\nFROM")
    tokens = ("jsonb_build_object('prompt_tokens', 600 + hashint(g, 21) %% 900, "
              "'completion_tokens', 80 + hashint(g, 22) %% 200)")
    sql = _swap(sql, "'{}'::jsonb,\n       now() - ((g::float", f"{tokens},\n       now() - ((g::float")
    # Oldest first: g = 1 is 90 days ago (the original counts back from now as g grows).
    return _swap(sql, "now() - ((g::float / %(total)s) * interval '90 days')",
                 "now() - (((%(total)s - g)::float / %(total)s) * interval '90 days')")


def build(total: int, *, reuse: bool) -> None:
    from dataclasses import replace

    from django.core.management import call_command
    from django.db import connection

    from traces.fingerprint import ConfigurationParts
    from traces.models import Configuration, DailyOutcomeRollup, DailyRollup, HourlyRollup, RolledHour, Trace
    from traces.services import configuration_record

    call_command("migrate", verbosity=0)
    if reuse and Trace.objects.count() == total:
        print(f"reusing {total:,} traces")
        return
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE traces_trace, traces_reviewsession, traces_failureclass, desk_escalation, "
                       "desk_complaintsignal RESTART IDENTITY CASCADE")
        cursor.execute(bench_traces.HASHINT_SQL)
        cursor.execute(f"DROP INDEX IF EXISTS {bench_traces.SEARCH_INDEX}")  # the browser's, not read here
    for model in (HourlyRollup, DailyRollup, DailyOutcomeRollup, RolledHour):
        model.objects.all().delete()
    Configuration.objects.all().delete()
    base = ConfigurationParts(prompt_version="writer-7", model="gpt-4o-mini", router_version="rules-3",
                              index_version=11, kb_prune_margin=0.12, kb_context_min_score=0.835,
                              bot_max_rewrites=2, phrases_hash="0" * 16)
    parts = [base, replace(base, prompt_version="writer-8"), replace(base, prompt_version="writer-8", index_version=12),
             replace(base, prompt_version="writer-8", index_version=12, router_version="rules-4")]
    configurations = [configuration_record(parts=p) for p in parts]
    first_day = clock.now() - dt.timedelta(days=DAYS)
    for fp, start in zip(configurations, CONFIGURATION_DAYS):
        Configuration.objects.filter(pk=fp).update(first_seen_at=first_day + dt.timedelta(days=start))
    bench_traces.load(_generate_sql(configurations), total=total, started=started, days=DAYS)
    _desk_rows()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE traces_trace")
        cursor.execute("ANALYZE")
    print(f"built {total:,} traces in {time.perf_counter() - started:.0f} s", flush=True)


def _desk_rows() -> None:
    """Escalations with a first reply (1 escalated turn in 10), verified-wrong marks and complaints (0.1 % each)."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    agents = [get_user_model().objects.get_or_create(username=f"bench-agent-{i}")[0].pk for i in range(6)]
    with connection.cursor() as cursor:
        cursor.execute("""
            WITH picked AS (SELECT id, conversation_id, created_at, escalation_reason FROM traces_trace
                            WHERE outcome = 'escalated' AND id %% 10 = 0),
                 made AS (INSERT INTO desk_escalation (conversation_id, reason, summary, detail, suggested_reply,
                                                       internal_note, status, created_at)
                          SELECT conversation_id, escalation_reason, 'bench', '', '', '', 'resolved', created_at
                          FROM picked RETURNING id, conversation_id, created_at)
            SELECT 1""", {})
        cursor.execute("""
            UPDATE traces_trace t SET escalation_id = e.id FROM desk_escalation e
            WHERE t.id %% 10 = 0 AND t.outcome = 'escalated' AND e.conversation_id = t.conversation_id
              AND e.created_at = t.created_at""", {})
        cursor.execute("""
            INSERT INTO desk_message (conversation_id, direction, author, agent_id, kind, text, status, error, payload,
                                      verified_wrong_reason, created_at)
            SELECT e.conversation_id, 'out', 'agent', (%(agents)s::bigint[])[1 + e.id %% 6], 'text', 'hola', 'sent',
                   '', '{}'::jsonb, '', e.created_at + (60 + (e.id * 7919) %% 3600) * interval '1 second'
            FROM desk_escalation e""", {"agents": agents})
        cursor.execute("""
            WITH picked AS (SELECT id, conversation_id, created_at FROM traces_trace
                            WHERE outcome = 'answered' AND id %% 500 IN (1, 2)),
                 made AS (INSERT INTO desk_message (conversation_id, direction, author, kind, text, status, error,
                                                    payload, verified_wrong_reason, verified_wrong_at, created_at,
                                                    provider_message_id)
                          SELECT conversation_id, 'out', 'bot', 'text', 'x', 'sent', '', '{}'::jsonb,
                                 CASE WHEN id %% 500 = 1 THEN 'wrong' ELSE '' END,
                                 CASE WHEN id %% 500 = 1 THEN created_at END, created_at, 'bench-reply-' || id
                          FROM picked RETURNING id, provider_message_id)
            UPDATE traces_trace t SET reply_id = made.id FROM made
            WHERE made.provider_message_id = 'bench-reply-' || t.id""", {})
        cursor.execute("""
            INSERT INTO desk_complaintsignal (message_id, source, certainty, detail, at, created_at)
            SELECT m.id, 'agent', 'confirmed', '', m.created_at, m.created_at FROM desk_message m
            WHERE m.provider_message_id LIKE 'bench-reply-%%' AND m.verified_wrong_at IS NULL""", {})


_percentiles = bench_traces._percentiles  # p50 and p95, as every benchmark here reports them


def roll(repeats: int) -> None:

    from traces.models import DailyOutcomeRollup, DailyRollup, HourlyRollup, RolledHour
    from traces.rollups import HOUR, hour_floor, rollups_rebuild, rollups_roll_recent

    now = clock.now()
    started = time.perf_counter()
    report = rollups_rebuild(start=now - dt.timedelta(days=DAYS + 1), end=now, now=now)
    full = time.perf_counter() - started
    print(f"\nfull rebuild: {report.hours:,} hours → {report.rows:,} rollup rows in {full:.1f} s "
          f"({HourlyRollup.objects.count():,} hourly rows stored, {DailyRollup.objects.count():,} daily, "
          f"{DailyOutcomeRollup.objects.count():,} daily without reason and agent)")
    timings = []
    for i in range(repeats):
        # The beat's hourly run: the last completed hour is not rolled yet (and marks of the last 2 hours re-roll).
        last = hour_floor(now) - HOUR
        RolledHour.objects.filter(hour__gte=last).delete()
        HourlyRollup.objects.filter(hour__gte=last).delete()
        started = time.perf_counter()
        rollups_roll_recent(now=now)
        timings.append((time.perf_counter() - started) * 1000)
    p50, p95 = _percentiles(timings)
    print(f"hourly task (rollups_roll_recent, one hour ≈ {report.rows // max(1, report.hours)} rows): "
          f"p50 {p50:.0f} ms, p95 {p95:.0f} ms over {repeats} runs")


def vacuum() -> None:
    """Do what autovacuum does within a minute of a rebuild this size: the reads by reason and by agent are
    index-only scans, which skip the table only for pages marked all-visible. (The embedded server stops when
    the bench exits, so autovacuum may not have run since the rebuild.)"""
    from django.db import connection

    from traces.models import DailyOutcomeRollup, DailyRollup, HourlyRollup

    with connection.cursor() as cursor:
        for model in (HourlyRollup, DailyRollup, DailyOutcomeRollup):
            cursor.execute(f"VACUUM ANALYZE {model._meta.db_table}")


BROKEN_DOWN = ("30 days", "90 days (custom)")  # the views whose queries are timed one by one


def views(repeats: int) -> None:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.http import QueryDict
    from django.utils import timezone

    from traces import dashboard
    from traces.models import Configuration, Trace
    from traces.views.dashboard_request import parse_request
    from traces.views.dashboard_sections import dashboard_build

    fps = list(Configuration.objects.order_by("first_seen_at").values_list("fingerprint", flat=True))
    agent = (get_user_model().objects.filter(username="bench-agent-1").values_list("pk", flat=True)
             .first())
    rng = random.Random(2026)
    cases = [
        ("today", "all", lambda: {"range": "today"}),
        ("7 days", "all", lambda: {"range": "7d"}),
        ("30 days", "all", lambda: {"range": "30d"}),
        ("90 days (custom)", "all", lambda: {"range": "custom", "from": (clock.today() - dt.timedelta(
            days=89)).isoformat(), "to": clock.today().isoformat()}),
        ("30 days + channel + route", "all", lambda: {"range": "30d", "channel": rng.choice(["whatsapp", "webchat"]),
                                                      "route": rng.choice(["document", "account"])}),
        ("30 days + compare", "all", lambda: {"range": "30d", "a": fps[0], "b": fps[-1]}),
        ("30 days, an agent's own", "own", lambda: {"range": "30d"}),
    ]
    now = clock.now()

    def baseline(days: int) -> float:
        """The dial's per-day counts straight from the traces: what the page would cost without rollups."""
        since = now - dt.timedelta(days=days)
        started = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute("SELECT (created_at AT TIME ZONE %s)::date, count(*), "
                           "count(*) FILTER (WHERE outcome = 'escalated') FROM traces_trace "
                           "WHERE created_at >= %s GROUP BY 1", [settings.TIME_ZONE, since])
            cursor.fetchall()
        return (time.perf_counter() - started) * 1000

    base = {days: _percentiles([baseline(days) for _ in range(max(3, repeats // 4))]) for days in (7, 30)}
    print(f"\nbaseline, same run — the dial's day counts read from {Trace.objects.count():,} traces directly: "
          f"7 days p95 {base[7][1]:.0f} ms, 30 days p95 {base[30][1]:.0f} ms")
    per_query: dict[str, list[float]] = defaultdict(list)

    def timed(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            body = sql.split(dashboard.READ_MARK)[-1]
            per_query[" ".join(body.split())[:70]].append((time.perf_counter() - started) * 1000)

    print(f"\n{'dashboard view':30} {'p50 ms':>8} {'p95 ms':>8} {'queries':>8} {'p95 / 30-day baseline':>22}")
    snapshots = {}
    for name, scope, make in cases:
        timings, count = [], 0
        for i in range(repeats + 1):
            query = QueryDict(mutable=True)
            query.update(make())
            parsed = parse_request(query, today=timezone.localdate(now), agent_id=agent if scope == "own" else None)
            per_query.clear() if i == 1 else None  # after the warm-up, as the view's own timings
            with connection.execute_wrapper(timed):
                started = time.perf_counter()
                dashboard_build(parsed, scope=scope, now=clock.now())
                elapsed = (time.perf_counter() - started) * 1000
            if i:  # one warm-up
                timings.append(elapsed)
        count = sum(len(v) for v in per_query.values())
        p50, p95 = _percentiles(timings)
        print(f"{name:30} {p50:8.1f} {p95:8.1f} {count // repeats if name in BROKEN_DOWN else '':>8} "
              f"{p95 / base[30][1]:22.3f}")
        if name in BROKEN_DOWN:
            snapshots[name] = {k: list(v) for k, v in per_query.items()}
    for name, snapshot in snapshots.items():
        print(f"\nthe {name} view, query by query (p50 / p95 ms):")
        for body, timings in sorted(snapshot.items(), key=lambda kv: -_percentiles(kv[1])[1]):
            print(f"  {_percentiles(timings)[0]:8.1f} {_percentiles(timings)[1]:8.1f}  {body}")
    pages(repeats, [case for case in cases if case[0] in BROKEN_DOWN])


def pages(repeats: int, cases) -> None:
    """Time the whole page as a supervisor gets it: the view, its queries and the template (~1,000 links and
    the charts at 90 days), without the network and the middleware."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.contrib.messages.storage.fallback import FallbackStorage
    from django.test import RequestFactory

    from core.roles import ensure_roles
    from traces.views.dashboard import dashboard_page

    ensure_roles()
    supervisor = get_user_model().objects.get_or_create(username="bench-supervisor")[0]
    supervisor.groups.add(Group.objects.get(name="supervisor"))
    print("\nthe whole page (view, queries and template):")
    for name, _, make in cases:
        timings = []
        for i in range(repeats + 1):
            request = RequestFactory().get("/dashboard/", make())
            request.user, request.session = supervisor, {}
            request._messages = FallbackStorage(request)
            started = time.perf_counter()
            response = dashboard_page(request)
            if i:
                timings.append((time.perf_counter() - started) * 1000)
        p50, p95 = _percentiles(timings)
        print(f"  {name:28} {p50:8.1f} {p95:8.1f}  ({len(response.content):,} bytes)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--traces", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--reuse", action="store_true", help="keep an already loaded table of the same size")
    parser.add_argument("--views-only", action="store_true", help="with --reuse: keep the rollups, time the views")
    args = parser.parse_args()

    from config import embedded_db

    if not os.environ.get("DATABASE_URL"):
        embedded_db.ensure_running()
    import django

    django.setup()
    build(args.traces, reuse=args.reuse)
    if not (args.reuse and args.views_only):
        roll(max(3, args.repeats // 4))
    vacuum()
    views(args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
