"""Review queues: presets, seeded assignment, "next item", progress, agreement, settling, shared classes, scores."""

import datetime as dt

import pytest
from django.urls import reverse

from core import clock
from desk.models import ComplaintSignal
from traces import review_queues, selectors, services
from traces.models import FailureClass, QueueAssignment, ReviewNote, ReviewQueue, ScoreDefinition, SettledLabel, \
    TraceScore
from traces.scores import score_definition_create
from traces.tests.test_trace_browser import bot_reply, conversation, make_trace

pytestmark = pytest.mark.django_db


@pytest.fixture
def window():
    now = clock.now()
    traces = [make_trace(when=now - dt.timedelta(hours=i + 1), route="account" if i % 4 == 0 else "document",
                         final_text="Son Bs. 350,00.") for i in range(24)]
    return now - dt.timedelta(days=7), now + dt.timedelta(minutes=1), traces


@pytest.fixture
def team(make_staff):
    return make_staff("ana", "analyst"), make_staff("bob", "analyst"), make_staff("cy", "supervisor")


def create(window, people, **kwargs):
    start, end, _ = window
    values = {"name": "q", "source": "sample", "window_start": start, "window_end": end, "size": 12,
              "double_fraction": 0.5, "assignees": people, "seed": 42}
    values.update(kwargs)
    queue, _ = review_queues.review_queue_create(**values)
    return queue


def plan(queue):
    return [(item.trace_id, tuple(sorted(item.assignments.values_list("reviewer__username", flat=True))))
            for item in queue.items.order_by("position")]


def test_a_seeded_queue_assigns_the_same_way_with_the_fraction_reviewed_twice(window, team):
    first, again = create(window, team), create(window, team)
    assert plan(first) == plan(again) and len(plan(first)) == 12
    assert sum(len(reviewers) == 2 for _, reviewers in plan(first)) == 6  # half of 12
    single = create(window, team[:1], double_fraction=0)
    assert {reviewers for _, reviewers in plan(single)} == {("ana",)}
    with pytest.raises(services.ReviewError, match="two reviewers"):
        create(window, team[:1], double_fraction=0.2)


def test_presets_pick_complaints_fallbacks_or_one_route(window, team):
    start, end, traces = window
    conv = conversation()
    complained = make_trace(conversation=conv, reply=bot_reply(conv), when=end - dt.timedelta(hours=2))
    ComplaintSignal.objects.create(message=complained.reply, source="agent", certainty="confirmed", at=clock.now())
    fallback = make_trace(fallback="template", when=end - dt.timedelta(hours=3))
    make_trace(fallback="escalated", outcome="escalated", when=end - dt.timedelta(hours=3))  # not an answer
    by_preset = {preset: {i.trace_id for i in create(window, team, source="filter", preset=preset, route="account",
                                                     size=100).items.all()}
                 for preset in ("complaints", "fallbacks", "route")}
    assert by_preset["complaints"] == {complained.pk}
    assert by_preset["fallbacks"] == {fallback.pk}
    assert by_preset["route"] == {t.pk for t in traces if t.route == "account"}


def test_a_double_submitted_form_makes_one_queue(client, window, team):
    start, end, _ = window
    client.force_login(team[0])
    form = {"name": "weekly", "source": "sample", "preset": "", "since": start.date().isoformat(),
            "until": end.date().isoformat(), "size": "6", "double_percent": "50", "seed": "9", "token": "abc123",
            "assignees": [str(u.pk) for u in team[:2]]}
    first = client.post(reverse("traces:queues"), form)
    second = client.post(reverse("traces:queues"), form)
    assert ReviewQueue.objects.filter(name="weekly").count() == 1
    assert first["Location"] == second["Location"] == reverse("traces:queue", args=[ReviewQueue.objects.get().pk])
    bad = client.post(reverse("traces:queues"), {**form, "token": "other", "double_percent": "150"}, follow=True)
    assert "between 0 and 100" in bad.content.decode() and ReviewQueue.objects.count() == 1


def review(client, queue, **form):
    """Follow "next" and post a note on the item it opens; return the item's trace id."""
    opened = client.get(reverse("traces:queue_next", args=[queue.pk]))
    position = int(opened["Location"].rstrip("/").rsplit("/", 1)[1])
    trace_id = queue.items.get(position=position).trace_id
    response = client.post(opened["Location"], form)
    assert response.status_code == 302, response.content.decode()[:2000]
    return trace_id


