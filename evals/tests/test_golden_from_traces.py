"""Golden cases that start right: the case editor's fields, a case from a trace that keeps its customer, language
and day, a bulk add that proposes what the reply cited and waits for review, run pages that link each case, and
the taxonomy's class forms."""

import datetime as dt
import re
from html import unescape
import uuid

import pytest
from django.urls import reverse
from django.utils import timezone

from bot.turn import run_turn
from bot.writer import TemplateWriter
from desk.models import Contact, Conversation, Message
from evals.models import GoldenCase, GoldenSet
from evals.runner import eval_run
from evals.services import golden_case_from_trace, golden_export
from traces.models import FailureClass, ReviewSession, Trace

pytestmark = pytest.mark.django_db


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def real_trace(text="cuanto cobran por reconexion de fibra", *, language="es", customer_id="C-1001") -> Trace:
    contact = Contact.objects.create(channel="webchat", name="Test", customer_id=customer_id, language=language)
    conversation = Conversation.objects.create(contact=contact, channel="webchat")
    message = Message.objects.create(conversation=conversation, direction="in", author="customer", kind="text",
                                     text=text, provider_message_id=f"wamid.{uuid.uuid4().hex}")
    return run_turn(message_id=message.pk, writer=TemplateWriter())


@pytest.fixture
def golden_set(db):
    return GoldenSet.objects.create(name=f"set-{uuid.uuid4().hex[:6]}")


@pytest.fixture
def analyst_client(client, make_staff):
    client.force_login(make_staff("ana", "analyst"))
    return client


def test_a_case_from_a_trace_keeps_the_customer_the_language_and_the_day(sample_kb, golden_set, analyst_client):
    trace = real_trace("how much is the fiber reconnection fee", language="en")
    assert trace.language == "en"
    case = golden_case_from_trace(trace=trace, user=None, golden_set=golden_set)
    assert (case.customer_id, case.language, case.as_of) == ("C-1001", "en", timezone.localdate(trace.created_at))
    assert case.reviewed  # made one at a time from the trace page: the analyst is looking at it
    row = golden_export(name=golden_set.name)[0]
    assert (row["customer_id"], row["language"], row["as_of"]) == ("C-1001", "en", case.as_of.isoformat())


def test_the_case_editor_saves_scope_split_language_must_pass_and_as_of(sample_kb, golden_set, analyst_client):
    case = golden_case_from_trace(trace=real_trace(), user=None, golden_set=golden_set)
    url = reverse("evals:golden_case", args=[case.pk])
    form = analyst_client.get(url).content.decode()
    for name in ("out_of_scope", "split", "language", "as_of", "must_pass"):
        assert f'name="{name}"' in form
    saved = analyst_client.post(url, {"query": case.query, "hits": "", "hard_negatives": "", "facts": "",
                                      "out_of_scope": "on", "must_pass": "on", "split": "test", "language": "es",
                                      "as_of": "2026-10-20"})
    assert saved.status_code == 302
    case.refresh_from_db()
    assert (case.out_of_scope, case.must_pass, case.split, case.language, case.as_of) == (
        True, True, "test", "es", dt.date(2026, 10, 20))


@pytest.mark.parametrize("change, says", [
    ({"out_of_scope": "on", "hits": "reconexion-fibra-es"}, "An out-of-scope case lists no hits"),
    ({"split": "train"}, "The split must be one of dev, test"),
    ({"language": "fr"}, "The language must be one of es, en"),
    ({"as_of": "2026-13-45"}, "As of"),
])
def test_a_bad_field_is_refused_with_a_sentence_and_the_form_keeps_what_was_typed(
        sample_kb, golden_set, analyst_client, change, says):
    case = golden_case_from_trace(trace=real_trace(), user=None, golden_set=golden_set)
    version = GoldenSet.objects.get(pk=golden_set.pk).current_version
    posted = {"query": "una pregunta nueva", "hits": "", "hard_negatives": "", "facts": "", **change}
    response = analyst_client.post(reverse("evals:golden_case", args=[case.pk]), posted)
    assert response.status_code == 400 and says in response.content.decode()
    assert "una pregunta nueva" in response.content.decode()
    assert GoldenSet.objects.get(pk=golden_set.pk).current_version == version


