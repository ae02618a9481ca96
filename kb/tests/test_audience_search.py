"""Whom a document applies to, through the import and the search: what a customer's profile keeps and leaves out."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from kb.applicability import Applicability, Audience
from kb.embeddings import get_embedder
from kb.models import Chunk, Document, EmbeddingSpace, Section
from kb.search import search
from kb.services import KnowledgeBaseError, documents_import
from tests.support.kb_docs import REFUND, TRIAL, CountingEmbedder

pytestmark = pytest.mark.django_db

FEES = """---
slug: t-fees
title: Collection fees
language: en
segment: home
---
# Collection fees

## Late fee
A late fee of 5% of the unpaid balance is charged after five days of grace.

## Business accounts {segment=business}
Business accounts pay a flat late fee of USD 3.00 after three days.
"""


@pytest.fixture
def kb_dir(tmp_path):
    # Start from an empty knowledge base (the session may hold the sample one; this rolls back).
    Document.objects.all().delete()
    EmbeddingSpace.objects.all().delete()
    (tmp_path / "refund-annual.md").write_text(REFUND.replace("---\n#", "plans: [fibra]\nterm: annual\n---\n#"),
                                               encoding="utf-8")
    (tmp_path / "refund-trial.md").write_text(TRIAL, encoding="utf-8")
    return tmp_path


def test_the_import_keeps_whom_a_document_and_its_sections_apply_to(kb_dir):
    documents_import(paths=[kb_dir], embedder=get_embedder())
    annual = Document.objects.get(slug="t-refund-annual")
    assert annual.audience == Audience(plans=("fibra",), term="annual")
    assert {s.audience for s in annual.sections.live()} == {annual.audience}
    assert "plans: [fibra]\nterm: annual" in annual.versions.get().source  # the version records it
    assert Document.objects.get(slug="t-refund-trial").audience == Audience()  # nothing said: everyone


def test_a_section_narrower_than_its_document_is_what_search_sees(kb_dir):
    (kb_dir / "fees.md").write_text(FEES.replace("segment: home\n", ""), encoding="utf-8")
    documents_import(paths=[kb_dir], embedder=get_embedder())
    sections = dict(Section.objects.live().filter(document__slug="t-fees").values_list("heading_path", "segment"))
    assert sections == {"Late fee": "", "Business accounts": "business"}
    hits = {h.section: h for h in search("late fee for my account", k=5).results if h.doc == "t-fees"}
    assert (hits["Business accounts"].segment, hits["Late fee"].segment) == ("business", "")
    assert hits["Business accounts"].as_dict()["plans"] == [] and "term" in hits["Late fee"].as_dict()


def test_changing_only_whom_a_document_applies_to_is_a_new_version_that_embeds_nothing(kb_dir):
    documents_import(paths=[kb_dir], embedder=get_embedder())
    (kb_dir / "refund-trial.md").write_text(TRIAL.replace("---\n#", "segment: home\n---\n#"), encoding="utf-8")
    embedder = CountingEmbedder()
    report = documents_import(paths=[kb_dir], embedder=embedder)
    assert report.updated == ["t-refund-trial"] and embedder.embedded == []  # same chunk texts: vectors reused
    trial = Document.objects.get(slug="t-refund-trial")
    assert trial.version == 2 and trial.audience == Audience(segment="home")
    live = Chunk.objects.live().get(document=trial)
    assert live.section.segment == "home" and live.embedding is not None


@pytest.mark.parametrize("name, raw, message", [
    ("zz-fees.md", FEES.replace("segment: home", "segment: hogar"),
     "zz-fees.md: line 5: segment must be one of home, business (got 'hogar')"),
    ("zz-fees.md", FEES, "zz-fees.md: line 12: segment business contradicts the document's (home)"),
    ("zz-fees.html", '<html lang="en"><head>\n<meta name="plans" content="Fiber 300"></head><body><h1>T</h1>'
                     '<h2>A</h2><p>x</p></body></html>', "zz-fees.html: line 2: plan 'Fiber 300' is neither"),
])
def test_a_bad_audience_is_refused_naming_the_file_and_line_and_nothing_is_written(kb_dir, name, raw, message):
    (kb_dir / name).write_text(raw, encoding="utf-8")
    with pytest.raises(KnowledgeBaseError) as refused:
        documents_import(paths=[kb_dir], embedder=get_embedder())
    assert message in str(refused.value)
    assert not Document.objects.exists()
    with pytest.raises(CommandError, match=name):
        call_command("kb_import", str(kb_dir), "--no-progress", stdout=io.StringIO())


def test_an_html_page_keeps_its_audience_from_meta_tags(kb_dir):
    (kb_dir / "fees.html").write_text(
        '<html lang="en"><head><meta name="slug" content="t-html-fees"><meta name="segment" content="business">'
        '</head><body><h1>Business fees</h1><h2>Late fee</h2><p>USD 3.00 after three days.</p>'
        '<h2 data-plans="E500">Empresarial 500</h2><p>The same.</p></body></html>', encoding="utf-8")
    documents_import(paths=[kb_dir], embedder=get_embedder())
    page = Document.objects.get(slug="t-html-fees")
    assert page.audience == Audience(segment="business")
    assert "segment: business" in page.source and "## Empresarial 500 {segment=business plans=E500}" in page.source
    assert sorted(s.audience.plans for s in page.sections.live()) == [(), ("E500",)]


# --- the sample knowledge base --------------------------------------------------------------------------------

LATE_FEE = "¿cuánto es el recargo por mora?"


def test_a_home_customer_gets_the_home_late_fee_and_not_the_business_one(sample_kb):
    result = search(LATE_FEE, k=5, applies_to=Applicability(segment="home"))
    kept = [hit.doc for hit in result.results]
    assert kept[0] == "recargo-mora-hogar-es" and "recargo-mora-empresarial-es" not in kept
    left_out = [hit for hit in result.pruned if hit.doc == "recargo-mora-empresarial-es"]
    assert left_out and left_out[0].prune_reason == "for business customers" and left_out[0].segment == "business"
    assert all(hit.segment in ("", "home") for hit in result.results)
    assert len(result.results) >= 2 and result.context.has_context


def test_a_business_plan_customer_gets_the_business_reconnection_fee(sample_kb):
    result = search("¿cuánto cuesta la reconexión?", k=5, applies_to=Applicability(plan="E500"))
    kept = {hit.doc for hit in result.results}
    assert "reconexion-empresarial-es" in kept and "reconexion-fibra-es" not in kept
    assert {h.prune_reason for h in result.pruned if h.doc == "reconexion-fibra-es"} == {"for home customers"}


def test_an_unknown_customer_keeps_both_policies_each_saying_whom_it_applies_to(sample_kb):
    result = search(LATE_FEE, k=5)
    segments = {hit.doc: hit.segment for hit in result.results}
    assert segments.get("recargo-mora-hogar-es") == "home"
    assert segments.get("recargo-mora-empresarial-es") == "business"
    assert search(LATE_FEE, k=5, applies_to=Applicability()).results == result.results  # nothing known: the same


def test_kb_search_takes_the_customer_and_its_json_says_whom_each_result_applies_to(sample_kb):
    def run(*args):
        out = io.StringIO()
        call_command("kb_search", LATE_FEE, "--json", *args, stdout=out)
        return json.loads(out.getvalue())

    anyone, home = run(), run("--segment", "home")
    assert anyone["applies_to"] is None and home["applies_to"] == {"segment": "home", "plan": "", "term": ""}
    assert {r["doc"] for r in anyone["results"]} >= {"recargo-mora-hogar-es", "recargo-mora-empresarial-es"}
    assert "recargo-mora-empresarial-es" not in {r["doc"] for r in home["results"]}
    assert {(r["segment"], tuple(r["plans"]), r["term"]) for r in home["results"]} <= {("home", (), ""), ("", (), "")}
    for_plan = run("--plan", "f100")
    assert for_plan["applies_to"]["plan"] == "F100"
    with pytest.raises(CommandError, match="--plan must be one of"):
        run("--plan", "Fibra 100")
