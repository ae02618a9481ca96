"""Review sessions: reproducible uniform draws, verified-wrong additions, notes per analyst."""

import datetime as dt

import pytest
from django.urls import reverse

from core import clock
from traces import services
from traces.models import ReviewNote, ReviewSession, SessionTrace, Trace
from traces.tests.test_trace_browser import bot_reply, conversation, make_trace

pytestmark = pytest.mark.django_db


@pytest.fixture
def week():
    now = clock.now()
    inside = [make_trace(when=now - dt.timedelta(hours=i + 1), language="es" if i % 2 else "en") for i in range(40)]
    outside = make_trace(when=now - dt.timedelta(days=30))
    return now - dt.timedelta(days=7), now, inside, outside


def test_same_seed_and_window_draw_the_same_traces(week):
    start, end, inside, outside = week
    first = services.review_session_create(name="a", window_start=start, window_end=end, size=10, seed=1234)
    second = services.review_session_create(name="b", window_start=start, window_end=end, size=10, seed=1234)
    draw = list(first.items.values_list("trace_id", flat=True))
    assert draw == list(second.items.values_list("trace_id", flat=True))
    assert len(draw) == len(set(draw)) == 10 and outside.pk not in draw
    in_window = set(Trace.objects.filter(created_at__gte=start, created_at__lt=end).values_list("pk", flat=True))
    assert set(draw) <= in_window and {t.pk for t in inside} <= in_window
    assert first.seed == 1234 and set(first.items.values_list("source", flat=True)) == {"uniform"}


def test_a_session_without_a_seed_records_the_one_it_used(week):
    start, end, _, _ = week
    session = services.review_session_create(name="a", window_start=start, window_end=end, size=5)
    replay = services.review_session_create(name="b", window_start=start, window_end=end, size=5, seed=session.seed)
    assert list(session.items.values_list("trace_id", flat=True)) == list(replay.items.values_list("trace_id",
                                                                                                     flat=True))


def test_filters_restrict_the_population(week):
    start, end, inside, _ = week
    session = services.review_session_create(name="en", window_start=start, window_end=end, size=100, seed=3,
                                             filters={"language": "en"})
    drawn = list(session.items.select_related("trace"))
    assert len(drawn) >= 20 and {i.trace.language for i in drawn} == {"en"}


def test_verified_wrong_traces_are_added_once_and_tagged(week, make_staff):
    start, end, inside, _ = week
    conv = conversation()
    wrong = make_trace(conversation=conv, reply=bot_reply(conv, wrong=True), when=end - dt.timedelta(minutes=5))
    session = services.review_session_create(name="a", window_start=start, window_end=end, size=41, seed=9)
    assert session.items.filter(trace=wrong, source="uniform").exists()  # drawn already: not added twice
    assert services.review_session_add_verified_wrong(session=session) == 0
    small = services.review_session_create(name="b", window_start=start, window_end=end, size=3, seed=9)
    small.items.filter(trace=wrong).delete()
    assert services.review_session_add_verified_wrong(session=small) == 1
    assert services.review_session_add_verified_wrong(session=small) == 0
    item = small.items.get(trace=wrong)
    assert item.source == SessionTrace.Source.VERIFIED_WRONG and item.position == 4


def test_each_analyst_keeps_one_note_per_trace(week, make_staff):
    start, end, _, _ = week
    session = services.review_session_create(name="a", window_start=start, window_end=end, size=2, seed=5)
    trace = session.items.first().trace
    ana, bob = make_staff("ana", "analyst"), make_staff("bob", "analyst")
    services.review_note_save(session=session, trace=trace, author=ana, verdict="fail",
                              first_failure="The fee chunk was ranked below the business one.", stage="retrieval",
                              model_faithful=True)
    services.review_note_save(session=session, trace=trace, author=ana, verdict="fail",
                              first_failure="Pruned the right chunk.", stage="pruning", model_faithful=True)
    services.review_note_save(session=session, trace=trace, author=bob, verdict="pass")
    notes = {n.author.username: n for n in ReviewNote.objects.filter(trace=trace)}
    assert set(notes) == {"ana", "bob"} and notes["ana"].stage == "pruning"
    with pytest.raises(services.ReviewError):
        services.review_note_save(session=session, trace=trace, author=ana, verdict="fail", first_failure="",
                                  stage="retrieval")
    with pytest.raises(services.ReviewError):
        services.review_note_save(session=session, trace=make_trace(), author=ana, verdict="pass")


