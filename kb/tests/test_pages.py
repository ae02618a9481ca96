import pytest
from django.urls import reverse

from kb.embeddings import get_embedder
from kb.models import Document
from kb.services import documents_import
from tests.support.kb_docs import REFUND, TRIAL

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_kb(tmp_path):
    Document.objects.all().delete()
    (tmp_path / "a.md").write_text(REFUND, encoding="utf-8")
    (tmp_path / "b.md").write_text(TRIAL, encoding="utf-8")
    documents_import(paths=[tmp_path], embedder=get_embedder())


def test_an_editor_sees_documents_sections_and_chunks(client, make_staff, small_kb):
    client.force_login(make_staff("eva", "kb_editor"))
    listing = client.get(reverse("kb:documents")).content.decode()
    assert "t-refund-annual" in listing and "t-refund-trial" in listing
    detail = client.get(reverse("kb:document", args=["t-refund-annual"])).content.decode()
    assert "Collection account" in detail and "01029988770006655443" in detail


@pytest.mark.parametrize("url_name, args", [("kb:documents", []), ("kb:search", [])])
def test_an_agent_may_not_open_the_kb(client, make_staff, url_name, args):
    client.force_login(make_staff("ana", "agent"))
    assert client.get(reverse(url_name, args=args)).status_code == 403


def test_try_a_query_shows_fusion_and_prune_and_htmx_gets_only_the_partial(client, make_staff, small_kb):
    client.force_login(make_staff("eva", "kb_editor"))
    url = reverse("kb:search") + "?q=refund+account+01029988770006655443"
    page = client.get(url).content.decode()
    assert "<h1>Try a query</h1>" in page
    assert "Identifier branch" in page and "identifier" in page
    partial = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "<h1>" not in partial and "Fused and pruned" in partial
    assert "t-refund-annual" in partial


def test_a_bad_k_does_not_break_the_page(client, make_staff, small_kb):
    client.force_login(make_staff("eva", "kb_editor"))
    assert client.get(reverse("kb:search") + "?q=refund&k=abc").status_code == 200


def test_the_playground_says_when_common_words_were_checked_among_the_vector_candidates_only(
        client, make_staff, small_kb, monkeypatch):
    client.force_login(make_staff("eva", "kb_editor"))
    url = reverse("kb:search") + "?q=trial+refund"
    assert "checked among the vector candidates only" not in client.get(url).content.decode()
    monkeypatch.setattr("kb.search.TEXT_CANDIDATE_CAP", 0)  # every word now counts as held by too many chunks
    page = client.get(url).content.decode()
    assert "words this common single nothing out: checked among the vector candidates only" in page
