"""Hourly rollups: equal to a direct count over the traces, idempotent, re-rolled after late marks."""

import datetime as dt
import io
import random
from collections import Counter, defaultdict

import pytest
from django.core.management import CommandError, call_command
from django.db.models import Sum
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import clock
from desk.models import ComplaintSignal, Message
from traces.models import DailyOutcomeRollup, DailyRollup, HourlyRollup, RolledHour, Trace
from traces.rollup_stats import LATENCY_EDGES_MS, REPLY_EDGES_S, histogram, merge, stage_histograms
from traces.rollups import hour_floor, rollups_rebuild, rollups_roll_recent
from traces.tests.turns import CONFIG_A, CONFIG_B, random_turns, turn

pytestmark = pytest.mark.django_db

START = dt.datetime(2026, 11, 2, 0, 0, tzinfo=dt.UTC)
NOW = START + dt.timedelta(days=2, minutes=17)
DIMENSIONS = ("channel", "language", "route", "outcome", "escalation_reason", "configuration_id")
OUTCOME_DIMENSIONS = tuple(name for name in DIMENSIONS if name != "escalation_reason")  # DailyOutcomeRollup's
MEASURES = ("turns", "answered", "escalated", "silenced", "clarify", "verified_wrong", "complaints",
            "suspected_complaints", "flagged", "tokens_in")


def counts(vector) -> list[int]:
    """A stored histogram (a pgvector vector, read as floats) as whole counts."""
    return [round(v) for v in vector]


@pytest.fixture
def traffic(make_staff):
    agents = [make_staff("ana", "agent"), make_staff("beto", "agent")]
    random_turns(random.Random(11), start=START, hours=12, count=60, agents=agents)
    return agents


def direct_counts(traces, names=DIMENSIONS, *, per_day=False) -> Counter:
    """Count the turns straight from the traces, per dimension tuple (and local day) and measure."""
    counts = Counter()
    confirmed = set(ComplaintSignal.objects.filter(certainty="confirmed").values_list("message_id", flat=True))
    suspected = set(ComplaintSignal.objects.filter(certainty="suspected").values_list("message_id", flat=True))
    for trace in traces:
        day = timezone.localdate(trace.created_at) if per_day else None
        key = (day, *(getattr(trace, name) for name in names))
        counts[key, "turns"] += 1
        counts[key, trace.outcome] += 1
        counts[key, "verified_wrong"] += bool(trace.reply and trace.reply.verified_wrong_at)
        counts[key, "complaints"] += trace.reply_id in confirmed
        counts[key, "suspected_complaints"] += trace.reply_id in suspected and trace.reply_id not in confirmed
        counts[key, "flagged"] += bool(trace.reply and trace.reply.verified_wrong_at) or trace.reply_id in confirmed
        counts[key, "tokens_in"] += trace.token_usage["prompt_tokens"]
    return +counts


def rolled_counts(rows, names=DIMENSIONS, *, per_day=False) -> Counter:
    counts = Counter()
    for row in rows:
        day = timezone.localdate(row.day_start) if per_day else None
        key = (day, *(getattr(row, name) for name in names))
        for measure in MEASURES:
            counts[key, measure] += getattr(row, measure)
    return +counts


@settings(max_examples=8, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=st.integers(min_value=0, max_value=11), length=st.integers(min_value=1, max_value=13))
def test_rollups_equal_a_direct_count_over_the_traces_for_any_range(traffic, first, length):
    start = START + dt.timedelta(hours=first)
    end = start + dt.timedelta(hours=length)
    rollups_rebuild(start=start, end=end, now=NOW)
    in_range = Trace.objects.filter(created_at__gte=start, created_at__lt=end).select_related("reply")
    hours = HourlyRollup.objects.filter(hour__gte=start, hour__lt=end)
    assert rolled_counts(hours) == direct_counts(in_range)
    latencies = [trace.total_ms for trace in in_range]
    assert (merge((counts(r.latency_hist) for r in hours), LATENCY_EDGES_MS)
            == histogram(latencies, LATENCY_EDGES_MS))
    assert RolledHour.objects.filter(hour__gte=start, hour__lt=end).count() == length
    # Both daily tables hold, per local day, the turns of every hour rolled so far (by this example and the
    # earlier ones): the detailed rows and the rows without reason and agent alike.
    rolled = set(RolledHour.objects.values_list("hour", flat=True))
    turns = [t for t in Trace.objects.select_related("reply") if hour_floor(t.created_at) in rolled]
    assert rolled_counts(DailyRollup.objects.all(), per_day=True) == direct_counts(turns, per_day=True)
    outcome_rows = list(DailyOutcomeRollup.objects.all())
    assert (rolled_counts(outcome_rows, OUTCOME_DIMENSIONS, per_day=True)
            == direct_counts(turns, OUTCOME_DIMENSIONS, per_day=True))
    for day in {timezone.localdate(t.created_at) for t in turns}:
        rows_of_day = [counts(r.latency_hist) for r in outcome_rows if timezone.localdate(r.day_start) == day]
        latencies = [t.total_ms for t in turns if timezone.localdate(t.created_at) == day]
        assert merge(rows_of_day, LATENCY_EDGES_MS) == histogram(latencies, LATENCY_EDGES_MS)