def test_an_analyst_samples_and_reviews_in_the_browser_forms(client, make_staff, week):
    start, end, _, _ = week
    client.force_login(make_staff("ana", "analyst"))
    response = client.post(reverse("traces:sessions"), {
        "name": "last week", "size": "3", "since": start.date().isoformat(), "until": end.date().isoformat(),
        "seed": "77", "language": "en"})
    session = ReviewSession.objects.get(name="last week")
    assert response.status_code == 302 and session.filters == {"language": "en"} and session.items.count() == 3
    page = client.get(reverse("traces:session", args=[session.pk])).content.decode()
    assert "0 / 3" in page
    response = client.post(reverse("traces:review", args=[session.pk, 1]), {
        "verdict": "fail", "first_failure": "Routing sent a billing question to the documents.", "stage": "routing",
        "model_faithful": "yes"})
    assert response.status_code == 302 and response["Location"].endswith(f"/sessions/{session.pk}/review/2/")
    missing = client.post(reverse("traces:review", args=[session.pk, 2]), {"verdict": "fail", "stage": "routing"})
    assert missing.status_code == 400 and "one sentence" in missing.content.decode()
    client.post(reverse("traces:review", args=[session.pk, 2]), {"verdict": "pass"})
    assert "2 / 3" in client.get(reverse("traces:session", args=[session.pk])).content.decode()
    note = ReviewNote.objects.get(session=session, verdict="fail")
    assert (note.stage, note.model_faithful) == ("routing", True)
    assert client.get(reverse("traces:list"), {"has_note": "yes"}).context["traces"][0].pk == note.trace_id


def test_agents_cannot_open_review_sessions(client, make_staff, week):
    start, end, _, _ = week
    session = services.review_session_create(name="a", window_start=start, window_end=end, size=1, seed=1)
    client.force_login(make_staff("agent1", "agent"))
    assert client.get(reverse("traces:session", args=[session.pk])).status_code == 403
    assert client.get(reverse("traces:review", args=[session.pk, 1])).status_code == 403
    assert client.get(reverse("traces:taxonomy", args=[session.pk])).status_code == 403


def test_the_review_page_has_single_key_shortcuts_and_keeps_the_access_keys(client, make_staff, week):
    from pathlib import Path

    from django.conf import settings

    start, end, _, _ = week
    session = services.review_session_create(name="keys", window_start=start, window_end=end, size=3, seed=7)
    client.force_login(make_staff("ana", "analyst"))
    html = client.get(reverse("traces:review", args=[session.pk, 2])).content.decode()
    assert '<script src="/static/js/shortcuts.js" defer></script>' in html
    assert 'accesskey="n" data-shortcut="n" rel="next"' in html and 'accesskey="p" data-shortcut="p" rel="prev"' in html
    assert 'value="pass" accesskey="s" data-shortcut="s" data-shortcut-submit' in html
    assert 'value="fail" accesskey="f" data-shortcut="f" data-shortcut-focus="first_failure"' in html
    assert 'value="defer" accesskey="d" data-shortcut="d" data-shortcut-submit' in html
    assert 'accesskey="w"' in html
    first = client.get(reverse("traces:review", args=[session.pk, 1])).content.decode()
    assert 'data-shortcut="n"' in first and 'data-shortcut="p"' not in first
    script = (Path(settings.BASE_DIR) / "static" / "js" / "shortcuts.js").read_text()
    assert "data-shortcut" in script and "isContentEditable" in script and "http" not in script
