"""The dashboard's sections: each reads the rollups for one part of the page and returns its context and its CSV rows.

`dashboard_build` runs them in one transaction, in the page's order, and joins what they return: the page shows the
context, the CSV download writes the rows, so the two cannot disagree.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from desk.satisfaction import satisfaction_summary
from traces import dashboard, display, review_stats
from traces.dial_charts import DayValue, rate_chart, stacked_chart
from traces.fingerprint import differences
from traces.models import Configuration, Trace
from traces.scoring import buckets
from traces.rollup_stats import LATENCY_EDGES_MS, Proportion, difference_interval, percentile
from traces.views.dashboard_request import DashboardRequest


@dataclass
class Section:
    """What one section adds to the page (`context`) and to the CSV (`csv_rows`: section, day or key, measure,
    value)."""

    context: dict = field(default_factory=dict)
    csv_rows: list[tuple] = field(default_factory=list)


class TraceLinks:
    """Links to the trace browser narrowed to the page's slice (channel, language, route) and more filters.

    The browser's URL and the slice are read once per page: a 90-day page has about a thousand links, and a
    reverse() and a QueryDict for each cost 40 ms of it (bench/dashboard.py).
    """

    def __init__(self, request: DashboardRequest):
        self.base = reverse("traces:list")
        self.slice = request.query.slice

    def __call__(self, **filters) -> str:
        return f"{self.base}?{urlencode({**self.slice, **filters})}"


def _day_range(day: dt.date) -> dict:
    return {"since": day.isoformat(), "until": day.isoformat()}


def _range(query: dashboard.DashboardQuery) -> dict:
    return {"since": query.first_day.isoformat(), "until": query.last_day.isoformat()}


def _rate(events: int, trials: int) -> str:
    return f"{events / trials:.1%}" if trials else "—"


def _configuration_label(configuration: Configuration) -> str:
    index = f"index v{configuration.index_version}" if configuration.index_version is not None else "no index"
    return (f"{configuration.prompt_version or 'no prompt'} · {configuration.model or 'no model'} · {index} "
            f"(from {timezone.localdate(configuration.first_seen_at):%Y-%m-%d})")


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


def operations_section(merged: dashboard.Histograms, *, now: dt.datetime) -> Section:
    """First-reply percentiles and how long the oldest escalation has waited (every scope sees these)."""
    reply_hist = merged.first_reply
    p50, p90 = dashboard.reply_percentiles(reply_hist)
    age = dashboard.queue_age(now=now)
    return Section(
        {"operations": {"reply_p50": p50.text("min", scale=60, places=1),
                        "reply_p90": p90.text("min", scale=60, places=1),
                        "replies": sum(reply_hist),
                        "queue_age": _duration(age) if age is not None else "Nobody is waiting"}},
        [("operations", "", "first_reply_p50_s", p50.value or ""),
         ("operations", "", "first_reply_p90_s", p90.value or ""),
         ("operations", "", "queue_age_s", age.total_seconds() if age else "")])


def own_handling_section(totals: list[dashboard.DayTotals]) -> Section:
    """An agent's own scope: the escalations they handled per day (CSV only; the page shows the totals)."""
    return Section(csv_rows=[("escalations_handled", d.day.isoformat(), "escalated", d.escalated) for d in totals])


def dial_section(request: DashboardRequest, totals: list[dashboard.DayTotals], *, day_names: list[str],
                 trace_link: TraceLinks) -> Section:
    """The dial: how often the bot refuses (escalates) against how often it is wrong when it does not."""
    escalation = [DayValue(d.day.isoformat(), d.escalated, d.handled) for d in totals]
    flagged = [DayValue(d.day.isoformat(), d.flagged, d.handled) for d in totals]
    marks = dashboard.change_marks(request.query, request.configurations)
    chart = rate_chart(day_names, [("Escalation rate", escalation), ("Verified wrong or complaint", flagged)],
                       [(m.day.isoformat(), m.text) for m in marks])
    # A point opens the traces behind it: that day's escalations, or its answers marked verified wrong. The
    # escalation points are drawn last, so where the two rates meet (both 0 % on a quiet day) the dial's own
    # point is the one on top; the per-day table below links both.
    behind = {"Escalation rate": {"outcome": "escalated"}, "Verified wrong or complaint": {"verified_wrong": "yes"}}
    context = {
        "dial": chart,
        "dial_points": [{"series": s.name, "colour": s.colour, "point": p,
                         "link": trace_link(**behind[s.name], **_day_range(dt.date.fromisoformat(p.day)))}
                        for s in reversed(chart.series) for p in s.points],
        "marks": marks,
        "dial_rows": [
            {"day": d, "escalation": _rate(d.escalated, d.handled), "flagged": _rate(d.flagged, d.handled),
             "escalated_link": trace_link(outcome="escalated", **_day_range(d.day)),
             "wrong_link": trace_link(verified_wrong="yes", **_day_range(d.day)),
             "complaint_link": trace_link(complaint_sourced="yes", **_day_range(d.day))} for d in totals],
    }
    rows = [("dial", d.day.isoformat(), measure, getattr(d, measure)) for d in totals for measure in dashboard.MEASURES]
    return Section(context, rows)


