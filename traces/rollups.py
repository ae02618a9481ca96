"""Hourly rollups of the traces: built by one SQL statement, rebuilt idempotently, read live for recent hours.

`rollup_select_sql` is the only place that turns traces into rollup rows. The rebuild inserts what it
selects (delete and insert per range of hours, in one transaction, under an advisory lock so a beat run and
a command run never interleave); the dashboard reads the same SELECT for the hours not rolled yet (the
current one), so a live hour and a rolled hour are counted by the same rule.

Whole local days are summed once more, in the same transaction: into DailyRollup (the same dimensions) and
from those into DailyOutcomeRollup (without the escalation reason and the agent): the dashboard reads whole
days from them.

A rolled hour changes after the fact when someone marks one of its answers wrong, a complaint is made or
withdrawn, or a person first replies to one of its escalations: `rollups_roll_recent` rebuilds those hours
too, found from the marks made since its previous window.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from core import clock
from traces.models import DailyOutcomeRollup, DailyRollup, HourlyRollup, RolledHour
from traces.rollup_stats import LATENCY_EDGES_MS, REPLY_EDGES_S, STAGES

HOUR = dt.timedelta(hours=1)
LOCK_KEY = 0x7261_6C6C  # pg_advisory_xact_lock key of rollup writes ("rall")
CATCH_UP_HOURS = 48  # the beat task fills at most this many missing hours per run; older gaps: the command
MARKS_WINDOW = dt.timedelta(hours=2)  # marks made this recently re-roll their turns' hours (runs overlap)

COLUMNS = ["hour", "channel", "language", "route", "outcome", "escalation_reason", "configuration_id", "agent_id",
           "turns", "answered", "escalated", "silenced", "clarify", "declined", "verified_wrong", "complaints",
           "suspected_complaints", "flagged", "tokens_in", "tokens_out", "cost", "latency_hist", "stage_latency_hist",
           "first_reply_hist"]
GROUP = COLUMNS[:8]
COUNTS = COLUMNS[8:COLUMNS.index("cost") + 1]  # the counts, the tokens and the cost: summed
# DailyOutcomeRollup's dimensions: the daily ones without the escalation reason and the handling agent.
OUTCOME_GROUP = [c for c in GROUP[1:] if c not in ("escalation_reason", "agent_id")]
HISTOGRAMS = {"latency_hist": len(LATENCY_EDGES_MS) + 1,  # int[] columns and their lengths: summed bucket-wise
              "stage_latency_hist": (len(LATENCY_EDGES_MS) + 1) * len(STAGES),
              "first_reply_hist": len(REPLY_EDGES_S) + 1}


# The local midnight (TIME_ZONE, bound as %(tz)s) of the day holding a row's `hour`: a daily row's day_start.
LOCAL_DAY_START = "(((hour AT TIME ZONE %(tz)s)::date)::timestamp AT TIME ZONE %(tz)s)"


def day_floor(moment: dt.datetime) -> dt.datetime:
    """Return the local midnight (TIME_ZONE) that starts the day holding `moment`."""
    local = timezone.localtime(moment)
    return timezone.make_aware(dt.datetime.combine(local.date(), dt.time.min))


def hour_floor(moment: dt.datetime) -> dt.datetime:
    """Return the start of the UTC hour holding `moment`."""
    return moment.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)


def _edges(edges) -> str:
    return "ARRAY[" + ",".join(f"{float(e)!r}" for e in edges) + "]::float8[]"


def _counts(column: str, edges) -> str:
    """SQL for the histogram of a per-turn bucket column: one count per bucket, as an int[]."""
    return "ARRAY[" + ", ".join(f"count(*) FILTER (WHERE {column} = {i})" for i in range(len(edges) + 1)) + "]::int[]"


def _vector(sql: str) -> str:
    return f"({sql})::vector"


def _number(json_path: str) -> str:
    return (f"(CASE WHEN jsonb_typeof({json_path}) = 'number' THEN ({json_path})::text::numeric ELSE 0 END)")


def rollup_select_sql() -> str:
    """Return the SELECT of rollup rows (COLUMNS, in order) for the turns with %(start)s <= created_at < %(end)s.

    Tokens: the writer's usage as the OpenAI API reports it (prompt_tokens / completion_tokens, or
    input_tokens / output_tokens). Cost: what the turn's model calls cost when it ran (Trace.cost). Stage latencies: bot/turn.py's recorder names, write_2 and verify_2 added
    to write and verify. First reply: the first message a person wrote in the conversation at or after the
    turn's escalation, and its author is the handling agent.
    """
    stage_columns = ", ".join(f"width_bucket(st.{stage}, {_edges(LATENCY_EDGES_MS)}) AS b_{stage}"
                              for stage in STAGES)
    stage_sums = ", ".join(f"sum(v) FILTER (WHERE s = '{stage}') AS {stage}" for stage in STAGES)
    stage_hist = " || ".join(_counts("b_" + stage, LATENCY_EDGES_MS) for stage in STAGES)
    usage = "t.token_usage"
    return f"""
        WITH turn AS (
            SELECT date_trunc('hour', t.created_at) AS hour, t.channel, t.language, t.route, t.outcome,
                   t.escalation_reason, t.configuration_id, fr.agent_id,
                   (wrong.id IS NOT NULL) AS is_wrong,
                   EXISTS (SELECT 1 FROM desk_complaintsignal c WHERE c.message_id = t.reply_id
                           AND c.certainty = 'confirmed') AS is_complaint,
                   EXISTS (SELECT 1 FROM desk_complaintsignal c WHERE c.message_id = t.reply_id
                           AND c.certainty = 'suspected') AS is_suspected,
                   {_number(usage + "->'prompt_tokens'")} + {_number(usage + "->'input_tokens'")} AS tokens_in,
                   {_number(usage + "->'completion_tokens'")} + {_number(usage + "->'output_tokens'")}
                       AS tokens_out,
                   t.cost AS cost,
                   width_bucket(t.total_ms, {_edges(LATENCY_EDGES_MS)}) AS b_total,
                   width_bucket(extract(epoch FROM fr.created_at - e.created_at)::float8,
                                {_edges(REPLY_EDGES_S)}) AS b_reply,
                   {stage_columns}
            FROM traces_trace t
            LEFT JOIN desk_message wrong ON wrong.id = t.reply_id AND wrong.verified_wrong_at IS NOT NULL
            LEFT JOIN desk_escalation e ON e.id = t.escalation_id
            LEFT JOIN LATERAL (
                SELECT m.agent_id, m.created_at FROM desk_message m
                WHERE m.conversation_id = e.conversation_id AND m.author = 'agent' AND m.created_at >= e.created_at
                ORDER BY m.created_at, m.id LIMIT 1) fr ON true
            CROSS JOIN LATERAL (
                SELECT {stage_sums}
                FROM (SELECT regexp_replace(key, '_[0-9]+$', '') AS s,
                             CASE WHEN jsonb_typeof(value) = 'number' THEN value::text::float8 END AS v
                      FROM jsonb_each(CASE WHEN jsonb_typeof(t.latency_ms) = 'object' THEN t.latency_ms
                                           ELSE '{{}}'::jsonb END)) AS stage_row) st
            WHERE t.created_at >= %(start)s AND t.created_at < %(end)s
        )
        SELECT hour, channel, language, route, outcome, escalation_reason, configuration_id, agent_id,
               count(*) AS turns,
               count(*) FILTER (WHERE outcome = 'answered') AS answered,
               count(*) FILTER (WHERE outcome = 'escalated') AS escalated,
               count(*) FILTER (WHERE outcome = 'silenced') AS silenced,
               count(*) FILTER (WHERE outcome = 'clarify') AS clarify,
               count(*) FILTER (WHERE outcome = 'declined') AS declined,
               count(*) FILTER (WHERE is_wrong) AS verified_wrong,
               count(*) FILTER (WHERE is_complaint) AS complaints,
               count(*) FILTER (WHERE is_suspected AND NOT is_complaint) AS suspected_complaints,
               count(*) FILTER (WHERE is_wrong OR is_complaint) AS flagged,
               sum(tokens_in)::bigint AS tokens_in, sum(tokens_out)::bigint AS tokens_out,
               sum(cost)::float8 AS cost,
               {_vector(_counts('b_total', LATENCY_EDGES_MS))} AS latency_hist,
               {_vector(stage_hist)} AS stage_latency_hist,
               {_vector(_counts('b_reply', REPLY_EDGES_S))} AS first_reply_hist
        FROM turn
        GROUP BY {", ".join(GROUP)}
    """  # noqa: S608 - built from constants only; the range is bound


@dataclass(frozen=True)
class RebuildReport:
    hours: int
    rows: int


def rollups_rebuild(*, start: dt.datetime, end: dt.datetime, now: dt.datetime | None = None,
                    chunk: dt.timedelta = dt.timedelta(days=1)) -> RebuildReport:
    """Rebuild the rollup rows of every hour in [hour of start, hour of end); rebuilding twice changes nothing.

    Each chunk of hours (up to the next local midnight by default) is one transaction: its old rows are deleted and the new ones
    inserted under an advisory lock, so a reader sees either the old hour or the new one, and two rebuilds
    of the same hour wait for each other instead of inserting it twice. The current hour (`now`) and any later
    one are never rolled: the dashboard reads them live.
    """
    now = now or clock.now()
    first, last = hour_floor(start), min(hour_floor(end), hour_floor(now))
    hours = rows = 0
    cursor_at = first
    while cursor_at < last:
        # Chunks end at a local midnight, so each day's DailyRollup is summed once, from whole hours (a chunk
        # of 24 UTC hours from any other hour spans two local days, and summed each twice).
        boundary = day_floor(cursor_at + chunk)
        upto = min(last, boundary if boundary > cursor_at else cursor_at + chunk)
        rows += _rebuild_range(cursor_at, upto, now)
        hours += int((upto - cursor_at) / HOUR)
        cursor_at = upto
    return RebuildReport(hours=hours, rows=rows)


@transaction.atomic
def _rebuild_range(start: dt.datetime, end: dt.datetime, now: dt.datetime) -> int:
    table = HourlyRollup._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [LOCK_KEY])
        cursor.execute(f"DELETE FROM {table} WHERE hour >= %s AND hour < %s", [start, end])  # noqa: S608
        cursor.execute(f"INSERT INTO {table} ({', '.join(COLUMNS)}) {rollup_select_sql()}",  # noqa: S608
                       {"start": start, "end": end})
        inserted = cursor.rowcount
    _rebuild_days(day_floor(start), end)
    hours = []
    at = start
    while at < end:
        hours.append(RolledHour(hour=at, rolled_at=now))
        at += HOUR
    RolledHour.objects.bulk_create(hours, update_conflicts=True, unique_fields=["hour"], update_fields=["rolled_at"])
    return inserted


def _rebuild_days(start: dt.datetime, end: dt.datetime) -> None:
    """Sum the hourly rows of the local days from `start` (a local midnight) through the day holding `end`
    into DailyRollup, and those into DailyOutcomeRollup. Call inside the transaction that wrote the hours,
    holding the rollup lock."""
    daily, hourly = DailyRollup._meta.db_table, HourlyRollup._meta.db_table
    outcome = DailyOutcomeRollup._meta.db_table
    last = day_floor(end - dt.timedelta(microseconds=1))
    finish = timezone.make_aware(dt.datetime.combine(timezone.localtime(last).date() + dt.timedelta(days=1),
                                                     dt.time.min))
    dims, outcome_dims = ", ".join(GROUP[1:]), ", ".join(OUTCOME_GROUP)
    measures = f"{', '.join(COUNTS)}, {', '.join(HISTOGRAMS)}"
    sums = ", ".join(f"sum({c})" for c in [*COUNTS, *HISTOGRAMS])  # pgvector's sum() is element-wise
    days = {"tz": settings.TIME_ZONE, "start": start, "end": finish}
    with connection.cursor() as cursor:
        for table in (daily, outcome):
            cursor.execute(f"DELETE FROM {table} WHERE day_start >= %(start)s AND day_start < %(end)s",  # noqa: S608
                           days)
        cursor.execute(f"""
            INSERT INTO {daily} (day_start, {dims}, {measures})
            SELECT {LOCAL_DAY_START}, {dims}, {sums}
            FROM {hourly} WHERE hour >= %(start)s AND hour < %(end)s
            GROUP BY 1, {dims}""", days)  # noqa: S608
        # From the daily rows just written (~310 a day at 1M traces), not the hours again: fewer rows to sum.
        cursor.execute(f"""
            INSERT INTO {outcome} (day_start, {outcome_dims}, {measures})
            SELECT day_start, {outcome_dims}, {sums}
            FROM {daily} WHERE day_start >= %(start)s AND day_start < %(end)s
            GROUP BY day_start, {outcome_dims}""", days)  # noqa: S608


def last_rolled_hour() -> dt.datetime | None:
    """Return the latest hour the rollups hold, or None before the first rollup."""
    return RolledHour.objects.order_by("-hour").values_list("hour", flat=True).first()


def hours_marked_since(since: dt.datetime) -> list[dt.datetime]:
    """Return the hours of the turns that got a verified-wrong mark, a complaint (or its withdrawal) or a first
    human reply to their escalation at or after `since` — the rolled hours whose counts are now stale."""
    with connection.cursor() as cursor:
        # One indexed probe per kind of mark (reply_id and escalation_id are unique): an OR of the three made
        # PostgreSQL read every trace.
        cursor.execute("""
            SELECT date_trunc('hour', created_at) FROM traces_trace
            WHERE reply_id IN (SELECT id FROM desk_message WHERE verified_wrong_at >= %(since)s)
            UNION
            SELECT date_trunc('hour', created_at) FROM traces_trace
            WHERE reply_id IN (SELECT message_id FROM desk_complaintsignal WHERE created_at >= %(since)s)
            UNION
            SELECT date_trunc('hour', created_at) FROM traces_trace
            WHERE reply_id IN (SELECT (detail->>'message')::bigint FROM desk_event
                               WHERE kind = 'complaint_unmarked' AND created_at >= %(since)s
                                 AND detail->>'message' ~ '^[0-9]+$')
            UNION
            SELECT date_trunc('hour', created_at) FROM traces_trace
            WHERE escalation_id IN (
                -- the escalations a recent reply by a person answers first: opened before it, and after
                -- the previous reply a person wrote in that conversation
                SELECT e.id FROM desk_message m
                JOIN desk_escalation e ON e.conversation_id = m.conversation_id AND e.created_at <= m.created_at
                WHERE m.author = 'agent' AND m.created_at >= %(since)s
                  AND NOT EXISTS (SELECT 1 FROM desk_message p
                                  WHERE p.conversation_id = m.conversation_id AND p.author = 'agent'
                                    AND p.created_at >= e.created_at AND p.created_at < m.created_at))
            ORDER BY 1
        """, {"since": since})
        return [row[0] for row in cursor.fetchall()]


def first_unrolled_hour(last: dt.datetime | None, floor: dt.datetime) -> dt.datetime:
    """Return the hour after the last rolled one (`last`), but never before `floor`: the beat task catches up
    from there, and the dashboard reads live from there (older unrolled hours are reported missing)."""
    return max(floor, last + HOUR) if last else floor


def rollups_roll_recent(*, now: dt.datetime | None = None) -> RebuildReport:
    """Roll the completed hours not rolled yet (at most CATCH_UP_HOURS back) and re-roll the hours of the turns
    marked in the last MARKS_WINDOW (consecutive marked hours in one rebuild). The hourly beat task calls this."""
    now = now or clock.now()
    current = hour_floor(now)
    start = first_unrolled_hour(last_rolled_hour(), current - CATCH_UP_HOURS * HOUR)
    report = rollups_rebuild(start=start, end=current, now=now)
    hours, rows = report.hours, report.rows
    # Hours from `start` on were rolled just now, and the current one is read live.
    marked = sorted(hour for hour in hours_marked_since(now - MARKS_WINDOW) if hour < start)
    runs: list[list[dt.datetime]] = []
    for hour in marked:
        if runs and hour == runs[-1][1]:
            runs[-1][1] = hour + HOUR
        else:
            runs.append([hour, hour + HOUR])
    for run_start, run_end in runs:
        again = rollups_rebuild(start=run_start, end=run_end, now=now)
        hours, rows = hours + again.hours, rows + again.rows
    return RebuildReport(hours=hours, rows=rows)
