"""The judge on live traffic: a deterministic sample of each day's answered turns, judged once per judge version,
shown on the dashboard beside the dial and on each judged trace's page."""

import datetime as dt
import re

import pytest
from django.urls import reverse

from core import clock
from desk.models import Contact, Conversation
from evals import live_sample
from evals.human_labels import human_label_save, judge_labelled, split_for
from evals.judgement import JudgeError, Judgement
from evals.models import JudgeVerdict
from evals.online_judge import day_bounds, judge_live_day, live_judge_summary
from evals.tasks import judge_live
from traces.models import Trace

EVIDENCE = [{"id": "E1", "text": "Reconexión fibra: la reconexión cuesta Bs. 350,00.", "value": None}]
SUPPORTED = "La reconexión cuesta Bs. 350,00."
UNSUPPORTED = "La reconexión es gratis."


# --- The sample (no database) -------------------------------------------------------------------------------------

def test_the_sample_is_the_same_on_every_run_and_a_larger_rate_holds_a_smaller_one():
    ids = range(1, 5001)
    ten = {tid for tid in ids if live_sample.in_sample(tid, 0.1)}
    assert ten == {tid for tid in ids if live_sample.in_sample(tid, 0.1)}
    assert ten <= {tid for tid in ids if live_sample.in_sample(tid, 0.2)}
    assert 400 <= len(ten) <= 600


def test_the_cap_takes_the_first_in_hash_order_less_those_judged_already():
    ids = list(range(1, 2001))
    chosen = live_sample.choose(ids, rate=0.5, cap=10)
    assert len(chosen) == 10 and chosen == sorted(chosen, key=live_sample.sample_key)
    assert live_sample.choose(ids, rate=0.5, cap=10, already=7) == chosen[:3]
    assert live_sample.choose(ids, rate=0.5, cap=10, already=12) == []


# --- Judging a day ------------------------------------------------------------------------------------------------

class CountingJudge:
    """A judge that fails answers saying "gratis" and counts its calls."""

    version = "counting-1"
    model = "offline"

    def __init__(self):
        self.calls = []

    def judge(self, *, answer, evidence, question="", verified=()):
        self.calls.append(answer)
        if "error" in answer:
            raise JudgeError("no verdict after 2 attempts")
        verdict = "fail" if "gratis" in answer else "pass"
        return Judgement(verdict=verdict, reason=f"{verdict} by word", judge_version=self.version,
                         model=self.model, attempts=1, raw="")


@pytest.fixture
def conversation(db):
    contact = Contact.objects.create(channel="webchat", name="Live", customer_id="C-1001", language="es")
    return Conversation.objects.create(contact=contact, channel="webchat")


@pytest.fixture
def make_turn(conversation):
    def make(*, day=None, outcome="answered", answer=SUPPORTED, hour=10):
        trace = Trace.objects.create(conversation=conversation, channel="webchat", outcome=outcome,
                                     query="¿cuánto cuesta la reconexión?", final_text=answer, evidence=EVIDENCE)
        start, _ = day_bounds(day or clock.today())
        Trace.objects.filter(pk=trace.pk).update(created_at=start + dt.timedelta(hours=hour))
        return trace
    return make


def test_a_day_is_sampled_by_trace_id_and_a_rerun_judges_nothing_twice(make_turn):
    today = clock.today()
    turns = [make_turn(answer=UNSUPPORTED if n % 3 == 0 else SUPPORTED) for n in range(60)]
    make_turn(outcome="escalated", answer="")  # only answered turns are judged
    make_turn(day=today - dt.timedelta(days=1))  # another day
    judge = CountingJudge()
    report = judge_live_day(day=today, judge=judge, rate=0.3, cap=200)
    expected = {t.pk for t in turns if live_sample.in_sample(t.pk, 0.3)}
    assert report.answered == 60 and set(report.judged_ids) == expected and report.judged_now == len(expected) > 0
    verdicts = JudgeVerdict.objects.filter(judge_version="counting-1")
    assert set(verdicts.values_list("trace_id", flat=True)) == expected
    assert set(verdicts.values_list("sampled_on", flat=True)) == {today}
    again = judge_live_day(day=today, judge=judge, rate=0.3, cap=200)
    assert again.judged_now == 0 and again.already == len(expected)
    assert len(judge.calls) == len(expected)


def test_the_daily_cap_bounds_a_busy_day_and_a_new_judge_version_judges_again(make_turn):
    for _ in range(40):
        make_turn()
    first = judge_live_day(day=clock.today(), judge=CountingJudge(), rate=1.0, cap=5)
    assert first.judged_now == 5 and first.capped
    assert judge_live_day(day=clock.today(), judge=CountingJudge(), rate=1.0, cap=5).judged_now == 0
    newer = CountingJudge()
    newer.version = "counting-2"
    assert judge_live_day(day=clock.today(), judge=newer, rate=1.0, cap=5).judged_now == 5


