"""The KB editor sees and edits whom a document applies to: the list, the document page, the editor, the playground."""

import re

import pytest
from django.urls import reverse

from kb.applicability import Audience
from kb.models import Document
from tests.support.kb_docs import PLANS

pytestmark = pytest.mark.django_db

BUSINESS = PLANS.replace("language: en\n", "language: en\nsegment: business\n").replace(
    "## Fibre 600\n", "## Fibre 600 {plans=E1000}\n")


@pytest.fixture
def editor(client, make_staff):
    client.force_login(make_staff("eva", "kb_editor"))
    return client


def page(response) -> str:
    return response.content.decode()


def test_an_editor_sets_whom_a_document_applies_to_and_every_page_shows_it(editor, kb):
    edit = reverse("kb:document_edit", args=["t-plans"])
    preview = page(editor.post(reverse("kb:document_preview", args=["t-plans"]), {"source": BUSINESS},
                               HTTP_HX_REQUEST="true"))
    assert 'applies to <span class="audience">Business customers</span>' in preview
    assert '<span class="badge audience">Business customers, Empresarial 1000</span>' in preview  # the narrowed ###

    saved = editor.post(edit, {"source": BUSINESS, "base_version": "1", "action": "save"})
    assert saved.status_code == 302
    document = Document.objects.get(slug="t-plans")
    assert (document.audience, document.version) == (Audience(segment="business"), 2)
    assert {s.heading_path: s.audience.plans for s in document.sections.live()}["Fibre 600"] == ("E1000",)

    detail = page(editor.get(reverse("kb:document", args=["t-plans"])))
    assert "Applies to: <strong>Business customers</strong>" in detail
    assert "Fibre 600 <span class=\"badge audience\">Business customers, Empresarial 1000</span>" in detail
    source = re.search(r'<textarea[^>]*name="source"[^>]*>(.*?)</textarea>', page(editor.get(edit)), re.S).group(1)
    assert "segment: business" in source and "## Fibre 600 {plans=E1000}" in source  # the editor round-trips it
    listing = page(editor.get(reverse("kb:documents")))
    row = re.search(r'<tr[^>]*data-doc="t-plans".*?</tr>', listing, re.S).group(0)
    assert '<td data-label="Applies to" class="audience">Business customers</td>' in row
    other = re.search(r'<tr[^>]*data-doc="t-refund-trial".*?</tr>', listing, re.S).group(0)
    assert '<td data-label="Applies to" class="audience">Everyone</td>' in other


def test_a_bad_audience_in_the_editor_is_refused_naming_the_line_and_keeps_the_text(editor, kb):
    bad = BUSINESS.replace("segment: business", "segment: empresas")
    response = editor.post(reverse("kb:document_edit", args=["t-plans"]),
                           {"source": bad, "base_version": "1", "action": "save"})
    assert response.status_code == 400
    assert "Not saved: line 5: segment must be one of home, business (got &#x27;empresas&#x27;)" in page(response)
    assert "segment: empresas" in page(response)  # the editor's text stays
    assert Document.objects.get(slug="t-plans").version == 1


def test_the_playground_says_whom_each_result_applies_to_and_which_prune_rule_ran(editor, kb):
    editor.post(reverse("kb:document_edit", args=["t-plans"]), {"source": BUSINESS, "base_version": "1",
                                                                "action": "save"})
    results = page(editor.get(reverse("kb:search"), {"q": "fibre 300 price"}))
    assert '<span class="badge audience">Business customers</span>' in results
    assert 'class="prune-rule">Prune margin' in results