def test_reviewers_work_next_item_and_the_page_shows_progress_and_kappa(client, window, team):
    ana, bob, _ = team
    queue = create(window, [ana, bob], size=6, double_fraction=1.0)  # every item to both
    wrong_fee = services.failure_class_create(name="Wrong fee quoted", definition="The fee of another plan.",
                                              stage="retrieval")
    client.force_login(ana)
    for _ in range(6):
        review(client, queue, verdict="fail", first_failure="Quoted the business fee.", stage="retrieval",
               failure_class=str(wrong_fee.pk), model_faithful="yes")
    assert client.get(reverse("traces:queue_next", args=[queue.pk]))["Location"] == reverse("traces:queue",
                                                                                           args=[queue.pk])
    client.force_login(bob)
    first = review(client, queue, verdict="pass", model_faithful="yes")
    for _ in range(5):
        review(client, queue, verdict="fail", first_failure="Wrong fee.", stage="retrieval",
               failure_class=str(wrong_fee.pk), model_faithful="yes")
    page = client.get(reverse("traces:queue", args=[queue.pk]))
    agreement = page.context["agreement"]
    # Pass/fail: 5 fail/fail and one fail/pass: p_o = 5/6, p_e = 1·5/6 = 5/6 → κ = 0.
    assert agreement.both_reviewed == 6 and agreement.verdict.value == pytest.approx(0.0)
    # Faithfulness: yes on all six from both — one label throughout: undefined, and said so.
    faithful = dict((d.key, k) for d, k in agreement.scores)["faithful"]
    assert faithful.degenerate and faithful.n == 6
    html = page.content.decode()
    assert "κ undefined" in html and "0.00" in html
    progress = {row.reviewer.username: (row.assigned, row.done, row.left) for row in page.context["progress"]}
    assert progress == {"ana": (6, 6, 0), "bob": (6, 6, 0)} and page.context["open_items"] == 0
    [disagreement] = agreement.disagreements
    assert disagreement.item.trace_id == first and disagreement.about == ["verdict", "failure class"]


def test_a_note_twice_is_one_note_and_others_items_are_not_yours(client, window, team):
    ana, bob, cy = team
    queue = create(window, [ana, bob], size=4, double_fraction=0)
    client.force_login(ana)
    opened = client.get(reverse("traces:queue_next", args=[queue.pk]))["Location"]
    for _ in range(2):
        client.post(opened, {"verdict": "pass"})
    assert ReviewNote.objects.filter(queue=queue, author=ana).count() == 1
    bobs = queue.items.filter(assignments__reviewer=bob).first()
    refused = client.get(reverse("traces:queue_review", args=[queue.pk, bobs.position]), follow=True)
    assert "assigned to someone else" in refused.content.decode()
    client.post(reverse("traces:queue_review", args=[queue.pk, bobs.position]), {"verdict": "pass"})
    assert not ReviewNote.objects.filter(queue=queue, trace=bobs.trace, author=ana).exists()
    with pytest.raises(services.ReviewError, match="not assigned to you"):
        services.review_note_save(queue=queue, trace=bobs.trace, author=cy, verdict="pass")


def test_settling_records_who_and_when_once(client, window, team):
    ana, bob, cy = team
    queue = create(window, [ana, bob], size=1, double_fraction=1.0)
    item = queue.items.get()
    services.review_note_save(queue=queue, trace=item.trace, author=ana, verdict="pass", model_faithful=True)
    services.review_note_save(queue=queue, trace=item.trace, author=bob, verdict="fail", model_faithful=False,
                              first_failure="Invented a fee.", stage="writing")
    client.force_login(cy)
    form = {"verdict": "fail", "score_faithful": "no", "note": "The fee is not in the passage."}
    url = reverse("traces:queue_settle", args=[queue.pk, item.pk])
    assert "settled." in client.post(url, form, follow=True).content.decode()
    assert "already settled so" in client.post(url, form, follow=True).content.decode()
    settled = SettledLabel.objects.get(item=item)
    assert (settled.verdict, settled.scores, settled.settled_by) == ("fail", {"faithful": "no"}, cy)
    assert settled.settled_at is not None
    page = client.get(reverse("traces:queue", args=[queue.pk])).content.decode()
    assert "Settled: Fail" in page and "by cy" in page
    bad = client.post(url, {"verdict": "maybe"}, follow=True)
    assert "Settle on pass or fail" in bad.content.decode() and SettledLabel.objects.get(item=item).verdict == "fail"


def test_settled_faithfulness_becomes_a_calibration_label(client, window, team):
    from evals.models import HumanLabel

    ana, bob, cy = team
    queue = create(window, [ana, bob], size=1, double_fraction=1.0)
    item = queue.items.get()
    for author, faithful in ((ana, True), (bob, False)):
        services.review_note_save(queue=queue, trace=item.trace, author=author, verdict="pass",
                                  model_faithful=faithful)
    review_queues.settled_label_save(item=item, verdict="pass", scores={"faithful": "no"}, actor=cy)
    client.force_login(cy)
    first = client.post(reverse("evals:calibration_import_settled"), follow=True).content.decode()
    assert "1 label imported" in first
    label = HumanLabel.objects.get(trace=item.trace)
    assert (label.label, label.author) == ("fail", cy)
    assert "0 labels imported" in client.post(reverse("evals:calibration_import_settled"),
                                              follow=True).content.decode()


