"""Complaint signals in trace review: the browser's filters, review sessions' complaint source, the trace page."""

import datetime as dt

import pytest
from django.urls import reverse

from core import clock
from desk.complaints import complaint_mark
from desk.models import ComplaintSignal
from traces import services
from traces.models import SessionTrace
from traces.tests.test_trace_browser import bot_reply, conversation, listed, make_trace

pytestmark = pytest.mark.django_db


def answered(*, when=None, wrong=False, agent=None):
    conv = conversation()
    return make_trace(conversation=conv, reply=bot_reply(conv, wrong=wrong, agent=agent), when=when)


def signal(trace, source, *, at=None):
    certainty = "suspected" if source == "followup" else "confirmed"
    return ComplaintSignal.objects.create(message=trace.reply, source=source, certainty=certainty,
                                          detail={"reaction": "\U0001F44E", "followup": "contradicts"}.get(source, ""),
                                          at=at or clock.now())


@pytest.fixture
def traces(make_staff):
    """One trace per kind of signal, plus a plain one and a verified-wrong one already in a session."""
    agent = make_staff("ana", "agent")
    marked, reacted, suspected, both, plain = (answered() for _ in range(5))
    complaint_mark(message_id=marked.reply_id, agent=agent)
    signal(reacted, "reaction")
    signal(suspected, "followup")
    signal(both, "followup")
    signal(both, "reaction")
    wrong = answered(wrong=True, agent=agent)
    now = clock.now()
    session = services.review_session_create(name="s", window_start=now - dt.timedelta(days=1),
                                             window_end=now + dt.timedelta(minutes=1), size=1, seed=1)
    services.review_session_add_verified_wrong(session=session)
    assert session.items.filter(trace=wrong, source="verified_wrong").exists()
    return {"marked": marked, "reacted": reacted, "suspected": suspected, "both": both, "plain": plain,
            "wrong": wrong}


def test_customer_complained_lists_only_traces_with_a_confirmed_complaint(client, make_staff, traces):
    client.force_login(make_staff("luis", "analyst"))
    ids = {name: trace.pk for name, trace in traces.items()}
    mine = set(ids.values())
    # A verified-wrong trace sampled into a session is not a complaint (it was counted as one before).
    assert set(listed(client, mine, complaint_sourced="yes")) == {ids["marked"], ids["reacted"], ids["both"]}
    assert set(listed(client, mine, complaint_sourced="no")) == {ids["suspected"], ids["plain"], ids["wrong"]}
    # Suspected only: a trace with a confirmed complaint is not listed again among the suspected ones.
    assert listed(client, mine, suspected_complaint="yes") == [ids["suspected"]]
    assert ids["suspected"] not in listed(client, mine, suspected_complaint="no")


def test_an_undone_agent_mark_no_longer_counts(client, make_staff, traces):
    from desk.complaints import complaint_unmark

    client.force_login(make_staff("luis", "analyst"))
    complaint_unmark(message_id=traces["marked"].reply_id, agent=make_staff("bob", "agent"))
    assert traces["marked"].pk not in listed(client, {traces["marked"].pk}, complaint_sourced="yes")


def test_a_session_draws_confirmed_complaints_of_its_window_once_and_tags_them(traces):
    now = clock.now()
    old = answered(when=now - dt.timedelta(days=30))
    signal(old, "reaction")
    session = services.review_session_create(name="s", window_start=now - dt.timedelta(days=1),
                                             window_end=now + dt.timedelta(minutes=1), size=1, seed=7,
                                             filters={"language": "xx"})  # an empty uniform draw
    assert services.review_session_add_complaints(session=session) == 3
    assert services.review_session_add_complaints(session=session) == 0
    items = list(session.items.order_by("position").values_list("trace_id", "source", "position"))
    assert {trace_id for trace_id, _, _ in items} == {traces["marked"].pk, traces["reacted"].pk, traces["both"].pk}
    assert {source for _, source, _ in items} == {SessionTrace.Source.COMPLAINT}
    assert [position for _, _, position in items] == [1, 2, 3]


def test_a_complaint_already_drawn_is_not_added_twice(traces):
    now = clock.now()
    session = services.review_session_create(name="s", window_start=now - dt.timedelta(days=1),
                                             window_end=now + dt.timedelta(minutes=1), size=1000, seed=7)
    assert services.review_session_add_complaints(session=session) == 0
    assert session.items.filter(trace=traces["marked"], source="uniform").exists()


def test_sampling_from_the_page_can_add_the_windows_complaints(client, make_staff, traces):
    client.force_login(make_staff("luis", "analyst"))
    today = clock.today()
    response = client.post(reverse("traces:sessions"), {
        "name": "complaints", "size": "1", "seed": "3", "language": "xx", "add_complaints": "1",
        "since": (today - dt.timedelta(days=1)).isoformat(), "until": today.isoformat()})
    assert response.status_code == 302
    session_page = client.get(response.url).content.decode()
    assert session_page.count("<td>Complaint</td>") == 3
    session_id = int(response.url.rstrip("/").rsplit("/", 1)[1])
    again = client.post(reverse("traces:session_add_complaints", args=[session_id]))
    assert again.status_code == 302
    assert "0 complaint trace(s) added." in client.get(again.url).content.decode()


def test_the_trace_page_says_who_complained_and_keeps_suspicions_apart(client, make_staff, traces):
    client.force_login(make_staff("luis", "analyst"))
    page = client.get(reverse("traces:detail", args=[traces["both"].pk])).content.decode()
    assert "Customer complained: Negative reaction on WhatsApp (\U0001F44E)" in page
    assert "Suspected complaint: Disagreeing follow-up message" in page
    marked = client.get(reverse("traces:detail", args=[traces["marked"].pk])).content.decode()
    assert "Customer complained: Marked by an agent (ana)" in marked