def satisfaction_section(query: dashboard.DashboardQuery, *, day_names: list[str]) -> Section:
    """The customers' answers to the satisfaction question, per agent, per escalation reason and per day (the desk's
    table: a few rows a day, read directly)."""
    summary = satisfaction_summary(start=query.start(), end=query.end(), channel=query.channel,
                                   language=query.language, agent_id=query.agent_id)
    by_day = {tally.key: tally for tally in summary.per_day}

    def series(answer: str) -> list[DayValue]:
        return [DayValue(day, by_day[day].answers[answer], by_day[day].answered) if day in by_day
                else DayValue(day, 0, 0) for day in day_names]

    chart = rate_chart(day_names, [("Good", series("good")), ("Bad", series("bad"))])
    rows = [("satisfaction", f"{group}:{tally.key}", measure, value)
            for group, tallies in (("all", [summary.total]), ("agent", summary.per_agent),
                                   ("reason", summary.per_reason), ("day", summary.per_day))
            for tally in tallies
            for measure, value in (("asked", tally.asked), *tally.answers.items())]
    groups = [("Per agent", summary.per_agent, "Agent"), ("Per escalation reason", summary.per_reason, "Reason"),
              ("Over time", summary.per_day, "Day")]
    return Section({"satisfaction": summary, "satisfaction_chart": chart, "satisfaction_groups": groups}, rows)


def reasons_section(source: dashboard.Source, *, day_names: list[str], trace_link: TraceLinks) -> Section:
    """Escalations per reason per day, stacked, each segment and legend entry linking its traces."""
    per_reason = dashboard.escalations_per_reason(source)
    reasons = sorted({reason for _, reason in per_reason},
                     key=lambda r: (-sum(n for (_, rr), n in per_reason.items() if rr == r), r))
    keys = [(r, display.label(display.LABELS_BY_FILTER["escalation_reason"], r)) for r in reasons]
    chart = stacked_chart(day_names, {(d.isoformat(), r): n for (d, r), n in per_reason.items()}, keys)
    links = {r: trace_link(escalation_reason=r, outcome="escalated", **_range(source.query)) for r in reasons}
    # Each reason's share of the range's escalations, with its count: "42.0% (21 of 50)".
    per_key = {r: sum(n for (_, rr), n in per_reason.items() if rr == r) for r in reasons}
    escalations = sum(per_key.values())
    context = {
        "reasons": chart,
        "reason_links": links,
        "reason_total": escalations,
        "reason_legend": [(key, label, colour, links[key],
                           f"{_rate(per_key[key], escalations)} ({per_key[key]} of {escalations})")
                          for key, label, colour in chart.legend],
        "reason_segments": [
            {"segment": s, "x": c.x, "width": c.width, "share": f"{_rate(s.count, c.total)} ({s.count} of {c.total})",
             "link": trace_link(escalation_reason=s.key, outcome="escalated",
                                **_day_range(dt.date.fromisoformat(s.day)))}
            for c in chart.columns for s in c.segments],
    }
    return Section(context, [("escalations_per_reason", d.isoformat(), r, n) for (d, r), n in sorted(per_reason.items())])


def shares_section(query: dashboard.DashboardQuery, totals: list[dashboard.DayTotals], *,
                   trace_link: TraceLinks) -> Section:
    """The range's totals and the share of each outcome, each linking its traces."""
    whole = dashboard.DayTotals(query.first_day)
    for d in totals:
        for measure in dashboard.MEASURES:
            setattr(whole, measure, getattr(whole, measure) + getattr(d, measure))
    outcomes = (("answered", "Answered", whole.answered), ("escalated", "Escalated", whole.escalated),
                ("clarify", "Asked to clarify", whole.clarify),
                ("declined", "Declined (not plans or billing)", whole.declined),
                ("silenced", "Silenced (a person held the conversation)", whole.silenced))
    context = {"whole": whole,
               "shares": [(label, n, _rate(n, whole.turns), trace_link(outcome=code, **_range(query)))
                          for code, label, n in outcomes]}
    return Section(context, [("shares", "", code, n) for code, _label, n in outcomes])


def routes_section(routes) -> Section:
    """Turns and answers per route."""
    return Section({"routes": [(r.route, display.label(display.ROUTE_LABELS, r.route), r.turns, r.answered,
                                _rate(r.answered, r.turns)) for r in routes]},
                   [("routes", "", r.route or "-", r.answered) for r in routes])


