"""Fixtures of the KB tests."""

import pytest


@pytest.fixture
def kb(tmp_path, db):
    """Given a knowledge base of three small documents and nothing else (rolled back after the test)."""
    from kb.embeddings import get_embedder
    from kb.models import Document, EmbeddingSpace
    from kb.services import documents_import
    from tests.support.kb_docs import PLANS, REFUND, TRIAL

    Document.objects.all().delete()
    EmbeddingSpace.objects.all().delete()
    for name, text in (("refund-annual.md", REFUND), ("refund-trial.md", TRIAL), ("plans.md", PLANS)):
        (tmp_path / name).write_text(text, encoding="utf-8")
    documents_import(paths=[tmp_path], embedder=get_embedder())
    return {d.slug: d for d in Document.objects.all()}