def test_bulk_add_proposes_the_cited_documents_and_waits_for_review(sample_kb, golden_set, analyst_client):
    trace = real_trace()
    cited = {row["doc"] for row in trace.evidence if row["id"] in trace.citations}
    kept = {row["doc"] for row in trace.retrieval if row.get("kept")}
    assert cited and cited < kept  # the reply cited fewer documents than the search kept
    back = analyst_client.post(reverse("evals:golden_bulk_add"), {"trace": [trace.pk], "golden_set": golden_set.pk,
                                                                 "next": "/traces/"})
    assert back.status_code == 302
    case = GoldenCase.objects.get(golden_set=golden_set)
    assert set(case.hits) == cited and not case.reviewed
    assert "waits for review on the set's page" in _text(analyst_client.get(back.url).content.decode())
    page = _text(analyst_client.get(reverse("evals:golden_set", args=[golden_set.pk])).content.decode())
    assert "Cases awaiting review (1)" in page and "awaiting review" in page
    run = eval_run(golden_set=golden_set, retrieval_only=True)
    assert run.metrics["cases"] == 0 and run.metrics["unreviewed_left_out"] == 1
    approved = analyst_client.post(reverse("evals:golden_case_review", args=[golden_set.pk, case.pk]),
                                   {"decision": "approve"})
    assert approved.status_code == 302
    case.refresh_from_db()
    assert case.reviewed
    assert eval_run(golden_set=golden_set, retrieval_only=True).metrics["cases"] == 1


def test_saving_a_case_awaiting_review_accepts_it(sample_kb, golden_set, analyst_client):
    analyst_client.post(reverse("evals:golden_bulk_add"), {"trace": [real_trace().pk], "golden_set": golden_set.pk})
    case = GoldenCase.objects.get(golden_set=golden_set)
    url = reverse("evals:golden_case", args=[case.pk])
    assert "awaiting review" in _text(analyst_client.get(url).content.decode())
    analyst_client.post(url, {"query": case.query, "hits": ", ".join(case.hits), "hard_negatives": "", "facts": "",
                              "split": "", "language": "es", "as_of": ""})
    case.refresh_from_db()
    assert case.reviewed and case.as_of is None


def test_the_run_page_links_each_case_to_its_case_its_trace_and_its_other_runs(sample_kb, golden_set,
                                                                               analyst_client):
    trace = real_trace()
    case = golden_case_from_trace(trace=trace, user=None, golden_set=golden_set)
    first = eval_run(golden_set=golden_set, retrieval_only=True)
    second = eval_run(golden_set=golden_set, retrieval_only=True)
    html = analyst_client.get(reverse("evals:run", args=[second.pk])).content.decode()
    assert f'href="{reverse("evals:golden_case", args=[case.pk])}"' in html
    assert f'href="{reverse("traces:detail", args=[trace.pk])}"' in html
    assert f'href="{reverse("evals:run", args=[first.pk])}#items"' in html


# --- The taxonomy's class forms -----------------------------------------------------------------------------------

@pytest.fixture
def session(make_staff):
    from core import clock

    now = clock.now()
    return ReviewSession.objects.create(name="s", window_start=now - dt.timedelta(days=1), window_end=now, seed=1,
                                        requested_size=1, created_by=make_staff("owner", "analyst"))


def test_the_class_forms_have_headings_and_the_merge_form_starts_on_two_different_classes(analyst_client, session):
    first = FailureClass.objects.create(session=session, name="Alpha", definition="a", stage="retrieval")
    second = FailureClass.objects.create(session=session, name="Beta", definition="b", stage="writing")
    html = analyst_client.get(reverse("traces:taxonomy", args=[session.pk])).content.decode()
    assert "<h3 id=\"new-class-heading\">New class</h3>" in html and "Merge two classes</h3>" in html
    merge = html.split('aria-label="Merge"')[1].split("</form>")[0]
    source = re.search(r'name="source">.*?<option value="(\d+)" selected', merge).group(1)
    target = re.search(r'name="target">.*?<option value="(\d+)" selected', merge, re.S).group(1)
    assert {int(source), int(target)} == {first.pk, second.pk}


def test_merging_a_class_into_itself_is_refused_and_changes_nothing(analyst_client, session):
    alpha = FailureClass.objects.create(session=session, name="Alpha", definition="a", stage="retrieval")
    FailureClass.objects.create(session=session, name="Beta", definition="b", stage="writing")
    response = analyst_client.post(reverse("traces:taxonomy", args=[session.pk]),
                                   {"action": "merge", "source": alpha.pk, "target": alpha.pk}, follow=True)
    assert "“Alpha” cannot be merged into itself" in response.content.decode()
    alpha.refresh_from_db()
    assert alpha.merged_into_id is None
