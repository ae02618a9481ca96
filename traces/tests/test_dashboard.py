"""The dashboard: the dial and its marks, reasons, shares, operations, comparison, CSV, review samples, access."""

import csv
import datetime as dt
import io

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse

from core import clock
from traces.models import Configuration, HourlyRollup, ReviewSession, Trace
from traces.rollups import rollups_rebuild
from traces.tests.turns import CONFIG_A, CONFIG_B, turn

pytestmark = pytest.mark.django_db

NOW = dt.datetime(2026, 11, 20, 19, 30, tzinfo=dt.UTC)  # 15:30 in Caracas (TIME_ZONE)
TODAY = "2026-11-20"
URL = "/dashboard/"


def days_ago(days: int, hour: int = 14) -> dt.datetime:
    """A moment `days` before NOW's day, at `hour` o'clock in Caracas (UTC-4)."""
    return dt.datetime(2026, 11, 20, hour + 4, 0, tzinfo=dt.UTC) - dt.timedelta(days=days)


@pytest.fixture
def at_now():
    with clock.pinned(NOW, frozen=True):
        yield


@pytest.fixture
def story(at_now, make_staff):
    """Three days before a prompt change (writer-7) and two after (writer-8): more escalations after it."""
    ana, beto = make_staff("ana", "agent"), make_staff("beto", "agent")
    for days in (4, 3, 2):
        turn(when=days_ago(days), configuration=CONFIG_A, latency_ms={"write_1": 400.0}, tokens=(1000, 200))
        turn(when=days_ago(days), configuration=CONFIG_A, wrong=True)
        turn(when=days_ago(days), outcome="escalated", reason="NO_CONTEXT", configuration=CONFIG_A, agent=ana,
             reply_after=dt.timedelta(minutes=10))
        turn(when=days_ago(days), configuration=CONFIG_A, channel="whatsapp", complaint="confirmed")
    for days in (1, 0):
        turn(when=days_ago(days, hour=9), configuration=CONFIG_B)
        for _ in range(3):
            turn(when=days_ago(days, hour=9), outcome="escalated", reason="TOOL_ERROR", configuration=CONFIG_B,
                 agent=beto, reply_after=dt.timedelta(minutes=40))
    Configuration.objects.filter(pk=CONFIG_A.fingerprint).update(first_seen_at=days_ago(4, hour=8))
    Configuration.objects.filter(pk=CONFIG_B.fingerprint).update(first_seen_at=days_ago(1, hour=8))
    rollups_rebuild(start=days_ago(10), end=NOW, now=NOW)
    # This hour is not rolled: the page reads it live.
    turn(when=NOW - dt.timedelta(minutes=5), outcome="escalated", reason="USER_REQUEST", configuration=CONFIG_B)
    return {"ana": ana, "beto": beto}


@pytest.fixture
def analyst(client, make_staff):
    client.force_login(make_staff("luz", "analyst"))
    return client


def page(client, **query):
    response = client.get(URL, query)
    assert response.status_code == 200
    return response.content.decode()


def test_the_dial_shows_both_rates_per_day_and_marks_the_prompt_change(story, analyst):
    html = page(analyst)
    # The change mark says which part changed, on the day the new configuration first ran.
    assert "<title>2026-11-19: Writer prompt version: writer-7 → writer-8</title>" in html
    # 4 turns a day before the change: 1 escalated (25 %), 2 flagged (one wrong, one complaint: 50 %).
    assert "Escalation rate on 2026-11-17: 1 of 4</title>" in html
    assert "Verified wrong or complaint on 2026-11-17: 2 of 4</title>" in html
    # Today: the rolled morning (3 of 4) plus the live turn of this hour (1 more): 4 of 5.
    assert "Escalation rate on 2026-11-20: 4 of 5</title>" in html
    assert "Escalation rate on 2026-11-15" not in html  # no turns that day: no point, not a zero
    assert ('href="/traces/?outcome=escalated&amp;since=2026-11-17&amp;until=2026-11-17"') in html


def test_old_hours_come_from_the_rollups_only(story, analyst):
    Trace.objects.filter(created_at__lt=days_ago(1, hour=0)).delete()  # the rollups keep their counts
    assert "Escalation rate on 2026-11-17: 1 of 4</title>" in page(analyst)


