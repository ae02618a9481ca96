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
from traces.models import Configuration, DailyOutcomeRollup, DailyRollup, HourlyRollup
from traces.rollup_stats import (
    LATENCY_EDGES_MS,
    REPLY_EDGES_S,
    STAGES,
    Percentile,
    percentile,
    stage_histograms,
)
from traces.rollups import (COLUMNS, COUNTS, GROUP, HISTOGRAMS, HOUR, LOCAL_DAY_START, OUTCOME_GROUP,
                            day_floor, first_unrolled_hour, hour_floor, last_rolled_hour, rollup_select_sql)

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

    @property
    def slice(self) -> dict[str, str]:
        """The channel, language and route the range is narrowed to (only those set)."""
        return {name: getattr(self, name) for name in ("channel", "language", "route") if getattr(self, name)}

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
    """The rows of one query as a SQL CTE named `src`, each with the local midnight of its day (`day_start`):
    whole rolled days from a daily table, the rolled hours of the day not complete yet from HourlyRollup, and
    the hours after the last rolled one computed once from the traces into a temporary table.

    `rows` reads whole days from DailyOutcomeRollup (no escalation reason, no agent: ~50 rows a day at 1M
    traces); `detailed_rows` from DailyRollup (~310 a day), for the reads that need the reason or the agent.
    An agent's own numbers are always read from the detailed rows: only they say who handled an escalation.
    """

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
            "r_start": max(start, whole_days_end), "r_end": min(end, live_from), "tz": settings.TIME_ZONE}
        for name, value in query.slice.items():
            filters.append(f"{name} = %({name})s")
            self.params[name] = value
        if query.agent_id is not None:
            filters.append("agent_id = %(agent)s")
            self.params["agent"] = query.agent_id
        # The live hours once per page (the rollup SELECT plans ~300 aggregates: once, not once per read), in
        # the page's transaction: a pooler in transaction mode keeps every read on the connection that has it.
        if not connection.in_atomic_block:
            raise RuntimeError("Read the dashboard inside transaction.atomic(): its live hours are a temporary table.")
        # The table takes HourlyRollup's column types and the live rows are inserted as the rebuild inserts
        # them: with the SELECT's own types (count() is bigint) the UNION ALL below would cast every daily
        # row, and PostgreSQL would read whole rows instead of the columns a read names (no index-only scan).
        columns = ", ".join(COLUMNS)
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {LIVE_TABLE}")
            cursor.execute(f"CREATE TEMPORARY TABLE {LIVE_TABLE} ON COMMIT DROP AS "  # noqa: S608 - constants
                           f"SELECT {columns} FROM {HourlyRollup._meta.db_table} WITH NO DATA")
            cursor.execute(f"INSERT INTO {LIVE_TABLE} ({columns}) {rollup_select_sql()}",  # noqa: S608
                           {"start": max(start, live_from), "end": max(end, live_from)})
        where = " AND ".join(filters)
        self.detailed_cte = self._cte(DailyRollup._meta.db_table, GROUP[1:], where)
        self.outcome_cte = (self._cte(DailyOutcomeRollup._meta.db_table, OUTCOME_GROUP, where)
                            if query.agent_id is None else self.detailed_cte)

    @staticmethod
    def _cte(daily_table: str, dimensions: list[str], where: str) -> str:
        # Not MATERIALIZED: each read uses src once, so PostgreSQL inlines it, pushes the read's WHERE down
        # (into the partial indexes of DailyRollup) and leaves unread the columns the read does not name.
        columns = ", ".join([*dimensions, *COUNTS, *HISTOGRAMS])
        return f"""WITH src AS (
            SELECT day_start, {columns} FROM {daily_table}
            WHERE day_start >= %(d_start)s AND day_start < %(d_end)s AND {where}
            UNION ALL
            SELECT {LOCAL_DAY_START} AS day_start, {columns} FROM {HourlyRollup._meta.db_table}
            WHERE hour >= %(r_start)s AND hour < %(r_end)s AND {where}
            UNION ALL
            SELECT {LOCAL_DAY_START} AS day_start, {columns} FROM {LIVE_TABLE} WHERE {where})"""  # noqa: S608

    def rows(self, body: str, extra: dict | None = None) -> list[tuple]:
        """Run a read of `src` that needs neither the reason nor the agent (on detailed rows for an agent)."""
        return self._run(self.outcome_cte, body, extra)

    def detailed_rows(self, body: str, extra: dict | None = None) -> list[tuple]:
        """Run a read of `src` that groups or filters by the escalation reason or the agent."""
        return self._run(self.detailed_cte, body, extra)

    def _run(self, cte: str, body: str, extra: dict | None) -> list[tuple]:
        with connection.cursor() as cursor:
            cursor.execute(f"{cte}\n{READ_MARK}\n{body}", {**self.params, **(extra or {})})
            return cursor.fetchall()