def test_a_judge_error_is_recorded_and_never_counted_as_a_pass(make_turn):
    make_turn(answer="error in the answer")
    report = judge_live_day(day=clock.today(), judge=CountingJudge(), rate=1.0, cap=10)
    assert report.errors == 1
    summary = live_judge_summary(first_day=clock.today(), last_day=clock.today(), judge_version="counting-1")
    assert (summary.judged, summary.flagged, summary.errors) == (0, 0, 1)


def test_a_labelled_trace_judged_for_calibration_joins_the_sample_without_a_second_call(make_turn, make_staff):
    trace = make_turn()
    human_label_save(trace=trace, label="pass", author=make_staff("lab", "analyst"))
    judge = CountingJudge()
    judge_labelled(judge=judge)
    assert len(judge.calls) == 1
    report = judge_live_day(day=clock.today(), judge=judge, rate=1.0, cap=10)
    assert report.judged_now == 0 and report.already == 1 and len(judge.calls) == 1
    assert JudgeVerdict.objects.get(trace=trace).sampled_on == clock.today()


def test_the_beat_task_judges_yesterday_and_today_by_the_products_clock(make_turn, settings):
    settings.OPENAI_API_KEY = settings.OPENAI_BASE_URL = ""  # the offline judge
    settings.JUDGE_LIVE_RATE = 1.0
    today = clock.today()
    make_turn(day=today)
    make_turn(day=today - dt.timedelta(days=1))
    make_turn(day=today - dt.timedelta(days=2))  # older than yesterday: left alone
    assert judge_live() == 2
    assert sorted(JudgeVerdict.objects.values_list("sampled_on", flat=True)) == [today - dt.timedelta(days=1), today]
    assert judge_live() == 0
    assert "evals.judge_live" in {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}


# --- The dashboard's card and the trace page ----------------------------------------------------------------------

def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _labelled_traces(conversation, judge, *, passes, fails, author):
    """Human labels on the test split, judged: the calibration the corrected rate needs."""
    made = {"pass": 0, "fail": 0}
    while made["pass"] < passes or made["fail"] < fails:
        label = "pass" if made["pass"] < passes else "fail"
        trace = Trace.objects.create(conversation=conversation, channel="webchat", outcome="answered",
                                     query="q", final_text=SUPPORTED if label == "pass" else UNSUPPORTED,
                                     evidence=EVIDENCE)
        Trace.objects.filter(pk=trace.pk).update(created_at=clock.now() - dt.timedelta(days=40))
        if split_for(f"trace:{trace.pk}") != "test":
            trace.delete()
            continue
        human_label_save(trace=trace, label=label, author=author)
        made[label] += 1
    judge_labelled(judge=judge, limit=500)


def test_the_dashboard_shows_the_judged_count_the_flagged_rate_and_the_corrected_rate(
        client, make_staff, make_turn, conversation, settings, monkeypatch):
    analyst = make_staff("ana", "analyst")
    judge = CountingJudge()
    monkeypatch.setattr("evals.views.live_judge.get_judge", lambda: judge)
    for n in range(20):
        make_turn(answer=UNSUPPORTED if n % 4 == 0 else SUPPORTED)
    judge_live_day(day=clock.today(), judge=judge, rate=1.0, cap=200)
    client.force_login(analyst)
    uncalibrated = _text(client.get(reverse("evals:dashboard_judge")).content.decode())
    assert "20 answered turns judged by counting-1" in uncalibrated
    assert "judge-flagged 25 % (5 of 20)" in uncalibrated
    assert "judge-corrected not available" in uncalibrated
    _labelled_traces(conversation, judge, passes=8, fails=4, author=analyst)
    card = _text(client.get(reverse("evals:dashboard_judge"), {"range": "7d"}).content.decode())
    # A perfect judge on the labels: TPR = TNR = 1, so the corrected flagged rate is the observed one.
    assert "judge-corrected 25 % [" in card and "TPR 1.00, TNR 1.00" in card
    summary = live_judge_summary(first_day=clock.today(), last_day=clock.today(), judge_version="counting-1",
                                 resamples=200)
    assert summary.corrected_flagged["value"] == 0.25
    assert summary.corrected_flagged["lower"] <= 0.25 <= summary.corrected_flagged["upper"]


def test_a_judged_trace_shows_its_verdict_on_its_page(client, make_staff, make_turn):
    judged = make_turn(answer=UNSUPPORTED)
    judge_live_day(day=clock.today(), judge=CountingJudge(), rate=1.0, cap=10)
    client.force_login(make_staff("ana", "analyst"))
    panel = _text(client.get(reverse("evals:trace_panels", args=[judged.pk])).content.decode())
    assert "Fail by counting-1 (offline)" in panel
    assert f"in the live sample of {clock.today():%Y-%m-%d}" in panel and "fail by word" in panel
    page = client.get(reverse("traces:detail", args=[judged.pk])).content.decode()
    assert reverse("evals:trace_panels", args=[judged.pk]) in page


def test_the_card_is_for_analysts_only(client, make_staff):
    client.force_login(make_staff("agent", "agent"))
    assert client.get(reverse("evals:dashboard_judge")).status_code == 403


