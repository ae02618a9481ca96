"""The dashboard: the refusal dial and the numbers around it, from the hourly rollups; its CSV; a review sample."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.db import transaction
from django.http import HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from core import clock, csv_safe, params
from traces import dashboard, labels, services
from traces.access import dashboard_scope, require_trace_reviewer
from traces.dial_charts import DayValue, rate_chart, stacked_chart
from traces.fingerprint import differences
from traces.models import Configuration
from traces.rollup_stats import LATENCY_EDGES_MS, Proportion, difference_interval, percentile

RANGES = [("today", "Today"), ("7d", "Last 7 days"), ("30d", "Last 30 days"), ("custom", "From … to …")]
MAX_DAYS = 366
SAMPLE_SIZE = 30


@dataclass
class Request:
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


def parse_request(data, *, today: dt.date, agent_id: int | None) -> Request:
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
    for name, table, label in (("channel", labels.CHANNEL_LABELS, "Channel"),
                               ("language", labels.LANGUAGE_LABELS, "Language"),
                               ("route", labels.ROUTE_LABELS, "Route")):
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
    return Request(range=range_name, query=dashboard.DashboardQuery(first, last, agent_id=agent_id, **filters),
                   compare_a=compare["a"], compare_b=compare["b"], problems=problems, configurations=configurations)


class TraceLinks:
    """Links to the trace browser narrowed to the page's slice (channel, language, route) and more filters.

    The browser's URL and the slice are read once per page: a 90-day page has about a thousand links, and a
    reverse() and a QueryDict for each cost 40 ms of it (bench/dashboard.py).
    """

    def __init__(self, request: Request):
        self.base = reverse("traces:list")
        self.slice = request.query.slice

    def __call__(self, **filters) -> str:
        return f"{self.base}?{urlencode({**self.slice, **filters})}"


def _day_range(day: dt.date) -> dict:
    return {"since": day.isoformat(), "until": day.isoformat()}


def _rate(events: int, trials: int) -> str:
    return f"{events / trials:.1%}" if trials else "—"


def _configuration_label(configuration: Configuration) -> str:
    index = f"index v{configuration.index_version}" if configuration.index_version is not None else "no index"
    return (f"{configuration.prompt_version or 'no prompt'} · {configuration.model or 'no model'} · {index} "
            f"(from {timezone.localdate(configuration.first_seen_at):%Y-%m-%d})")


@transaction.atomic
def build(request: Request, *, scope: str, now: dt.datetime) -> dict:
    """Compute every section of the dashboard (and the CSV's rows) for this request, in one transaction."""
    query = request.query
    source = dashboard.Source(query, now=now)
    days = query.days
    day_names = [d.isoformat() for d in days]
    counted = dashboard.counts(source)
    merged = dashboard.histograms(source)
    totals = counted.days
    csv_rows: list[tuple] = []
    context = {"coverage": source.coverage, "days": totals, "scope": scope}
    reply_hist = merged.first_reply
    p50, p90 = dashboard.reply_percentiles(reply_hist)
    age = dashboard.queue_age(now=now)
    context["operations"] = {"reply_p50": p50.text("min", scale=60, places=1),
                             "reply_p90": p90.text("min", scale=60, places=1),
                             "replies": sum(reply_hist),
                             "queue_age": _duration(age) if age is not None else "Nobody is waiting"}
    csv_rows += [("operations", "", "first_reply_p50_s", p50.value or ""),
                 ("operations", "", "first_reply_p90_s", p90.value or ""),
                 ("operations", "", "queue_age_s", age.total_seconds() if age else "")]
    if scope == "own":
        csv_rows += [("escalations_handled", d.day.isoformat(), "escalated", d.escalated) for d in totals]
        context["csv_rows"] = csv_rows
        return context

    # The dial: how often the bot refuses (escalates) against how often it is wrong when it does not.
    trace_link = TraceLinks(request)
    escalation = [DayValue(d.day.isoformat(), d.escalated, d.handled) for d in totals]
    flagged = [DayValue(d.day.isoformat(), d.flagged, d.handled) for d in totals]
    marks = dashboard.change_marks(query, request.configurations)
    chart = rate_chart(day_names, [("Escalation rate", escalation), ("Verified wrong or complaint", flagged)],
                       [(m.day.isoformat(), m.text) for m in marks])
    # A point opens the traces behind it: that day's escalations, or its answers marked verified wrong. The
    # escalation points are drawn last, so where the two rates meet (both 0 % on a quiet day) the dial's own
    # point is the one on top; the per-day table below links both.
    behind = {"Escalation rate": {"outcome": "escalated"}, "Verified wrong or complaint": {"verified_wrong": "yes"}}
    context["dial"] = chart
    context["dial_points"] = [
        {"series": s.name, "colour": s.colour, "point": p,
         "link": trace_link(**behind[s.name], **_day_range(dt.date.fromisoformat(p.day)))}
        for s in reversed(chart.series) for p in s.points]
    context["marks"] = marks
    context["dial_rows"] = [
        {"day": d, "escalation": _rate(d.escalated, d.handled), "flagged": _rate(d.flagged, d.handled),
         "escalated_link": trace_link(outcome="escalated", **_day_range(d.day)),
         "wrong_link": trace_link(verified_wrong="yes", **_day_range(d.day)),
         "complaint_link": trace_link(complaint_sourced="yes", **_day_range(d.day))} for d in totals]
    for d in totals:
        for measure in dashboard.MEASURES:
            csv_rows.append(("dial", d.day.isoformat(), measure, getattr(d, measure)))

    # Escalations per reason per day, stacked.
    per_reason = dashboard.escalations_per_reason(source)
    reasons = sorted({reason for _, reason in per_reason},
                     key=lambda r: (-sum(n for (_, rr), n in per_reason.items() if rr == r), r))
    keys = [(r, labels.label(labels.LABELS_BY_FILTER["escalation_reason"], r)) for r in reasons]
    context["reasons"] = stacked_chart(day_names, {(d.isoformat(), r): n for (d, r), n in per_reason.items()}, keys)
    context["reason_links"] = {
        r: trace_link(escalation_reason=r, outcome="escalated", since=query.first_day.isoformat(),
                      until=query.last_day.isoformat()) for r in reasons}
    context["reason_legend"] = [(key, label, colour, context["reason_links"][key])
                                for key, label, colour in context["reasons"].legend]
    context["reason_segments"] = [
        {"segment": s, "x": c.x, "width": c.width,
         "link": trace_link(escalation_reason=s.key, outcome="escalated",
                            **_day_range(dt.date.fromisoformat(s.day)))}
        for c in context["reasons"].columns for s in c.segments]
    for (d, r), n in sorted(per_reason.items()):
        csv_rows.append(("escalations_per_reason", d.isoformat(), r, n))

    # Shares of outcomes, answers per route.
    whole = dashboard.DayTotals(query.first_day)
    for d in totals:
        for measure in dashboard.MEASURES:
            setattr(whole, measure, getattr(whole, measure) + getattr(d, measure))
    context["whole"] = whole
    context["shares"] = [(label, n, _rate(n, whole.turns), trace_link(outcome=code,
                                                                       since=query.first_day.isoformat(),
                                                                       until=query.last_day.isoformat()))
                         for code, label, n in (("answered", "Answered", whole.answered),
                                                ("escalated", "Escalated", whole.escalated),
                                                ("clarify", "Asked to clarify", whole.clarify),
                                                ("silenced", "Silenced (a person held the conversation)",
                                                 whole.silenced))]
    csv_rows += [("shares", "", code, n) for code, n in (("answered", whole.answered), ("escalated", whole.escalated),
                                                          ("clarify", whole.clarify), ("silenced", whole.silenced))]
    routes = counted.routes
    context["routes"] = [(r.route, labels.label(labels.ROUTE_LABELS, r.route), r.turns, r.answered,
                          _rate(r.answered, r.turns)) for r in routes]
    csv_rows += [("routes", "", r.route or "-", r.answered) for r in routes]

    # Operations: handling per agent, latency per stage, tokens and their cost.
    handling = dashboard.per_agent(source)
    users = dict(get_user_model().objects.filter(pk__in=[a for a, _, _ in handling]).values_list("pk", "username"))
    agents = []
    for agent, handled, hist in handling:
        a50, a90 = dashboard.reply_percentiles(hist)
        agents.append((users.get(agent, f"user {agent}"), handled, a50.text("min", scale=60, places=1),
                       a90.text("min", scale=60, places=1)))
        csv_rows.append(("agents", users.get(agent, str(agent)), "escalations_handled", handled))
    context["agents"] = agents
    stages = []
    for stage, hist in merged.stages.items():
        p95 = percentile(hist, LATENCY_EDGES_MS, 0.95)
        stages.append((stage, labels.turn_stage_label(stage), p95.text("ms"), sum(hist)))
        csv_rows.append(("stage_latency", "", f"{stage}_p95_ms", p95.value))
    turn_p95 = percentile(merged.latency, LATENCY_EDGES_MS, 0.95)
    context["stages"] = stages
    context["turn_p95"] = turn_p95.text("ms")
    csv_rows.append(("stage_latency", "", "turn_p95_ms", turn_p95.value))
    tokens_in, tokens_out = merged.tokens_in, merged.tokens_out
    price = settings.DASHBOARD_PRICE_PER_1K_TOKENS
    cost = (tokens_in + tokens_out) / 1000 * price
    context["tokens"] = {"in": f"{tokens_in:,}", "out": f"{tokens_out:,}", "price": price, "cost": f"{cost:,.2f}",
                         "currency": settings.DASHBOARD_CURRENCY}
    csv_rows += [("tokens", "", "tokens_in", tokens_in), ("tokens", "", "tokens_out", tokens_out),
                 ("tokens", "", "estimated_cost", round(cost, 4))]

    # Compare two configurations over the range and slice.
    # Newest first; configurations that first ran at the same moment stay in fingerprint order.
    newest_first = sorted(request.configurations, key=lambda c: c.first_seen_at, reverse=True)
    context["configurations"] = [(c.fingerprint, _configuration_label(c)) for c in newest_first]
    if request.compare_a and request.compare_b:
        got = dashboard.per_configuration(source, [request.compare_a, request.compare_b])
        empty = dashboard.ConfigurationTotals("", 0, 0, 0)
        before, after = got.get(request.compare_a, empty), got.get(request.compare_b, empty)
        rows = []
        for name, attr in (("Escalation rate", "escalated"), ("Verified wrong or complaint", "flagged")):
            interval = difference_interval(Proportion(getattr(before, attr), before.handled),
                                           Proportion(getattr(after, attr), after.handled))
            rows.append({"name": name, "before": f"{_rate(getattr(before, attr), before.handled)} "
                                                  f"({getattr(before, attr)} of {before.handled})",
                         "after": f"{_rate(getattr(after, attr), after.handled)} "
                                  f"({getattr(after, attr)} of {after.handled})",
                         "interval": interval, "text": _points(interval)})
            csv_rows.append(("compare", f"{request.compare_a}->{request.compare_b}", attr,
                             "" if interval is None else f"{interval.difference:.4f} [{interval.low:.4f}, "
                                                         f"{interval.high:.4f}]"))
        by_fp = {c.fingerprint: c for c in request.configurations}
        context["compare"] = {"rows": rows, "a": _configuration_label(by_fp[request.compare_a]),
                              "b": _configuration_label(by_fp[request.compare_b]),
                              "changes": differences(by_fp[request.compare_a].parts(),
                                                               by_fp[request.compare_b].parts())}
    context["csv_rows"] = csv_rows
    return context


def _points(interval) -> str:
    """Return a difference of rates in percentage points with its interval: '+4.2 points (1.0 to 7.4)'."""
    if interval is None:
        return "—"
    return (f"{interval.difference * 100:+.1f} points ({interval.low * 100:+.1f} to "
            f"{interval.high * 100:+.1f})")


def _duration(delta: dt.timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours < 48 else f"{hours // 24} days"


def _read(request):
    scope = dashboard_scope(request.user)
    now = clock.now()
    parsed = parse_request(request.GET, today=timezone.localdate(now),
                           agent_id=request.user.pk if scope == "own" else None)
    return scope, now, parsed


@login_required
def dashboard_page(request):
    """Show the dial, escalations per reason, shares, routes, operations and the comparison of two versions."""
    scope, now, parsed = _read(request)
    context = build(parsed, scope=scope, now=now)
    context.update({
        "request_params": parsed, "ranges": RANGES, "problems": parsed.problems,
        "channels": labels.CHANNEL_LABELS.items(), "languages": labels.LANGUAGE_LABELS.items(),
        "routes_choices": labels.ROUTE_LABELS.items(), "query_string": parsed.query_string(),
        "csv_query": parsed.query_string(a=parsed.compare_a, b=parsed.compare_b), "sample_size": SAMPLE_SIZE,
    })
    return render(request, "traces/dashboard.html", context)


@login_required
def dashboard_csv(request):
    """Download every chart's numbers as CSV: section, day (or key), measure, value."""
    scope, now, parsed = _read(request)
    if parsed.problems:  # a download of another range than the one asked for would be read as the answer
        raise BadRequest(" ".join(parsed.problems))
    context = build(parsed, scope=scope, now=now)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = (f'attachment; filename="dashboard-{parsed.query.first_day}-'
                                       f'{parsed.query.last_day}.csv"')
    writer = csv_safe.writer(response)
    writer.writerow(["section", "day_or_key", "measure", "value"])
    writer.writerows(context["csv_rows"])
    return response


@login_required
@require_POST
def dashboard_review(request):
    """Start a review session from a uniform seeded sample of the dashboard's range and filters."""
    require_trace_reviewer(request.user)
    parsed = parse_request(request.POST, today=clock.today(), agent_id=None)
    if parsed.problems:
        raise BadRequest(" ".join(parsed.problems))
    size = params.integer(request.POST.get("size"), label="The sample size", default=SAMPLE_SIZE, low=1,
                          high=500).or_bad_request()
    query = parsed.query
    filters = {name: getattr(query, name) for name in ("channel", "language", "route") if getattr(query, name)}
    try:
        session = services.review_session_create(
            name=f"Dashboard sample {query.first_day:%Y-%m-%d} to {query.last_day:%Y-%m-%d}",
            window_start=query.start(), window_end=query.end(), size=size, filters=filters,
            created_by=request.user)
    except services.ReviewError as error:
        messages.error(request, str(error))
        return redirect(f"{reverse('dashboard:page')}?{parsed.query_string()}")
    messages.success(request, f"Review session “{session.name}” started with {session.items.count()} traces.")
    return redirect("traces:session", session_id=session.pk)
