"""Reads of the dashboard: every number from the hourly rollups, plus the hours not rolled yet read live.

`DashboardQuery` says which days and which slice (channel, language, route; an agent's own escalations).
Each read runs on one source: the rollup rows of the range's rolled hours UNION ALL the rollup SELECT of
traces/rollups.py over the hours after the last rolled one (the current hour, at most LIVE_MAX_HOURS), so
no read scans the traces table beyond those few hours.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection
from django.utils import timezone

from desk.models import Escalation
from traces.fingerprint import differences
from traces.models import Configuration, DailyRollup, HourlyRollup
from traces.rollup_stats import (
    LATENCY_EDGES_MS,
    REPLY_EDGES_S,
    STAGES,
    Percentile,
    percentile,
    stage_histograms,
)
from traces.rollups import (COLUMNS, HOUR, day_floor, first_unrolled_hour, hour_floor, last_rolled_hour,
                            rollup_select_sql)

LIVE_MAX_HOURS = 3
READ_MARK = "-- the dashboard's read of src:"  # where a query's own part starts (bench/dashboard.py times them)


@dataclass(frozen=True)
class DashboardQuery:
    first_day: dt.date
    last_day: dt.date  # included
    channel: str = ""
    language: str = ""
    route: str = ""
    agent_id: int | None = None  # an agent sees only the escalations they handled

    @property
    def days(self) -> list[dt.date]:
        return [self.first_day + dt.timedelta(days=i) for i in range((self.last_day - self.first_day).days + 1)]

    def start(self) -> dt.datetime:
        return timezone.make_aware(dt.datetime.combine(self.first_day, dt.time.min))

    def end(self) -> dt.datetime:
        return timezone.make_aware(dt.datetime.combine(self.last_day + dt.timedelta(days=1), dt.time.min))


@dataclass(frozen=True)
class Coverage:
    """Which part of the range came from rollups and which was read live; hours that are neither."""

    live_from: dt.datetime
    missing_from: dt.datetime | None  # unrolled hours older than the live window (the beat is behind)
    missing_until: dt.datetime | None


LIVE_TABLE = "dashboard_live_rollup"


def _ints(summed, length: int) -> list[int]:
    """Return a histogram summed by pgvector (real[] from SQL, None over no rows) as whole counts."""
    return [round(v) for v in summed] if summed is not None else [0] * length


class Source:
    """The rows of one query as a SQL CTE named `src`: whole rolled days from DailyRollup, the rolled hours of
    the day not complete yet from HourlyRollup, and the hours after the last rolled one computed once from the
    traces into a temporary table."""

    def __init__(self, query: DashboardQuery, *, now: dt.datetime):
        self.query = query
        self.now = now
        start, end = query.start(), query.end()
        last = last_rolled_hour()
        floor = hour_floor(now) - (LIVE_MAX_HOURS - 1) * HOUR
        live_from = first_unrolled_hour(last, floor)
        gap_from = last + HOUR if last else start
        missing = gap_from < floor and start < floor and end > gap_from
        self.coverage = Coverage(live_from=live_from, missing_from=max(start, gap_from) if missing else None,
                                 missing_until=min(end, floor) if missing else None)
        whole_days_end = day_floor(live_from)  # every day before the one holding live_from is rolled whole
        filters, self.params = ["TRUE"], {
            "d_start": start, "d_end": min(end, whole_days_end),
            "r_start": max(start, whole_days_end), "r_end": min(end, live_from)}
        for name in ("channel", "language", "route"):
            if getattr(query, name):
                filters.append(f"{name} = %({name})s")
                self.params[name] = getattr(query, name)
        if query.agent_id is not None:
            filters.append("agent_id = %(agent)s")
            self.params["agent"] = query.agent_id
        # The live hours once per page (the rollup SELECT plans ~300 aggregates: once, not once per read), in
        # the page's transaction: a pooler in transaction mode keeps every read on the connection that has it.
        if not connection.in_atomic_block:
            raise RuntimeError("Read the dashboard inside transaction.atomic(): its live hours are a temporary table.")
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {LIVE_TABLE}")
            cursor.execute(f"CREATE TEMPORARY TABLE {LIVE_TABLE} ON COMMIT DROP AS {rollup_select_sql()}",
                           {"start": max(start, live_from), "end": max(end, live_from)})
        columns, where = ", ".join(COLUMNS), " AND ".join(filters)
        day_columns = columns.replace("hour,", "day_start AS hour,", 1)
        # Not MATERIALIZED: each read uses src once, so PostgreSQL inlines it, pushes the read's WHERE down and
        # leaves the histogram columns (most of a row's bytes) unread by the reads that do not sum them.
        self.cte = f"""WITH src AS (
            SELECT {day_columns} FROM {DailyRollup._meta.db_table}
            WHERE day_start >= %(d_start)s AND day_start < %(d_end)s AND {where}
            UNION ALL
            SELECT {columns} FROM {HourlyRollup._meta.db_table}
            WHERE hour >= %(r_start)s AND hour < %(r_end)s AND {where}
            UNION ALL
            SELECT {columns} FROM {LIVE_TABLE} WHERE {where})"""  # noqa: S608 - constants; values are bound

    def rows(self, body: str, extra: dict | None = None) -> list[tuple]:
        with connection.cursor() as cursor:
            cursor.execute(f"{self.cte}\n{READ_MARK}\n{body}",
                           {**self.params, "tz": settings.TIME_ZONE, **(extra or {})})
            return cursor.fetchall()


DAY = "((hour AT TIME ZONE %(tz)s)::date)"


@dataclass
class DayTotals:
    day: dt.date
    turns: int = 0
    answered: int = 0
    escalated: int = 0
    silenced: int = 0
    clarify: int = 0
    verified_wrong: int = 0
    complaints: int = 0
    suspected_complaints: int = 0
    flagged: int = 0

    @property
    def handled(self) -> int:
        """Turns the bot handled: all but the silenced ones (a person held the conversation)."""
        return self.turns - self.silenced


MEASURES = ("turns", "answered", "escalated", "silenced", "clarify", "verified_wrong", "complaints",
            "suspected_complaints", "flagged")


@dataclass(frozen=True)
class RouteCount:
    route: str
    turns: int
    answered: int


@dataclass
class Counts:
    days: list[DayTotals]
    per_reason_day: dict[tuple[dt.date, str], int]
    routes: list[RouteCount]


def counts(source: Source) -> Counts:
    """Return the counts per day, the escalations per reason and day, and the turns per route — one pass."""
    sums = ", ".join(f"sum({m})" for m in MEASURES)
    rows = source.rows(f"SELECT GROUPING(escalation_reason), GROUPING(route), {DAY}, escalation_reason, route, "
                       f"{sums} FROM src GROUP BY GROUPING SETS (({DAY}), ({DAY}, escalation_reason), (route))")
    found, per_reason, routes = {}, {}, []
    for no_reason, no_route, day, reason, route, *values in rows:
        values = [int(v) for v in values]
        if no_reason and no_route:
            found[day] = values
        elif no_route:
            if values[2]:  # escalated
                per_reason[(day, reason)] = values[2]
        else:
            routes.append(RouteCount(route, values[0], values[1]))
    routes.sort(key=lambda r: (-r.turns, r.route))
    days = [DayTotals(day, *found[day]) if day in found else DayTotals(day) for day in source.query.days]
    return Counts(days=days, per_reason_day=per_reason, routes=routes)


@dataclass(frozen=True)
class Histograms:
    latency: list[int]
    first_reply: list[int]
    stages: dict[str, list[int]]
    tokens_in: int
    tokens_out: int


def histograms(source: Source) -> Histograms:
    """Return the range's merged histograms (turn latency, first reply, each stage) and its tokens — one pass."""
    latency, reply = len(LATENCY_EDGES_MS) + 1, len(REPLY_EDGES_S) + 1
    [(tokens_in, tokens_out, latency_sum, reply_sum, stage_sum)] = source.rows(
        "SELECT coalesce(sum(tokens_in), 0), coalesce(sum(tokens_out), 0), sum(latency_hist)::real[], "
        "sum(first_reply_hist)::real[], sum(stage_latency_hist)::real[] FROM src")
    split = stage_histograms(_ints(stage_sum, latency * len(STAGES)))
    return Histograms(latency=_ints(latency_sum, latency), first_reply=_ints(reply_sum, reply),
                      stages={name: hist for name, hist in split.items() if sum(hist)},
                      tokens_in=int(tokens_in), tokens_out=int(tokens_out))


