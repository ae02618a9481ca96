"""What `make demo` seeds: demo users with printed passwords, WhatsApp conversations through the webhook,
and a review session whose worst retrieval failure is coded, with its golden case."""

import io
import re

import pytest
from django.core.management import CommandError, call_command

from core import clock
from demo.management.commands.demo_dashboard import live_configuration, story
from desk.models import Escalation, Message
from evals.models import GoldenCase, GoldenSet
from traces.models import ReviewNote, ReviewSession, Trace

pytestmark = pytest.mark.django_db


def test_demo_users_print_their_passwords_and_log_in(client):
    out = io.StringIO()
    call_command("demo_users", stdout=out)
    lines = {line.split()[0]: line.split()[1] for line in out.getvalue().splitlines()[1:]}
    assert set(lines) == {"agent", "supervisor", "analyst", "editor"}
    response = client.post("/login/", {"username": "agent", "password": lines["agent"]})
    assert response.status_code == 302
    assert client.get("/").status_code == 200  # home is for signed-in staff only


def test_demo_conversations_fill_the_queue_and_replaying_adds_nothing(settings, sample_kb,
                                                                     django_capture_on_commit_callbacks):
    from billing.simulator.mounted import shared_simulator

    settings.WHATSAPP_APP_SECRET = "demo-app-secret"
    with django_capture_on_commit_callbacks(execute=True):  # the queued turns run, as eager Celery does
        call_command("demo_conversations", stdout=io.StringIO())
    reasons = set(Escalation.objects.values_list("reason", flat=True))
    # TOOL_ERROR needs the simulator outage while its turn runs; here the captured turns run after
    # the command healed it (outside a test transaction they run at once). test_turn covers it.
    assert {"USER_REQUEST", "MEDIA", "NO_CONTEXT"} <= reasons  # the photo escalates as MEDIA
    assert Trace.objects.filter(channel="whatsapp", outcome="answered").count() >= 3
    assert shared_simulator().fault is None  # the outage was only for its one conversation
    messages = Message.objects.count()
    call_command("demo_conversations", stdout=io.StringIO())
    assert Message.objects.count() == messages


def test_demo_conversations_refuse_without_a_webhook_secret(settings):
    settings.WHATSAPP_APP_SECRET = ""
    with pytest.raises(CommandError, match="WHATSAPP_APP_SECRET"):
        call_command("demo_conversations", stdout=io.StringIO())


def test_the_demo_leaves_a_coded_retrieval_failure_and_its_golden_case(settings, sample_kb,
                                                                      django_capture_on_commit_callbacks):
    from demo.management.commands.demo_conversations import REVIEW_SESSION

    settings.WHATSAPP_APP_SECRET = "demo-app-secret"
    settings.OPENAI_API_KEY = settings.OPENAI_BASE_URL = ""
    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo_users", stdout=io.StringIO())
        call_command("demo_conversations", stdout=io.StringIO())

    session = ReviewSession.objects.get(name=REVIEW_SESSION)
    note = ReviewNote.objects.get(session=session, verdict="fail")
    assert (note.stage, note.author.username) == ("retrieval", "analyst")
    failure_class = note.failure_class
    assert (failure_class.name, failure_class.stage) == ("Right document not retrieved", "retrieval")
    trace = note.trace
    assert trace.query == "if i downgrade mid month do i get money back for the days left"
    assert trace.outcome == "answered"  # answered, from the wrong document
    kept = [row["doc"] for row in trace.retrieval if row.get("kept")]
    assert kept and kept[0] != "proration-en"  # the bot read another policy first
    assert session.items.filter(trace=trace).exists()

    demo = GoldenSet.objects.get(name="demo")
    case = GoldenCase.objects.get(golden_set=demo, trace=trace)
    assert case.hits == ["proration-en"] and case.query == trace.query
    assert demo.cases.count() >= 4 and demo.versions.get(number=demo.current_version).snapshot

    # Run again: nothing new.
    counts = (ReviewSession.objects.count(), ReviewNote.objects.count(), GoldenCase.objects.count(),
              demo.current_version, Trace.objects.count())
    call_command("demo_conversations", stdout=io.StringIO())
    demo.refresh_from_db()
    assert (ReviewSession.objects.count(), ReviewNote.objects.count(), GoldenCase.objects.count(),
            demo.current_version, Trace.objects.count()) == counts