def agents_section(source: dashboard.Source) -> Section:
    """Escalations each agent handled, with their first-reply percentiles."""
    handling = dashboard.per_agent(source)
    users = dict(get_user_model().objects.filter(pk__in=[a for a, _, _ in handling]).values_list("pk", "username"))
    agents, rows = [], []
    for agent, handled, hist in handling:
        a50, a90 = dashboard.reply_percentiles(hist)
        agents.append((users.get(agent, f"user {agent}"), handled, a50.text("min", scale=60, places=1),
                       a90.text("min", scale=60, places=1)))
        rows.append(("agents", users.get(agent, str(agent)), "escalations_handled", handled))
    return Section({"agents": agents}, rows)


def latency_section(merged: dashboard.Histograms) -> Section:
    """The 95th percentile of each stage of a turn, and of the whole turn."""
    stages, rows = [], []
    for stage, hist in merged.stages.items():
        p95 = percentile(hist, LATENCY_EDGES_MS, 0.95)
        stages.append((stage, display.turn_stage_label(stage), p95.text("ms"), sum(hist)))
        rows.append(("stage_latency", "", f"{stage}_p95_ms", p95.value))
    turn_p95 = percentile(merged.latency, LATENCY_EDGES_MS, 0.95)
    rows.append(("stage_latency", "", "turn_p95_ms", turn_p95.value))
    return Section({"stages": stages, "turn_p95": turn_p95.text("ms")}, rows)


def tokens_section(merged: dashboard.Histograms) -> Section:
    """Tokens in and out, and their estimated cost at the configured price."""
    tokens_in, tokens_out = merged.tokens_in, merged.tokens_out
    price = settings.DASHBOARD_PRICE_PER_1K_TOKENS
    cost = (tokens_in + tokens_out) / 1000 * price
    return Section(
        {"tokens": {"in": f"{tokens_in:,}", "out": f"{tokens_out:,}", "price": price, "cost": f"{cost:,.2f}",
                    "currency": settings.DASHBOARD_CURRENCY}},
        [("tokens", "", "tokens_in", tokens_in), ("tokens", "", "tokens_out", tokens_out),
         ("tokens", "", "estimated_cost", round(cost, 4))])


def cost_section(source: dashboard.Source) -> Section:
    """What the model calls cost (recorded on each turn at MODEL_PRICES): per day, and per configuration with its
    cost per answered turn."""
    found = dashboard.costs(source)
    days = [{"day": row.key, "cost": f"{row.cost:.6f}", "answered": row.answered,
             "per_answered": f"{row.per_answered:.6f}" if row.per_answered is not None else "—"} for row in found.days]
    configurations = [{"fingerprint": row.key, "cost": f"{row.cost:.6f}", "answered": row.answered,
                       "per_answered": f"{row.per_answered:.6f}" if row.per_answered is not None else "—"}
                      for row in found.configurations]
    csv = [("cost", row.key.isoformat(), "cost_usd", round(row.cost, 6)) for row in found.days]
    csv += [("cost_per_answered", row.key, "cost_usd", round(row.per_answered, 6))
            for row in found.configurations if row.per_answered is not None]
    return Section({"cost": {"days": days, "configurations": configurations, "total": f"{found.total:.6f}"}}, csv)


def comparison_section(request: DashboardRequest, source: dashboard.Source) -> Section:
    """The configurations to pick from and, when two are picked, their rates over the range and slice."""
    # Newest first; configurations that first ran at the same moment stay in fingerprint order.
    newest_first = sorted(request.configurations, key=lambda c: c.first_seen_at, reverse=True)
    # Unless chosen: After is the latest configuration, Before the one that ran before it (never both the same).
    section = Section({"configurations": [(c.fingerprint, _configuration_label(c)) for c in newest_first],
                       "compare_default_b": newest_first[0].fingerprint if newest_first else "",
                       "compare_default_a": newest_first[1].fingerprint if len(newest_first) > 1 else ""})
    if not (request.compare_a and request.compare_b):
        return section
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
        section.csv_rows.append(("compare", f"{request.compare_a}->{request.compare_b}", attr,
                                 "" if interval is None else f"{interval.difference:.4f} [{interval.low:.4f}, "
                                                             f"{interval.high:.4f}]"))
    by_fp = {c.fingerprint: c for c in request.configurations}
    section.context["compare"] = {"rows": rows, "a": _configuration_label(by_fp[request.compare_a]),
                                  "b": _configuration_label(by_fp[request.compare_b]),
                                  "changes": differences(by_fp[request.compare_a].parts(),
                                                         by_fp[request.compare_b].parts())}
    return section


