"""Taxonomy: classes from a session's notes, bulk assignment, merge and rename with history, counts."""

import datetime as dt

import pytest
from django.urls import reverse

from core import clock
from traces import services
from traces.models import FailureClass, FailureClassEvent, ReviewNote
from traces.tests.test_trace_browser import make_trace

pytestmark = pytest.mark.django_db


@pytest.fixture
def coded(make_staff):
    """A session of 12 failures coded like the seed's pile: 7 from retrieval, 9 faithful, plus one pass."""
    now = clock.now()
    for i in range(13):
        make_trace(when=now - dt.timedelta(hours=i + 1))
    session = services.review_session_create(name="seed", window_start=now - dt.timedelta(days=2),
                                             window_end=now, size=13, seed=11)
    ana = make_staff("ana", "analyst")
    stages = ["retrieval"] * 5 + ["pruning"] * 2 + ["writing"] * 3 + ["billing", "routing"]
    faithful = [True] * 7 + [False] * 3 + [True, True]
    items = list(session.items.select_related("trace"))
    for item, stage, ok in zip(items, stages, faithful):
        services.review_note_save(session=session, trace=item.trace, author=ana, verdict="fail",
                                  first_failure=f"{stage} went wrong first.", stage=stage, model_faithful=ok)
    services.review_note_save(session=session, trace=items[-1].trace, author=ana, verdict="pass")
    return session, ana


def notes_at(session, stage):
    return list(ReviewNote.objects.filter(session=session, stage=stage).values_list("pk", flat=True))


def test_counts_are_correct_after_merges(coded, client):
    session, ana = coded
    ranking = services.failure_class_create(session=session, name="Hard negative ranked first",
                                            definition="A near-duplicate doc outranks the right one.",
                                            stage="retrieval", actor=ana)
    pruned = services.failure_class_create(session=session, name="Right chunk pruned",
                                           definition="The margin prune drops the answer.", stage="pruning")
    invented = services.failure_class_create(session=session, name="Invented number",
                                             definition="The writer states a number not in evidence.",
                                             stage="writing")
    assert services.review_notes_assign(session=session, note_ids=notes_at(session, "retrieval"),
                                        failure_class=ranking, actor=ana) == 5
    services.review_notes_assign(session=session, note_ids=notes_at(session, "pruning"), failure_class=pruned)
    services.review_notes_assign(session=session, note_ids=notes_at(session, "writing"), failure_class=invented)
    services.failure_class_merge(source=pruned, target=ranking, actor=ana)
    services.failure_class_rename(failure_class=ranking, name="Right chunk lost in retrieval", actor=ana)

    client.force_login(ana)
    response = client.get(reverse("traces:taxonomy", args=[session.pk]))
    summary = response.context["summary"]
    classes = {c.pk: c.name for c in FailureClass.objects.all()}
    assert {classes.get(pk, pk): n for pk, n in summary.by_class} == {
        "Right chunk lost in retrieval": 7, "Invented number": 3, None: 2}
    assert (summary.failures, summary.retrieval_failures, summary.generation_failures) == (12, 7, 3)
    assert summary.model_faithful == 9
    html = response.content.decode()
    assert "7 of 12" in html and "9 of 12" in html and "<svg" in html and "Right chunk pruned → " in html
    pruned.refresh_from_db()
    assert pruned.merged_into_id == ranking.pk
    kinds = list(FailureClassEvent.objects.filter(failure_class=ranking).values_list("kind", flat=True))
    assert kinds == ["created", "assigned", "merged", "renamed"]
    # the merged class's traces open from the surviving class
    listed = client.get(reverse("traces:list"), {"failure_class": ranking.pk}).context["traces"]
    assert len(listed) == 7


def test_the_taxonomy_forms_create_assign_merge_and_rename(coded, client):
    session, ana = coded
    client.force_login(ana)
    url = reverse("traces:taxonomy", args=[session.pk])
    client.post(url, {"action": "create", "name": "Wrong doc", "definition": "Wrong document.", "stage": "retrieval"})
    client.post(url, {"action": "create", "name": "Dup", "definition": "Same thing.", "stage": "retrieval"})
    wrong, dup = FailureClass.objects.get(name="Wrong doc"), FailureClass.objects.get(name="Dup")
    retrieval = notes_at(session, "retrieval")
    client.post(url, {"action": "assign", "failure_class": wrong.pk, "notes": retrieval[:3]})
    client.post(url, {"action": "assign", "failure_class": dup.pk, "notes": retrieval[3:]})
    client.post(url, {"action": "merge", "source": dup.pk, "target": wrong.pk})
    client.post(url, {"action": "rename", "failure_class": wrong.pk, "name": "Wrong document retrieved"})
    wrong.refresh_from_db()
    assert wrong.name == "Wrong document retrieved" and wrong.notes.count() == 5
    assert dict(client.get(url).context["summary"].by_class) == {wrong.pk: 5, None: 7}


def test_a_merged_class_takes_no_more_notes(coded):
    session, _ = coded
    a = services.failure_class_create(session=session, name="A", definition="a.", stage="channel")
    b = services.failure_class_create(session=session, name="B", definition="b.", stage="channel")
    services.failure_class_merge(source=a, target=b)
    with pytest.raises(services.ReviewError):
        services.review_notes_assign(session=session, note_ids=notes_at(session, "billing"), failure_class=a)
    with pytest.raises(services.ReviewError):
        services.failure_class_merge(source=b, target=b)