def test_reasons_are_stacked_per_day_with_human_labels_that_link_to_their_traces(story, analyst):
    html = page(analyst)
    assert "<title>Billing system down on 2026-11-19: 100.0% (3 of 3) of the day's escalations</title>" in html
    # the live hour's one of the day's four
    assert "<title>Customer asked for a person on 2026-11-20: 25.0% (1 of 4) of the day's escalations</title>" in html
    # Per reason over the range: a share of the 10 escalations, with the count
    legend = html[html.index('id="reason-shares"'):].split("</ul>")[0]
    assert "Billing system down <strong>60.0% (6 of 10)</strong>" in legend
    assert "Nothing relevant found <strong>30.0% (3 of 10)</strong>" in legend
    assert "Customer asked for a person <strong>10.0% (1 of 10)</strong>" in legend
    assert ('href="/traces/?escalation_reason=NO_CONTEXT&amp;outcome=escalated&amp;since=2026-11-14&amp;'
            'until=2026-11-20" title="NO_CONTEXT">') in html


def test_shares_routes_operations_and_tokens(story, analyst, settings):
    settings.DASHBOARD_PRICE_PER_1K_TOKENS = 0.5
    html = page(analyst)
    shares = html[html.index('id="shares"'):html.index('id="routes"')]
    assert "Answered</a></td><td data-label=\"Turns\" class=\"num\">11</td>" in shares
    assert "Escalated</a></td><td data-label=\"Turns\" class=\"num\">10</td>" in shares
    operations = html[html.index('id="operations"'):html.index('id="compare"')]
    assert '<td data-label="Agent">beto</td><td data-label="Handled" class="num">6</td>' in operations
    assert '<td data-label="Agent">ana</td><td data-label="Handled" class="num">3</td>' in operations
    assert "Writer tokens: 3,000 prompt + 600 completion · estimated cost <strong>1.80 USD</strong>" in operations
    assert 'title="write">' in operations and "Nobody is waiting" not in operations  # the live escalation waits


def test_filters_narrow_every_number_and_bad_values_are_named(story, analyst):
    html = page(analyst, channel="whatsapp")
    assert "Escalation rate on 2026-11-17: 0 of 1</title>" in html
    # The links to the traces behind a number keep the slice.
    assert ('href="/traces/?channel=whatsapp&amp;outcome=escalated&amp;since=2026-11-17&amp;until=2026-11-17"'
            in html)
    html = page(analyst, channel="fax", range="custom", **{"from": "2026-11-18", "to": "2026-11-01"})
    assert "Channel must be one of whatsapp, webchat." in html and "From must be on or before To." in html
    assert "Escalation rate on 2026-11-17: 1 of 4</title>" in html  # fell back to the last 7 days, any channel
    html = page(analyst, range="custom", **{"from": "2026-02-30"})
    assert "From must be a date such as 2026-03-31" in html


def test_a_custom_range_shows_exactly_its_days(story, analyst):
    html = page(analyst, range="custom", **{"from": "2026-11-17", "to": "2026-11-18"})
    assert "on 2026-11-17: 1 of 4" in html and "on 2026-11-19" not in html and "on 2026-11-16" not in html
    assert page(analyst, **{"from": "2026-11-17", "to": "2026-11-18"}).count("Escalation rate on") == 2


def test_compare_two_versions_gives_rates_with_counts_and_an_interval(story, analyst):
    html = page(analyst, a=CONFIG_A.fingerprint, b=CONFIG_B.fingerprint)
    compare = html[html.index('id="compare"'):]
    # After: two rolled days (2 answered, 6 escalated) and the live escalation of this hour.
    assert "25.0% (3 of 12)" in compare and "77.8% (7 of 9)" in compare
    assert '<span class="bad">+52.8 points (+9.7 to +75.4)</span>' in compare  # escalations clearly up
    assert '<span class="ok">-50.0 points (-74.6 to -11.3)</span>' in compare  # fewer wrong answers
    assert "changed: Writer prompt version (writer-7 → writer-8)" in compare
    assert "not a recorded configuration" in page(analyst, a="nope", b=CONFIG_B.fingerprint)