def _segments(chart, link) -> list[dict]:
    return [{"segment": s, "x": c.x, "width": c.width, "link": link(s.key, dt.date.fromisoformat(s.day))}
            for c in chart.columns for s in c.segments]


def fallbacks_section(query, *, day_names: list[str], trace_link: TraceLinks) -> Section:
    """Turns the verified-only fallback answered (or escalated with its draft) per day, stacked by kind."""
    per_day = review_stats.fallbacks_per_day(query)
    keys = [(value, label) for value, label in Trace.Fallback.choices if value]
    chart = stacked_chart(day_names, {(d.isoformat(), kind): n for (d, kind), n in per_day.items()}, keys)
    totals = {kind: sum(n for (_, k), n in per_day.items() if k == kind) for kind, _ in keys}
    context = {"fallbacks": chart,
               "fallback_segments": _segments(chart, lambda kind, day: trace_link(fallback=kind, **_day_range(day))),
               "fallback_legend": [(key, label, colour, totals[key], trace_link(fallback=key, **_range(query)))
                                   for key, label, colour in chart.legend],
               "fallback_total": sum(totals.values()),
               "fallback_link": trace_link(fallback="yes", **_range(query))}
    return Section(context, [("fallbacks", d.isoformat(), kind, n) for (d, kind), n in sorted(per_day.items())])


def scores_section(query, *, day_names: list[str], trace_link: TraceLinks) -> Section:
    """Each score's values per day (stacked) and per configuration (counts, and the mean of yes/no or numbers)."""
    configurations = Configuration.objects.in_bulk()
    charts, rows = [], []
    for stats in review_stats.scores_stats(query):
        spec = stats.definition.spec()
        keys = [(bucket, bucket) for bucket in buckets(spec)]
        chart = stacked_chart(day_names, {(d.isoformat(), b): n for (d, b), n in stats.per_day.items()}, keys)
        choices = set(spec.choices())

        def link(bucket, day, key=spec.key):
            return trace_link(score=f"{key}:{bucket}", **_day_range(day)) if bucket in choices else \
                trace_link(**_day_range(day))

        per_configuration = []
        for fingerprint, counts in sorted(stats.per_configuration.items(), key=lambda kv: -sum(kv[1].values())):
            configuration = configurations.get(fingerprint)
            mean = stats.means.get(fingerprint)
            per_configuration.append({
                "label": _configuration_label(configuration) if configuration else "not recorded",
                "fingerprint": fingerprint, "n": sum(counts.values()),
                "counts": [(bucket, counts.get(bucket, 0)) for bucket, _ in keys],
                "mean": (f"{mean[0]:.0%} yes" if spec.kind == "boolean" else f"{mean[0]:.2f}") if mean else "—"})
            rows += [("scores_per_configuration", fingerprint or "-", f"{spec.key}={bucket}", counts.get(bucket, 0))
                     for bucket, _ in keys]
        charts.append({"definition": stats.definition, "chart": chart, "total": stats.total,
                       "segments": _segments(chart, link), "keys": [bucket for bucket, _ in keys],
                       "per_configuration": per_configuration})
        rows += [("scores", d.isoformat(), f"{spec.key}={b}", n) for (d, b), n in sorted(stats.per_day.items())]
    return Section({"score_charts": charts}, rows)


@transaction.atomic
def dashboard_build(request: DashboardRequest, *, scope: str, now: dt.datetime) -> dict:
    """Compute every section of the dashboard (and the CSV's rows) for this request, in one transaction."""
    query = request.query
    source = dashboard.Source(query, now=now)
    counted = dashboard.counts(source)
    merged = dashboard.histograms(source)
    totals = counted.days
    sections = [operations_section(merged, now=now)]
    day_names = [d.isoformat() for d in query.days]
    if scope == "own":
        sections += [own_handling_section(totals), satisfaction_section(query, day_names=day_names)]
    else:
        trace_link = TraceLinks(request)
        sections += [dial_section(request, totals, day_names=day_names, trace_link=trace_link),
                     satisfaction_section(query, day_names=day_names),
                     reasons_section(source, day_names=day_names, trace_link=trace_link),
                     shares_section(query, totals, trace_link=trace_link),
                     routes_section(counted.routes),
                     agents_section(source),
                     latency_section(merged),
                     tokens_section(merged),
                     cost_section(source),
                     comparison_section(request, source),
                     fallbacks_section(query, day_names=day_names, trace_link=trace_link),
                     scores_section(query, day_names=day_names, trace_link=trace_link)]
    context = {"coverage": source.coverage, "days": totals, "scope": scope}
    csv_rows: list[tuple] = []
    for section in sections:
        context.update(section.context)
        csv_rows += section.csv_rows
    context["csv_rows"] = csv_rows
    return context