def test_rebuilding_twice_gives_the_same_rows(traffic):
    def rows(model, period, names):
        return sorted(((getattr(r, period), *(getattr(r, n) for n in names), r.turns, r.verified_wrong,
                       tuple(counts(r.latency_hist)), tuple(counts(r.first_reply_hist)),
                       tuple(counts(r.stage_latency_hist)))
                      for r in model.objects.all()), key=repr)  # repr: no configuration (None) sorts too

    def snapshot():
        return (rows(HourlyRollup, "hour", (*DIMENSIONS, "agent_id")),
                rows(DailyRollup, "day_start", (*DIMENSIONS, "agent_id")),
                rows(DailyOutcomeRollup, "day_start", OUTCOME_DIMENSIONS))

    first = rollups_rebuild(start=START, end=START + dt.timedelta(hours=12), now=NOW)
    once = snapshot()
    second = rollups_rebuild(start=START + dt.timedelta(hours=3), end=START + dt.timedelta(hours=12), now=NOW)
    assert snapshot() == once and first.rows == len(once[0]) and second.rows < first.rows
    assert all(once) and HourlyRollup.objects.aggregate(n=Sum("turns"))["n"] == 60
    assert DailyOutcomeRollup.objects.aggregate(n=Sum("turns"))["n"] == 60


def test_stage_latencies_fold_rewrites_and_first_replies_name_the_agent(make_staff):
    agent = make_staff("ana", "agent")
    at = START + dt.timedelta(minutes=10)
    turn(when=at, latency_ms={"gate": 2.0, "write_1": 300.0, "write_2": 400.0, "verify_1": "oops"})
    turn(when=at, outcome="escalated", reason="TOOL_ERROR", agent=agent, reply_after=dt.timedelta(minutes=7))
    rollups_rebuild(start=START, end=START + dt.timedelta(hours=1), now=NOW)
    answered = HourlyRollup.objects.get(outcome="answered")
    stages = stage_histograms(counts(answered.stage_latency_hist))
    assert stages["write"] == histogram([700.0], LATENCY_EDGES_MS)  # write_1 + write_2
    assert stages["gate"] == histogram([2.0], LATENCY_EDGES_MS)
    assert sum(stages["verify"]) == 0  # a value that is not a number is left out
    escalated = HourlyRollup.objects.get(outcome="escalated")
    assert escalated.agent_id == agent.pk and escalated.escalation_reason == "TOOL_ERROR"
    assert counts(escalated.first_reply_hist) == histogram([420.0], REPLY_EDGES_S)


def test_a_configuration_change_is_recorded_per_hour():
    turn(when=START + dt.timedelta(minutes=5), configuration=CONFIG_A)
    turn(when=START + dt.timedelta(hours=1, minutes=5), configuration=CONFIG_B)
    rollups_rebuild(start=START, end=START + dt.timedelta(hours=2), now=NOW)
    by_hour = dict(HourlyRollup.objects.values_list("hour", "configuration_id"))
    assert by_hour == {START: CONFIG_A.fingerprint, START + dt.timedelta(hours=1): CONFIG_B.fingerprint}


def test_the_current_hour_is_never_rolled():
    turn(when=hour_floor(NOW) + dt.timedelta(minutes=1))
    report = rollups_rebuild(start=START, end=NOW + dt.timedelta(hours=5), now=NOW)
    assert not HourlyRollup.objects.filter(hour__gte=hour_floor(NOW)).exists()
    assert report.hours == 48 and RolledHour.objects.order_by("-hour").first().hour == hour_floor(NOW) - dt.timedelta(
        hours=1)


