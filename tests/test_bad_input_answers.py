"""What a person sees for the inputs that used to answer 500: the page with what was ignored, or a 400 that
says what to change — never a server error. (tests/test_bad_input.py fuzzes every page; this file reads
the answers.)"""

import datetime as dt
import json
import re
from html import unescape

import pytest
from django.urls import reverse

from core import clock
from desk.models import CannedReply, Message
from desk.services import conversation_take_over
from evals.models import GoldenCase, GoldenSet
from tests.support.factories import conversation_start, escalated
from traces import services as review
from traces.models import Trace

pytestmark = pytest.mark.django_db


def a_trace(*, hours_ago: int) -> Trace:
    trace = Trace.objects.create(conversation=conversation_start(), channel="webchat", language="es",
                                 route="document", outcome="answered", query="cuánto debo", index_version=1)
    Trace.objects.filter(pk=trace.pk).update(created_at=clock.now() - dt.timedelta(hours=hours_ago))
    return trace


def page_text(response) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", response.content.decode())))


@pytest.fixture
def analyst(client, make_staff):
    client.force_login(make_staff("ana-bad-input", "analyst"))
    return client


def test_the_trace_browser_ignores_impossible_filters_and_says_which(analyst):
    trace = a_trace(hours_ago=1)
    response = analyst.get(reverse("traces:list"), {
        "index_version": "²", "failure_class": "٣", "until": "9999-12-31", "since": "2026-13-45T10:00:00",
        "model": "a\x00b", "latency_above": "NaN", "after": "2026-13-45T10:00:00_1"})
    assert response.status_code == 200
    assert trace in response.context["traces"]  # nothing narrowed the list
    text = page_text(response)
    for said in ("Index version must be a whole number, not “²”.", "Failure class must be a whole number",
                 "To must be between 1900 and 2100.", "From must be a date such as 2026-03-31",
                 "Model contains a NUL character", "Latency above must be a number",
                 "That page link is out of date; showing the first page."):
        assert said in text


def test_an_export_with_an_impossible_filter_is_refused_rather_than_widened(analyst, settings):
    settings.DEBUG = False
    response = analyst.get(reverse("traces:export", args=["csv"]), {"until": "9999-12-31"})
    assert response.status_code == 400 and "To must be between 1900 and 2100." in page_text(response)


def test_runs_and_compare_say_what_was_wrong_with_the_run_or_set_id(analyst):
    runs = analyst.get(reverse("evals:runs"), {"golden": "²"})
    assert runs.status_code == 200 and "The golden set must be a whole number" in page_text(runs)
    compare = analyst.get(reverse("evals:run_compare"), {"base": "²", "head": "1"}, follow=True)
    assert compare.redirect_chain[-1][0] == reverse("evals:runs")
    assert "The base run must be a whole number" in page_text(compare)


def test_variants_with_an_impossible_failure_class_say_so(analyst):
    golden_set = GoldenSet.objects.create(name="bad-input-variants")
    response = analyst.post(reverse("evals:golden_set_variants", args=[golden_set.pk]),
                            {"failure_class": "²", "per_trace": "9" * 30}, follow=True)
    assert response.status_code == 200 and "Variants per trace must be a whole number" in page_text(response)


def test_golden_case_facts_with_a_nul_character_are_refused_and_the_case_is_unchanged(analyst):
    case = GoldenCase.objects.create(golden_set=GoldenSet.objects.create(name="bad-input-facts"), case_id="c1",
                                     query="¿cuánto debo?", facts=["350,00"])
    response = analyst.post(reverse("evals:golden_case", args=[case.pk]),
                            {"query": "¿cuánto debo?", "facts": "350,00\nBs.\x00", "hits": "", "hard_negatives": ""})
    assert response.status_code == 400  # the form comes back with the sentence, as every refused edit does
    assert "The facts field contains a NUL character; remove it." in page_text(response)
    case.refresh_from_db()
    assert case.facts == ["350,00"]


def test_the_verifier_refuses_evidence_nested_5000_deep_before_parsing_it(analyst):
    response = analyst.post(reverse("evals:verifier_playground"),
                            {"answer": "Son USD 45,00 [E1].", "evidence": "[" * 5_000 + "]" * 5_000})
    assert response.status_code == 200
    assert "The evidence nests deeper than 5 levels." in page_text(response)
    one_value = json.dumps([{"id": "E1", "text": "USD 45,00", "value": 1e26}])
    assert analyst.post(reverse("evals:verifier_playground"),
                        {"answer": "Son USD 45,00 [E1].", "evidence": one_value}).status_code == 200


def test_review_writes_with_impossible_values_say_why(analyst):
    now = clock.now()
    a_trace(hours_ago=2)
    refused = analyst.post(reverse("traces:sessions"), {"since": (now - dt.timedelta(days=1)).date().isoformat(),
                                                        "until": now.date().isoformat(), "seed": "9" * 30},
                           follow=True)
    assert "The seed must be a whole number" in page_text(refused)
    session = review.review_session_create(name="s", window_start=now - dt.timedelta(days=1), window_end=now,
                                           size=1, seed=1)
    created = analyst.post(reverse("traces:taxonomy", args=[session.pk]),
                           {"action": "create", "name": "miss\x00ed", "definition": "d", "stage": "retrieval"},
                           follow=True)
    assert "The name contains a NUL character; remove it." in page_text(created)
    assert not session.failure_classes.exists()


def test_the_search_playground_with_a_nul_query_says_so_instead_of_searching(client, make_staff):
    client.force_login(make_staff("kim-bad-input", "kb_editor"))
    response = client.get(reverse("kb:search"), {"q": "pago\x00movil", "k": "²"})
    assert response.status_code == 200 and response.context["result"] is None
    assert "The query contains a NUL character; remove it." in page_text(response)


def test_the_web_chat_refuses_a_nul_message_and_keeps_the_thread(client):
    client.post(reverse("desk:chat"), {"customer_id": "C-1001"})
    before = Message.objects.count()
    page = client.post(reverse("desk:chat"), {"text": "hola\x00"})
    assert page.status_code == 400 and "The message contains a NUL character; remove it." in page_text(page)
    partial = client.post(reverse("desk:chat"), {"text": "x" * 60_000}, HTTP_HX_REQUEST="true")
    assert "The message is longer than 4,000 characters." in page_text(partial)
    assert Message.objects.count() == before


def test_the_conversation_page_ignores_an_impossible_canned_reply_id(client, make_staff):
    agent = make_staff("ana-canned", "agent")
    conversation = escalated().conversation
    conversation_take_over(conversation_id=conversation.pk, agent=agent)
    CannedReply.objects.create(language="es", title="Saludo", text="Hola, ¿en qué le ayudo?")
    client.force_login(agent)
    response = client.get(reverse("desk:conversation", args=[conversation.pk]), {"canned": "²"})
    assert response.status_code == 200 and response.context["composer_text"] == ""
