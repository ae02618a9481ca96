"""Golden-case hygiene: a failing trace gives no hits for free, slugs must name live KB documents, and a case
whose document was deleted later is flagged on its set's page."""

import re
import uuid

import pytest
from django.urls import reverse

from core import clock
from desk.models import Contact, Conversation
from evals.models import GoldenCase, GoldenSet
from evals.services import golden_case_from_trace
from kb.models import Document
from traces.models import Trace

pytestmark = pytest.mark.django_db


def unique(prefix="hyg"):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def document(slug, *, deleted=False):
    return Document.objects.create(slug=slug, title=slug, language="es", content_hash=slug,
                                   deleted_at=clock.now() if deleted else None)


def retrieved(*docs_kept):
    return [{"rank": rank, "chunk_id": rank, "doc": doc, "section": "s", "vector_score": round(0.9 - rank / 20, 3),
             "text_rank": None, "rrf": 0.01, "kept": kept, "prune_reason": "within margin" if kept else "below margin"}
            for rank, (doc, kept) in enumerate(docs_kept, 1)]


def trace(**fields):
    contact = Contact.objects.create(channel="webchat", name="T", language="es")
    conv = Conversation.objects.create(contact=contact, channel="webchat")
    values = {"channel": "webchat", "language": "es", "route": "document", "outcome": "answered",
              "query": "¿a qué hora atienden?"}
    values.update(fields)
    return Trace.objects.create(conversation=conv, **values)


@pytest.fixture
def kb_docs():
    """Three live documents and one deleted, named uniquely for this test."""
    tag = uuid.uuid4().hex[:6]
    names = {"hours": f"horario-atencion-{tag}-es", "fees": f"tarifas-{tag}-es", "business": f"empresas-{tag}-es",
             "gone": f"viejo-{tag}-es"}
    for key, slug in names.items():
        document(slug, deleted=key == "gone")
    return names


@pytest.fixture
def analyst(client, make_staff):
    user = make_staff("ana", "analyst")
    client.force_login(user)
    return user


def test_a_case_from_an_escalated_trace_starts_with_no_hits_and_offers_what_it_retrieved(client, analyst, kb_docs):
    escalated = trace(outcome="escalated", escalation_reason="UNGROUNDED_OUTPUT",
                      retrieval=retrieved((kb_docs["fees"], True), (kb_docs["business"], False)))
    golden_set = GoldenSet.objects.create(name=unique())
    response = client.post(reverse("evals:golden_case_create", args=[escalated.pk]), {"golden_set": golden_set.pk})
    case = GoldenCase.objects.get(golden_set=golden_set)
    assert case.hits == [] and case.hard_negatives == []
    page = client.get(response["Location"]).content.decode()
    assert re.search(r'name="hits" value=""', page)
    suggestions = page[page.index('id="suggestions"'):page.index("</table>", page.index('id="suggestions"'))]
    assert kb_docs["fees"] in suggestions and kb_docs["business"] in suggestions
    assert "Answer could not be verified" in suggestions  # why the case starts empty, in words
    fees_row = suggestions[suggestions.index(kb_docs["fees"]):suggestions.index(kb_docs["business"])]
    assert "hard-negative candidate" in fees_row  # the turn used it and failed
    assert "hard-negative candidate" not in suggestions[suggestions.index(kb_docs["business"]):]
    assert f'<option value="{kb_docs["hours"]}">' in page and f'<option value="{kb_docs["gone"]}">' not in page


@pytest.mark.parametrize("failing", [
    {"verdict_attempts": True},
    {"outcome": "escalated", "escalation_reason": "NO_CONTEXT"},
])
def test_any_failing_trace_gives_no_hits_but_a_clean_answer_keeps_its_kept_documents(kb_docs, failing):
    golden_set = GoldenSet.objects.create(name=unique())
    rows = retrieved((kb_docs["fees"], True))
    fields = dict(failing)
    if fields.pop("verdict_attempts", False):
        fields["attempts"] = [{"attempt": n, "reply": "x", "verdict": {"grounded": False, "problems": [{"token": "1"}],
                                                                       "warnings": [], "derived": []}} for n in (1, 2)]
    bad = golden_case_from_trace(trace=trace(retrieval=rows, **fields), user=None, golden_set=golden_set)
    good = golden_case_from_trace(trace=trace(retrieval=rows), user=None, golden_set=golden_set)
    assert bad.hits == [] and good.hits == [kb_docs["fees"]]


