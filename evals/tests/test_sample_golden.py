"""The sample knowledge base answers its golden set: the figures the README promises."""

import io
import json

import pytest
from django.core.management import call_command

from evals.golden import read_golden
from kb.models import Chunk, Document, Section
from kb.search import search

pytestmark = pytest.mark.django_db


def test_sample_kb_has_both_languages_and_splits_long_sections(sample_kb):
    assert Document.objects.filter(language="es").count() >= 20
    assert Document.objects.filter(language="en").count() >= 15
    split = [s for s in Section.objects.all() if s.chunks.count() > 1]
    assert split, "the long sections must be split on paragraph boundaries"
    for section in split:
        for chunk in section.chunks.all():
            assert chunk.text.startswith(section.document.title + "\n")


def test_golden_set_meets_the_retrieval_targets(sample_kb, settings):
    out = io.StringIO()
    call_command("eval_retrieval", "--golden", str(settings.BASE_DIR / "evals/fixtures/golden.jsonl"), "--json",
                 stdout=out)
    report = json.loads(out.getvalue())
    assert report["cases"] >= 40
    assert report["must_pass_failures"] == []
    assert report["recall@5"] >= 0.90
    assert report["mrr"] >= 0.75


def test_every_identifier_case_reaches_its_document_through_the_identifier_branch(sample_kb, settings):
    cases = [c for c in read_golden(settings.BASE_DIR / "evals/fixtures/golden.jsonl")
             if any(ch.isdigit() for ch in c.query) and search(c.query).identifiers]
    assert len(cases) >= 6
    for case in cases:
        top = search(case.query).results[0]
        assert top.doc in case.hits, case.id
        assert top.matched_by_identifier, case.id


def test_identifiers_are_stored_normalized(sample_kb):
    assert Chunk.objects.filter(identifiers__contains=["401234567"]).exists()  # RIF J-40123456-7