def test_classes_are_the_teams_across_sessions_and_queues(window, team):
    start, end, traces = window
    ana, bob, _ = team
    one = services.review_session_create(name="one", window_start=start, window_end=end, size=3, seed=1)
    two = services.review_session_create(name="two", window_start=start, window_end=end, size=3, seed=2)
    made = services.failure_class_create(session=one, name="Wrong fee", definition="d", stage="retrieval")
    assert services.failure_class_create(session=two, name="wrong FEE", definition="d", stage="retrieval") == made
    trace = two.items.first().trace
    note = services.review_note_save(session=two, trace=trace, author=ana, verdict="fail",
                                     first_failure="Wrong fee.", stage="retrieval")
    assert services.review_notes_assign(session=two, note_ids=[note.pk], failure_class=made) == 1
    queue = create(window, [bob], size=2, double_fraction=0)
    item = queue.items.first()
    queued = services.review_note_save(queue=queue, trace=item.trace, author=bob, verdict="fail",
                                       first_failure="Wrong fee.", stage="retrieval", failure_class_id=made.pk)
    assert queued.failure_class == made and FailureClass.objects.filter(name__iexact="wrong fee").count() == 1
    summary, _ = selectors.session_taxonomy()  # the team's: both notes in the one class
    assert dict(summary.by_class)[made.pk] == 2


def test_a_team_score_set_in_review_filters_the_trace_browser(client, window, team):
    ana, bob, _ = team
    score_definition_create(key="answered", name="Answered the question", kind="boolean",
                            description="Did the reply answer what the customer asked?")
    queue = create(window, [ana], size=2, double_fraction=0)
    client.force_login(ana)
    unanswered = review(client, queue, verdict="fail", first_failure="Talked about another plan.", stage="writing",
                        score_answered="no")
    answered = review(client, queue, verdict="pass", score_answered="yes")
    listed = [t.pk for t in client.get(reverse("traces:list"), {"score": "answered:No"}).context["traces"]]
    assert listed == [unanswered]
    assert [t.pk for t in client.get(reverse("traces:list"), {"score": "answered:yes"}).context["traces"]] == [answered]
    typo = client.get(reverse("traces:list"), {"score": "answred:no"})
    assert "no score “answred”" in typo.content.decode() and typo.status_code == 200
    bad = client.post(reverse("traces:queue_review", args=[queue.pk, 1]), {"verdict": "pass", "score_answered": "maybe"})
    assert bad.status_code == 400 and "answer yes or no" in bad.content.decode()
    assert TraceScore.objects.get(trace_id=unanswered, definition__key="answered").value == "no"


def test_analysts_define_scores_and_a_double_submit_defines_one(client, team):
    client.force_login(team[0])
    form = {"key": "tone", "name": "Tone", "kind": "categorical", "values": "warm\nneutral\ncurt",
            "description": "How the reply sounds to a customer."}
    client.post(reverse("traces:scores"), form)
    again = client.post(reverse("traces:scores"), form, follow=True)
    assert "was already defined" in again.content.decode()
    assert ScoreDefinition.objects.get(key="tone").values == ["warm", "neutral", "curt"]
    taken = client.post(reverse("traces:scores"), {**form, "values": "a\nb"})
    assert taken.status_code == 400 and "is taken" in taken.content.decode()
    assert ScoreDefinition.objects.filter(key="faithful", built_in=True).exists()


def test_the_fallback_filter_lists_turns_the_fallback_answered(client, window, team):
    template = make_trace(fallback="template")
    quote = make_trace(fallback="quote")
    escalated = make_trace(fallback="escalated", outcome="escalated")
    client.force_login(team[0])
    listed = {t.pk for t in client.get(reverse("traces:list"), {"fallback": "yes"}).context["traces"]}
    assert listed == {template.pk, quote.pk}
    assert [t.pk for t in client.get(reverse("traces:list"), {"fallback": "escalated"}).context["traces"]] == \
        [escalated.pk]
    assert "Fallback must be one of" in client.get(reverse("traces:list"), {"fallback": "x"}).content.decode()


def test_queue_pages_are_for_reviewers_only(client, window, team, make_staff):
    queue = create(window, team[:2], size=2, double_fraction=1.0)
    item = queue.items.first()
    for role in ("agent", "kb_editor"):
        client.force_login(make_staff(f"someone-{role}", role))
        assert client.get(reverse("traces:queues")).status_code == 403
        assert client.get(reverse("traces:queue", args=[queue.pk])).status_code == 403
        assert client.post(reverse("traces:queue_review", args=[queue.pk, 1]), {"verdict": "pass"}).status_code == 403
        assert client.post(reverse("traces:queue_settle", args=[queue.pk, item.pk]),
                           {"verdict": "pass"}).status_code == 403
    assert not ReviewNote.objects.filter(queue=queue).exists() and not QueueAssignment.objects.filter(
        item__queue=queue, reviewer__username__startswith="someone").exists()


def test_the_browser_hands_its_filters_and_dates_to_a_new_queue(client, team):
    client.force_login(team[0])
    page = client.get(reverse("traces:queues"), {"route": "account", "fallback": "yes", "since": "2026-10-10",
                                                 "until": "2026-10-12"})
    assert page.context["filters"] == {"route": "account", "fallback": "yes"}
    assert (page.context["default_since"], page.context["default_until"]) == ("2026-10-10", "2026-10-12")
    html = page.content.decode()
    assert '<input type="hidden" name="fallback" value="yes">' in html
    assert "fallback: answered by the verified-only fallback" in html