# A read groups by day_start and names the day after grouping: converting each row's timestamp to a local date
# cost more than the rest of the 90-day counts (about 0.35 µs a row, 9 ms over 25,000 daily rows).
DAY = "((day_start AT TIME ZONE %(tz)s)::date)"


@dataclass
class DayTotals:
    day: dt.date
    turns: int = 0
    answered: int = 0
    escalated: int = 0
    silenced: int = 0
    clarify: int = 0
    declined: int = 0
    verified_wrong: int = 0
    complaints: int = 0
    suspected_complaints: int = 0
    flagged: int = 0

    @property
    def handled(self) -> int:
        """Turns the bot handled: all but the silenced ones (a person held the conversation)."""
        return self.turns - self.silenced


MEASURES = ("turns", "answered", "escalated", "silenced", "clarify", "declined", "verified_wrong",
            "complaints", "suspected_complaints", "flagged")


@dataclass(frozen=True)
class RouteCount:
    route: str
    turns: int
    answered: int


@dataclass
class Counts:
    days: list[DayTotals]
    routes: list[RouteCount]


def counts(source: Source) -> Counts:
    """Return the counts per day and the turns per route — one pass."""
    sums = ", ".join(f"sum({m})" for m in MEASURES)
    rows = source.rows(f"SELECT GROUPING(route), {DAY}, route, {sums} FROM src "
                       f"GROUP BY GROUPING SETS ((day_start), (route))")
    found, routes = {}, []
    for no_route, day, route, *values in rows:
        values = [int(v) for v in values]
        if no_route:
            found[day] = values
        else:
            routes.append(RouteCount(route, values[0], values[1]))
    routes.sort(key=lambda r: (-r.turns, r.route))
    days = [DayTotals(day, *found[day]) if day in found else DayTotals(day) for day in source.query.days]
    return Counts(days=days, routes=routes)


def escalations_per_reason(source: Source) -> dict[tuple[dt.date, str], int]:
    """Return the escalations per day and reason (days and reasons without any left out)."""
    rows = source.detailed_rows(f"SELECT {DAY}, escalation_reason, sum(escalated) FROM src "
                                f"WHERE outcome = 'escalated' GROUP BY day_start, escalation_reason")
    return {(day, reason): int(n) for day, reason, n in rows if n}


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


@dataclass(frozen=True)
class CostRow:
    key: object  # a day (dt.date) or a configuration's fingerprint
    cost: float
    answered: int
    turns: int

    @property
    def per_answered(self) -> float | None:
        return self.cost / self.answered if self.answered else None


@dataclass(frozen=True)
class Costs:
    days: list[CostRow]
    configurations: list[CostRow]
    total: float


def costs(source: Source) -> Costs:
    """Return what the model calls cost per day and per configuration, with the answered turns — one pass."""
    rows = source.rows(f"SELECT GROUPING(configuration_id), {DAY}, configuration_id, coalesce(sum(cost), 0), "
                       "sum(answered), sum(turns) FROM src GROUP BY GROUPING SETS ((day_start), (configuration_id))")
    by_day, configurations = {}, []
    for no_configuration, day, fingerprint, cost, answered, turns in rows:
        if no_configuration:
            by_day[day] = CostRow(day, float(cost), int(answered), int(turns))
        else:
            configurations.append(CostRow(fingerprint or "", float(cost), int(answered), int(turns)))
    days = [by_day.get(day, CostRow(day, 0.0, 0, 0)) for day in source.query.days]
    configurations.sort(key=lambda row: (-row.turns, str(row.key)))
    return Costs(days=days, configurations=configurations, total=round(sum(row.cost for row in days), 6))


def per_agent(source: Source) -> list[tuple[int, int, list[int]]]:
    """Return (agent id, escalations handled, first-reply histogram) per agent, most handled first."""
    rows = source.detailed_rows("SELECT agent_id, sum(escalated), sum(first_reply_hist)::real[] "
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


def configurations_in_order() -> list[Configuration]:
    """Return every recorded configuration, the first to run first (a handful of rows; `first_seen_at` is set
    when the first turn ran under it)."""
    return list(Configuration.objects.order_by("first_seen_at", "fingerprint"))


def change_marks(query: DashboardQuery, configurations: list[Configuration]) -> list[ChangeMark]:
    """Return where a configuration first ran during the range, with the parts it changed from the one before.

    `configurations` are configurations_in_order().
    """
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