def test_the_demo_calibration_shows_tpr_tnr_and_a_corrected_rate_with_its_interval_on_first_open(
        settings, sample_kb, client, django_capture_on_commit_callbacks):
    import re
    from html import unescape

    from django.contrib.auth import get_user_model

    from evals.models import EvalRun, HumanLabel, JudgeVerdict

    settings.WHATSAPP_APP_SECRET = "demo-app-secret"
    settings.OPENAI_API_KEY = settings.OPENAI_BASE_URL = ""
    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo_users", stdout=io.StringIO())
        call_command("demo_conversations", stdout=io.StringIO())
    out = io.StringIO()
    call_command("demo_calibration", stdout=out)
    assert re.search(r"corrected pass rate [01]\.\d{3} \[[01]\.\d{3}, [01]\.\d{3}\]", out.getvalue())

    # The committed human labels, every split with both classes, judged by the offline judge.
    for split in ("dev", "test"):
        labels = set(HumanLabel.objects.filter(split=split).values_list("label", flat=True))
        assert labels == {"pass", "fail"}, split
    assert HumanLabel.objects.count() >= 60
    verdicts = set(JudgeVerdict.objects.filter(run_item__human_labels__isnull=False).values_list("label", flat=True))
    assert {"pass", "fail"} <= verdicts  # the offline judge passes some answers and fails others

    client.force_login(get_user_model().objects.get(username="analyst"))
    page = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", client.get("/traces/calibration/").content.decode())))
    assert re.search(r"TPR \(judge passes what a human passes\) [01]\.\d{3}", page)
    assert re.search(r"TNR \(judge fails what a human fails\) [01]\.\d{3}", page)
    assert re.search(r"Corrected pass rate 95 % interval .*? [01]\.\d{3} .*?\[[01]\.\d{3}, [01]\.\d{3}\]", page)
    assert "Not computable" not in page and "Corrected pass rate undefined" not in page
    assert re.search(r"\d+ labelled items?: train \d+ · dev \d+ · test \d+", page)

    # The last run is gated against the set's previous real run, never the run that holds the labels.
    labels_run = EvalRun.objects.get(labels_file="evals/fixtures/judge_labels.jsonl")
    last = EvalRun.objects.filter(golden_set__name="demo-calibration").order_by("-pk").first()
    assert labels_run.status == "done" and labels_run.golden_set.name == "sample"
    assert last.gate_decisions.get().baseline not in ("", f"run {labels_run.pk}")

    runs = EvalRun.objects.count()
    again = io.StringIO()
    call_command("demo_calibration", stdout=again)  # idempotent
    assert "nothing to do" in again.getvalue() and EvalRun.objects.count() == runs


def test_the_dashboard_demo_tells_its_story_and_a_second_run_adds_nothing(client):
    from django.contrib.auth import get_user_model

    from traces.models import HourlyRollup
    from traces.rollups import hour_floor

    call_command("demo_users", stdout=io.StringIO())
    out = io.StringIO()
    call_command("demo_dashboard", stdout=out)
    assert "turns over 14 days" in out.getvalue()
    turns = Trace.objects.count()
    rolled = list(HourlyRollup.objects.order_by("pk").values_list("hour", "turns"))
    # Every turn before this hour is rolled; this hour's are read live.
    assert sum(n for _, n in rolled) == Trace.objects.filter(created_at__lt=hour_floor(clock.now())).count()
    assert turns > 1000
    call_command("demo_dashboard", stdout=io.StringIO())
    assert Trace.objects.count() == turns
    assert sorted(HourlyRollup.objects.values_list("hour", "turns")) == sorted(rolled)
    client.force_login(get_user_model().objects.get(username="analyst"))
    html = client.get("/dashboard/", {"range": "30d"}).content.decode()
    # The marks are the story's two changes, and the last configuration is the one the live demo runs.
    live = live_configuration()
    previous, stricter, last = story(live)
    assert last.parts == live
    assert f"Writer prompt version: {previous.parts.prompt_version} → {live.prompt_version}" in html
    assert re.search(r"Retrieval prune margin: [\d.]+ → [\d.]+", html)
    assert "Nothing relevant found" in html and 'id="agents"' not in html


def test_the_dashboard_demo_asks_varied_questions_on_every_route_with_the_outcomes_the_bot_gives():
    call_command("demo_dashboard", stdout=io.StringIO())
    traces = Trace.objects.filter(provider_message_id__startswith="demo-dash-")
    by_route = {}
    for route, outcome, reason, query in traces.values_list("route", "outcome", "escalation_reason", "query"):
        by_route.setdefault(route, []).append((outcome, reason, query))
    assert set(by_route) == {"document", "account", "human", "unsupported", "smalltalk", "media"}
    assert len({query for rows in by_route.values() for _, _, query in rows}) > 300
    assert {(o, r) for o, r, _ in by_route["human"]} == {("escalated", "USER_REQUEST")}
    assert {(o, r) for o, r, _ in by_route["unsupported"]} == {("escalated", "CAPABILITY_MISSING")}
    assert {(o, r) for o, r, _ in by_route["media"]} == {("escalated", "MEDIA")}
    assert {o for o, _, _ in by_route["smalltalk"]} == {"answered", "silenced"}
    for route in ("document", "account"):
        answered = sum(o == "answered" for o, _, _ in by_route[route]) / len(by_route[route])
        assert 0.6 < answered < 0.95, (route, answered)
    assert "USER_REQUEST" not in {r for rows in (by_route["document"], by_route["account"]) for _, r, _ in rows}