def edit(client, case, **fields):
    data = {"query": case.query, "facts": "", "hits": "", "hard_negatives": ""}
    data.update(fields)
    return client.post(reverse("evals:golden_case", args=[case.pk]), data)


def test_a_made_up_slug_is_refused_with_a_clear_message(client, analyst, kb_docs):
    golden_set = GoldenSet.objects.create(name=unique())
    case = GoldenCase.objects.create(golden_set=golden_set, case_id="c1", query="¿a qué hora atienden?")
    response = edit(client, case, hits=f"support-hours-en, {kb_docs['hours']}")
    assert response.status_code == 400
    page = response.content.decode()
    assert "“support-hours-en” is not a document in the knowledge base" in page
    assert 'value="support-hours-en, ' in page  # what was typed comes back to be corrected
    case.refresh_from_db()
    golden_set.refresh_from_db()
    assert case.hits == [] and golden_set.current_version == 0  # nothing saved, no new version


def test_a_near_miss_gets_a_suggestion_and_a_deleted_document_is_named_as_such(client, analyst, kb_docs):
    golden_set = GoldenSet.objects.create(name=unique())
    case = GoldenCase.objects.create(golden_set=golden_set, case_id="c1", query="q")
    typo = kb_docs["fees"].replace("tarifas", "tarifa")
    page = edit(client, case, hits=typo, hard_negatives=kb_docs["gone"]).content.decode()
    assert f"did you mean “{kb_docs['fees']}”?" in page
    assert f"“{kb_docs['gone']}” was deleted from the knowledge base" in page


def test_live_slugs_are_saved(client, analyst, kb_docs):
    golden_set = GoldenSet.objects.create(name=unique())
    case = GoldenCase.objects.create(golden_set=golden_set, case_id="c1", query="q")
    response = edit(client, case, hits=kb_docs["hours"], hard_negatives=kb_docs["business"])
    assert response.status_code == 302
    case.refresh_from_db()
    assert (case.hits, case.hard_negatives) == ([kb_docs["hours"]], [kb_docs["business"]])


def test_a_case_whose_document_was_deleted_later_is_flagged_on_its_sets_page(client, analyst, kb_docs):
    from kb.editing import document_delete

    golden_set = GoldenSet.objects.create(name=unique())
    flagged = GoldenCase.objects.create(golden_set=golden_set, case_id="fees-case", query="q", hits=[kb_docs["fees"]])
    GoldenCase.objects.create(golden_set=golden_set, case_id="hours-case", query="q", hits=[kb_docs["hours"]])
    # A file imported before its knowledge base names documents not there yet: that is not a deletion.
    GoldenCase.objects.create(golden_set=golden_set, case_id="file-case", query="q", hits=["not-imported-yet-es"])
    url = reverse("evals:golden_set", args=[golden_set.pk])
    assert "cases-missing-documents" not in client.get(url).content.decode()
    document_delete(document=Document.objects.get(slug=kb_docs["fees"]))
    page = client.get(url).content.decode()
    assert "1 case names a document deleted from the knowledge base since" in page
    row = page[page.index(">fees-case<"):]
    row = row[:row.index("</tr>")]
    assert f"document deleted: {kb_docs['fees']}" in row
    for other_id in ("hours-case", "file-case"):
        other = page[page.index(f">{other_id}<"):]
        assert "document deleted" not in other[:other.index("</tr>")]
    case_page = client.get(reverse("evals:golden_case", args=[flagged.pk])).content.decode()
    assert 'id="missing-documents"' in case_page