def test_the_hourly_task_rolls_the_missed_hours_and_re_rolls_a_late_mark():
    old = turn(when=START + dt.timedelta(hours=40, minutes=3))
    rollups_rebuild(start=START, end=START + dt.timedelta(hours=46), now=NOW)  # rolled up to hour 46
    turn(when=START + dt.timedelta(hours=46, minutes=30))  # the hour the beat missed
    # Two days later an agent marks the old answer wrong: its hour, long rolled, counts it after the next run.
    Message.objects.filter(pk=old.reply_id).update(verified_wrong_at=NOW)
    rollups_roll_recent(now=NOW + dt.timedelta(minutes=30))
    assert HourlyRollup.objects.get(hour=START + dt.timedelta(hours=40)).verified_wrong == 1
    assert HourlyRollup.objects.get(hour=START + dt.timedelta(hours=46)).turns == 1


def test_the_command_rebuilds_a_range_and_refuses_bad_dates():
    turn(when=START + dt.timedelta(hours=5))
    out = io.StringIO()
    call_command("rollups_rebuild", "--since", "2026-11-01", "--until", "2026-11-02", stdout=out)
    assert "Rolled 48 hours into 1 rollup rows" in out.getvalue()
    assert DailyOutcomeRollup.objects.get().turns == 1  # the day's rows without reason and agent too
    with pytest.raises(CommandError, match="must be a date"):
        call_command("rollups_rebuild", "--since", "2026-13-45")
    with pytest.raises(CommandError, match="after"):
        call_command("rollups_rebuild", "--since", "2026-11-05", "--until", "2026-11-01")


def test_daily_rows_sum_the_hours_of_each_local_day(traffic):
    rollups_rebuild(start=START, end=START + dt.timedelta(hours=12), now=NOW)
    # Rebuilding part of a day again re-sums the whole day, not just the hours rebuilt.
    rollups_rebuild(start=START + dt.timedelta(hours=5), end=START + dt.timedelta(hours=6), now=NOW)
    hourly, daily, outcome = Counter(), Counter(), Counter()
    hourly_latency, daily_latency, outcome_latency = defaultdict(list), defaultdict(list), defaultdict(list)
    for row in HourlyRollup.objects.all():
        day = timezone.localdate(row.hour)
        hourly[day, row.outcome, row.agent_id] += row.turns
        hourly[day, "flagged"] += row.flagged
        hourly_latency[day].append(counts(row.stage_latency_hist))
    for row in DailyRollup.objects.all():
        day = timezone.localdate(row.day_start)
        assert timezone.localtime(row.day_start).time() == dt.time.min
        daily[day, row.outcome, row.agent_id] += row.turns
        daily[day, "flagged"] += row.flagged
        daily_latency[day].append(counts(row.stage_latency_hist))
    for row in DailyOutcomeRollup.objects.all():
        day = timezone.localdate(row.day_start)
        assert timezone.localtime(row.day_start).time() == dt.time.min
        outcome[day, row.outcome] += row.turns
        outcome[day, "flagged"] += row.flagged
        outcome_latency[day].append(counts(row.stage_latency_hist))
    assert daily == hourly and len(daily_latency) == 2  # 00:00–12:00 UTC spans two days in Caracas
    without_agents = Counter()
    for key, n in daily.items():
        without_agents[key[:2]] += n
    assert outcome == without_agents
    width = len(hourly_latency[day][0])
    for day, rows in hourly_latency.items():
        summed = [sum(r[i] for r in rows) for i in range(width)]
        assert summed == [sum(r[i] for r in daily_latency[day]) for i in range(width)]
        assert summed == [sum(r[i] for r in outcome_latency[day]) for i in range(width)]


def test_the_beat_schedule_runs_the_registered_hourly_task(settings):
    from celery.schedules import crontab

    from config.celery import app
    from traces.tasks import roll_hours

    entry = settings.CELERY_BEAT_SCHEDULE["roll-hours"]
    assert entry["task"] == roll_hours.name == "traces.roll_hours" and roll_hours.name in app.tasks
    assert entry["schedule"] == crontab(minute=settings.DASHBOARD_ROLLUP_MINUTE)
    turn(when=NOW - dt.timedelta(hours=1))
    with clock.pinned(NOW, frozen=True):
        written = roll_hours.apply().get()
    assert written == 1 and HourlyRollup.objects.get().hour == hour_floor(NOW) - dt.timedelta(hours=1)
    assert DailyOutcomeRollup.objects.get().turns == 1