def per_agent(source: Source) -> list[tuple[int, int, list[int]]]:
    """Return (agent id, escalations handled, first-reply histogram) per agent, most handled first."""
    rows = source.rows("SELECT agent_id, sum(escalated), sum(first_reply_hist)::real[] "
                       "FROM src WHERE agent_id IS NOT NULL GROUP BY agent_id ORDER BY 2 DESC, 1")
    return [(agent, int(n), _ints(hist, len(REPLY_EDGES_S) + 1)) for agent, n, hist in rows]


@dataclass(frozen=True)
class ConfigurationTotals:
    fingerprint: str
    handled: int
    escalated: int
    flagged: int


def per_configuration(source: Source, fingerprints: list[str]) -> dict[str, ConfigurationTotals]:
    rows = source.rows("SELECT configuration_id, sum(turns) - sum(silenced), sum(escalated), sum(flagged) FROM src "
                       "WHERE configuration_id = ANY(%(fps)s) GROUP BY 1", {"fps": fingerprints})
    return {fp: ConfigurationTotals(fp, int(h), int(e), int(f)) for fp, h, e, f in rows}


@dataclass(frozen=True)
class ChangeMark:
    day: dt.date
    configuration: Configuration
    changes: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "; ".join(self.changes) or "First configuration recorded"


def change_marks(query: DashboardQuery) -> list[ChangeMark]:
    """Return where a configuration first ran during the range, with the parts it changed from the one before.

    Read off traces.Configuration (a handful of rows, `first_seen_at` set when the first turn ran under it).
    """
    configurations = list(Configuration.objects.order_by("first_seen_at", "fingerprint"))
    start, end = query.start(), query.end()
    marks, previous = [], None
    for configuration in configurations:
        if start <= configuration.first_seen_at < end:
            changes = [] if previous is None else [
                f"{d.part.label}: {d.before} → {d.after}" for d in differences(previous.parts(), configuration.parts())]
            marks.append(ChangeMark(timezone.localdate(configuration.first_seen_at), configuration, changes))
        previous = configuration
    return marks


def queue_age(*, now: dt.datetime) -> dt.timedelta | None:
    """Return how long the oldest escalation nobody has taken yet has waited (None: the queue is empty)."""
    oldest = (Escalation.objects.filter(status=Escalation.Status.OPEN).order_by("created_at")
              .values_list("created_at", flat=True).first())
    return now - oldest if oldest else None


def reply_percentiles(counts: list[int]) -> tuple[Percentile, Percentile]:
    return percentile(counts, REPLY_EDGES_S, 0.5), percentile(counts, REPLY_EDGES_S, 0.9)