def test_the_csv_has_every_chart_number(story, analyst):
    response = analyst.get(reverse("dashboard:csv"), {"range": "7d"})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["section", "day_or_key", "measure", "value"]
    assert ["dial", "2026-11-17", "escalated", "1"] in rows and ["dial", "2026-11-17", "flagged", "2"] in rows
    assert ["escalations_per_reason", "2026-11-19", "TOOL_ERROR", "3"] in rows
    assert ["agents", "beto", "escalations_handled", "6"] in rows
    assert analyst.get(reverse("dashboard:csv"), {"range": "custom", "from": "x"}).status_code == 400


def test_start_a_review_session_from_the_range(story, analyst):
    response = analyst.post(reverse("dashboard:review"),
                            {"range": "custom", "from": "2026-11-17", "to": "2026-11-18", "size": "30"})
    session = ReviewSession.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("traces:session", args=[session.pk])
    assert session.items.count() == 8  # every turn of the two days: fewer than asked for
    assert analyst.post(reverse("dashboard:review"), {"range": "7d", "size": "-3"}).status_code == 400


def test_an_agent_sees_only_their_own_desk_numbers(story, client):
    client.force_login(story["ana"])
    html = page(client)
    assert 'id="own-numbers"' in html and 'id="dial"' not in html and "beto" not in html
    assert '<td data-label="Handled" class="num">1</td>' in html  # one a day, her own
    # Three 10-minute replies land in the 10–15 minute bucket: the median is read inside it.
    assert "median <strong>12.5 min</strong>, 90 % within <strong>14.5 min</strong> (3 replies)" in html
    rows = list(csv.reader(io.StringIO(client.get(reverse("dashboard:csv")).content.decode())))
    assert ["escalations_handled", "2026-11-19", "escalated", "0"] in rows  # beto's three are not hers
    assert client.post(reverse("dashboard:review"), {"range": "7d"}).status_code == 403


def test_who_may_open_the_dashboard(at_now, client, make_staff):
    assert client.get(URL).status_code == 302  # to the login page
    client.force_login(make_staff("kim", "kb_editor"))
    assert client.get(URL).status_code == 403
    assert client.get(reverse("dashboard:csv")).status_code == 403
    client.force_login(make_staff("sol", "supervisor"))
    html = page(client)
    assert 'id="dial"' in html and 'href="/dashboard/">Dashboard</a>' in html


def test_unrolled_hours_older_than_the_live_window_are_reported(at_now, analyst):
    HourlyRollup.objects.all().delete()
    rollups_rebuild(start=days_ago(3), end=days_ago(2), now=NOW)
    html = page(analyst)
    assert "are not rolled up yet and are not counted" in html


@pytest.mark.django_db(transaction=True)
def test_days_rolled_before_the_outcome_table_existed_show_their_numbers_after_the_migration(story, analyst):
    executor = MigrationExecutor(connection)
    try:
        executor.migrate([("traces", "0014_hourly_rollup")])  # only the detailed daily rows, as rolled then
        executor.loader.build_graph()
        executor.migrate([("traces", "0015_daily_outcome_rollup")])
    finally:
        call_command("migrate", verbosity=0)
    html = page(analyst)
    assert "Escalation rate on 2026-11-17: 1 of 4</title>" in html  # a whole day: read from the new table
    assert "Verified wrong or complaint on 2026-11-17: 2 of 4</title>" in html
    assert "Writer tokens: 3,000 prompt + 600 completion" in html


def test_compare_defaults_to_the_latest_configuration_after_the_one_before_it(story, analyst):
    form = page(analyst).split('id="compare"')[1].split("</form>")[0]
    before = form.split('name="a"')[1].split("</select>")[0]
    after = form.split('name="b"')[1].split("</select>")[0]
    assert f'value="{CONFIG_A.fingerprint}" title="{CONFIG_A.fingerprint}" selected' in before
    assert f'value="{CONFIG_B.fingerprint}" title="{CONFIG_B.fingerprint}" selected' in after
    assert before.count(" selected") == 1 and after.count(" selected") == 1
    chosen = page(analyst, a=CONFIG_B.fingerprint, b=CONFIG_A.fingerprint).split('id="compare"')[1]
    assert f'value="{CONFIG_B.fingerprint}" title="{CONFIG_B.fingerprint}" selected' in \
        chosen.split('name="a"')[1].split("</select>")[0]
