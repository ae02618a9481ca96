"""A KB editor reads the knowledge-base side of a trace that retrieved chunks — nothing of the customer's account,
no review action."""

import datetime as dt

import pytest
from django.urls import reverse

from core import clock
from traces import services
from traces.models import ReviewNote
from traces.tests.test_trace_browser import make_trace

pytestmark = pytest.mark.django_db

RETRIEVAL = [{"chunk_id": 901, "doc": "recargo-por-mora", "section": "Recargo", "rank": 1, "rrf": 0.03,
              "vector_score": 0.81, "text_rank": 0.2, "kept": True, "prune_reason": "top"},
             {"chunk_id": 902, "doc": "planes-y-precios", "section": "Empresas", "rank": 2, "rrf": 0.02,
              "vector_score": 0.7, "text_rank": None, "kept": False, "prune_reason": "below margin"}]
EVIDENCE = [{"id": "E1", "kind": "chunk", "chunk_id": 901, "doc": "recargo-por-mora", "text": "El recargo es 5 %."},
            {"id": "E2", "kind": "fact", "fact_kind": "balance", "text": "Saldo pendiente de la cuenta", "value": "777,77"}]


@pytest.fixture
def failing_trace(make_staff):
    trace = make_trace(query="¿cuánto es el recargo por mora?", retrieval=RETRIEVAL, evidence=EVIDENCE,
                       citations=["E1"], customer_id="V-12345678", final_text="El recargo es 5 % [E1].",
                       internal_note="La cuenta V-12345678 debe 777,77.",
                       tool_calls=[{"capability": "balance", "ok": True, "facts": [{"value": "777,77"}]}])
    now = clock.now()
    session = services.review_session_create(name="s", window_start=now - dt.timedelta(days=1),
                                             window_end=now + dt.timedelta(minutes=1), size=50, seed=1)
    services.review_note_save(session=session, trace=trace, author=make_staff("ana", "analyst"), verdict="fail",
                              first_failure="The business surcharge ranked second.", stage="retrieval")
    return trace


def test_an_editor_reads_the_kb_side_of_a_trace_that_retrieved_chunks(client, make_staff, failing_trace):
    client.force_login(make_staff("eva", "kb_editor"))
    response = client.get(reverse("traces:detail", args=[failing_trace.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    for shown in ("¿cuánto es el recargo por mora?", "recargo-por-mora", "planes-y-precios", "El recargo es 5 %",
                  "The business surcharge ranked second.", reverse("kb:chunk", args=[901])):
        assert shown in html
    for hidden in ("V-12345678", "777,77", "Saldo pendiente", "Review notes", "Make a golden case",
                   reverse("evals:trace_panels", args=[failing_trace.pk])):
        assert hidden not in html


def test_an_editor_gets_no_trace_without_chunks_and_no_review_action(client, make_staff, failing_trace):
    editor = make_staff("eva", "kb_editor")
    client.force_login(editor)
    no_chunks = make_trace(query="hola", customer_id="V-1")
    assert client.get(reverse("traces:detail", args=[no_chunks.pk])).status_code == 403
    assert client.get(reverse("traces:detail", args=[999_999_999])).status_code == 404
    assert client.get(reverse("traces:list")).status_code == 403
    session = ReviewNote.objects.get(trace=failing_trace).session
    refused = [
        client.post(reverse("traces:review", args=[session.pk, 1]), {"verdict": "pass"}),
        client.post(reverse("evals:trace_label", args=[failing_trace.pk]), {"label": "fail"}),
        client.post(reverse("evals:golden_case_create", args=[failing_trace.pk]), {"golden_set": "1"}),
        client.get(reverse("evals:trace_panels", args=[failing_trace.pk])),
        client.post(reverse("traces:taxonomy", args=[session.pk]), {"action": "create", "name": "x",
                                                                    "definition": "y", "stage": "retrieval"}),
    ]
    assert [r.status_code for r in refused] == [403] * len(refused)
    assert ReviewNote.objects.filter(author=editor).count() == 0


def test_reviewers_and_agents_keep_the_full_page(client, make_staff, failing_trace):
    client.force_login(make_staff("ana2", "analyst"))
    html = client.get(reverse("traces:detail", args=[failing_trace.pk])).content.decode()
    assert "V-12345678" in html and "Review notes" in html
