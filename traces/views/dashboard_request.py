"""The dashboard's parameters: the range, the slice and the two compared configurations, read from a query."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.http import QueryDict

from core import params
from traces import dashboard, display
from traces.models import Configuration

RANGES = [("today", "Today"), ("7d", "Last 7 days"), ("30d", "Last 30 days"), ("custom", "From … to …")]
MAX_DAYS = 366


@dataclass
class DashboardRequest:
    """The dashboard's parameters as typed values, and what could not be read."""

    range: str
    query: dashboard.DashboardQuery
    compare_a: str = ""
    compare_b: str = ""
    problems: list[str] = field(default_factory=list)
    configurations: list[Configuration] = field(default_factory=list)  # dashboard.configurations_in_order()

    def query_string(self, **extra) -> str:
        q = QueryDict(mutable=True)
        q["range"] = self.range
        if self.range == "custom":
            q["from"], q["to"] = self.query.first_day.isoformat(), self.query.last_day.isoformat()
        q.update(self.query.slice)
        for name, value in extra.items():
            if value:
                q[name] = value
        return q.urlencode()


def parse_request(data, *, today: dt.date, agent_id: int | None) -> DashboardRequest:
    """Read range, dates, filters and the compared configurations; a bad value falls back and is named."""
    problems = []
    # Dates sent without a range (the form's From and To typed in) mean a custom range.
    default = "custom" if data.get("from") and not data.get("range") else "7d"
    chosen = params.choice(data.get("range"), [r for r, _ in RANGES], label="The range", default=default)
    range_name = chosen.value
    first, last = today - dt.timedelta(days=6), today
    if range_name == "today":
        first = today
    elif range_name == "30d":
        first = today - dt.timedelta(days=29)
    elif range_name == "custom":
        start = params.day(data.get("from"), label="From")
        end = params.day(data.get("to"), label="To", default=today)
        problems += [p.error for p in (start, end) if p.error]
        if start.value is None and not start.error:
            problems.append("Choose the first day of the range (From).")
        if start.value and end.value:
            if start.value > end.value:
                problems.append("From must be on or before To.")
            elif (end.value - start.value).days >= MAX_DAYS:
                problems.append(f"A range covers at most {MAX_DAYS} days.")
            else:
                first, last = start.value, end.value
        if problems:
            range_name = "7d"
    filters = {}
    for name, table, label in (("channel", display.CHANNEL_LABELS, "Channel"),
                               ("language", display.LANGUAGE_LABELS, "Language"),
                               ("route", display.ROUTE_LABELS, "Route")):
        parsed = params.choice(data.get(name), list(table), label=label)
        filters[name] = parsed.value
        if parsed.error:
            problems.append(parsed.error)
    configurations = dashboard.configurations_in_order()  # read once: the choices here, the marks, the compare list
    fingerprints = [c.fingerprint for c in configurations]
    compare = {}
    for name, label in (("a", "The first configuration"), ("b", "The second configuration")):
        parsed = params.choice(data.get(name), fingerprints, label=label)
        compare[name] = parsed.value
        if parsed.error:
            problems.append(f"{label} is not a recorded configuration.")
    if chosen.error:
        problems.insert(0, chosen.error)
    return DashboardRequest(range=range_name, query=dashboard.DashboardQuery(first, last, agent_id=agent_id, **filters),
                   compare_a=compare["a"], compare_b=compare["b"], problems=problems, configurations=configurations)
