"""The KB editor's pages (kb/views/editing.py) over HTTP, on small documents of their own."""

import re
import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from kb.embeddings import get_embedder
from kb.models import Chunk, Document, EmbeddingSpace, ReembedJob
from kb.search import search
from tests.support.kb_docs import PLANS, REFUND, TRIAL

pytestmark = pytest.mark.django_db




@pytest.fixture
def editor(client, make_staff):
    client.force_login(make_staff("eva", "kb_editor"))
    return client


def text(response):
    return response.content.decode()


def textarea(page, name):
    match = re.search(rf'<textarea[^>]*name="{name}"[^>]*>(.*?)</textarea>', page, re.S)
    return match and match.group(1)


def edit_url(slug="t-plans"):
    return reverse("kb:document_edit", args=[slug])


def section_of(heading, slug="t-plans"):
    return Document.objects.get(slug=slug).sections.live().get(heading_path=heading)


EDITOR_PAGES = [
    ("get", "kb:document_edit", ["t-plans"]),
    ("post", "kb:document_preview", ["t-plans"]),
    ("get", "kb:document_history", ["t-plans"]),
    ("post", "kb:document_revert", ["t-plans", 1]),
    ("get", "kb:document_upload", []),
    ("post", "kb:document_upload", []),
    ("get", "kb:document_delete", ["t-plans"]),
    ("post", "kb:document_delete", ["t-plans"]),
    ("post", "kb:document_restore", ["t-plans"]),
    ("get", "kb:reembed_progress", ["t-plans"]),
]


@pytest.mark.parametrize("role", ["agent", "analyst"])
@pytest.mark.parametrize("method, url_name, args", EDITOR_PAGES)
def test_only_kb_editors_may_edit(client, make_staff, kb, role, method, url_name, args):
    client.force_login(make_staff(f"u-{role}", role))
    response = getattr(client, method)(reverse(url_name, args=args), {"source": "x"})
    assert response.status_code == 403
    section = section_of("Fibre 300")
    assert client.post(reverse("kb:section_edit", args=["t-plans", section.pk]),
                       {"text": "x", "base_hash": section.content_hash}).status_code == 403
    assert Document.objects.get(slug="t-plans").version == 1


def test_the_edit_page_previews_live_and_without_js(editor, kb):
    page = text(editor.get(edit_url()))
    assert textarea(page, "source").strip().startswith("---\nslug: t-plans")
    assert 'name="base_version" value="1"' in page
    assert 'hx-trigger="input changed delay:400ms"' in page and reverse("kb:document_preview", args=["t-plans"]) in page
    changed = PLANS.replace("USD 25.00", "USD 26.00").replace("## Installation", "## Set-up")
    partial = text(editor.post(reverse("kb:document_preview", args=["t-plans"]), {"source": changed},
                               HTTP_HX_REQUEST="true"))
    assert "<h1>" not in partial and "<textarea" not in partial
    assert "Fibre plans\nFibre 300\n\nFibre 300 costs USD 26.00 a month and includes a router." in partial
    assert re.search(r"Fibre 300 <span class=\"badge status-changed\">changed", partial)
    assert re.search(r"Fibre 600 <span class=\"badge status-unchanged\">unchanged", partial)
    assert re.search(r"Set-up <span class=\"badge status-new\">new", partial)
    assert "removed</span> Installation" in partial and " tokens</p>" in partial
    broken = text(editor.post(reverse("kb:document_preview", args=["t-plans"]),
                              {"source": changed.replace("language: en", "language: xx")}))
    assert "preview-error" in broken
    # The Preview button (no JS) renders the whole page with the preview and the text kept; nothing is saved.
    page = text(editor.post(edit_url(), {"source": changed, "base_version": "1", "action": "preview"}))
    assert "<h1>Edit Fibre plans</h1>" in page and "status-changed" in page and "USD 26.00" in textarea(page, "source")
    assert Document.objects.get(slug="t-plans").version == 1


def test_a_save_makes_a_version_and_the_document_page_shows_the_reembedding(editor, kb,
                                                                             django_capture_on_commit_callbacks):
    index_before = EmbeddingSpace.objects.get().index_version
    with django_capture_on_commit_callbacks(execute=True):
        response = editor.post(edit_url(), {"source": PLANS.replace("a mesh kit", "a mesh kit of two nodes")
                                            .replace("\n", "\r\n"), "base_version": "1", "action": "save",
                                            "note": "mesh size"})
    assert response.status_code == 302 and response["Location"] == reverse("kb:document", args=["t-plans"])
    page = text(editor.get(response["Location"]))
    assert f"Saved version 2 · index version {index_before + 1} · 1 chunks re-embedding" in page
    assert "mesh kit of two nodes" in page and "includes a mesh kit.</pre>" not in page  # only live sections
    assert "Done</strong> · 1 / 1 chunks" in page and 'hx-trigger="every 1s"' not in page
    version = Document.objects.get(slug="t-plans").versions.get(number=2)
    assert (version.note, version.author.username, version.changed_sections) == ("mesh size", "eva", ["Fibre 600"])
    for name in ("kb:document_edit", "kb:document_history", "kb:document_delete"):
        assert reverse(name, args=["t-plans"]) in page
    assert reverse("kb:section_edit", args=["t-plans", section_of("Fibre 600").pk]) in page


def test_the_second_editor_is_refused_with_409_and_keeps_their_text(editor, kb, make_staff):
    from django.test import Client

    other = Client()
    other.force_login(make_staff("olga", "kb_editor"))
    assert other.post(edit_url(), {"source": PLANS.replace("a router", "a wifi 6 router"), "base_version": "1",
                                   "action": "save"}).status_code == 302
    mine = PLANS.replace("USD 20.00 otherwise", "USD 15.00 otherwise")
    response = editor.post(edit_url(), {"source": mine, "base_version": "1", "action": "save"})
    assert response.status_code == 409
    page = text(response)
    assert "Not saved" in page and textarea(page, "source") == mine
    assert '<span class="diff-add">+Fibre 300 costs USD 25.00 a month and includes a wifi 6 router.</span>' in page
    assert 'name="base_version" value="2"' in page
    # A deliberate re-save on the updated base goes through.
    resave = mine.replace("a router", "a wifi 6 router")
    assert editor.post(edit_url(), {"source": resave, "base_version": "2", "action": "save"}).status_code == 302
    assert Document.objects.get(slug="t-plans").source == resave


def test_a_double_clicked_save_makes_one_version(editor, kb):
    form = {"source": PLANS.replace("USD 25.00", "USD 24.00"), "base_version": "1", "action": "save"}
    assert editor.post(edit_url(), form).status_code == 302
    assert editor.post(edit_url(), form).status_code == 302
    assert Document.objects.get(slug="t-plans").version == 2


def test_section_edit_save_and_conflict(editor, kb, make_staff):
    from django.test import Client

    section = section_of("Fibre 600")
    url = reverse("kb:section_edit", args=["t-plans", section.pk])
    page = text(editor.get(url))
    assert textarea(page, "text") == section.text and f'value="{section.content_hash}"' in page
    preview = text(editor.post(reverse("kb:section_preview", args=["t-plans", section.pk]),
                               {"text": "Fibre 600 costs USD 36.00."}, HTTP_HX_REQUEST="true"))
    assert "Fibre plans\nFibre 600\n\nFibre 600 costs USD 36.00." in preview and "status-changed" in preview
    other = Client()
    other.force_login(make_staff("olga", "kb_editor"))
    assert other.post(url, {"text": "Fibre 600 costs USD 39.00 a month.", "base_hash": section.content_hash,
                            "base_text": section.text, "action": "save"}).status_code == 302
    mine = "Fibre 600 costs USD 35.00 a month and includes two mesh nodes."
    response = editor.post(url, {"text": mine, "base_hash": section.content_hash, "base_text": section.text,
                                 "action": "save"})
    assert response.status_code == 409
    page = text(response)
    current = section_of("Fibre 600")
    assert textarea(page, "text") == mine and '+Fibre 600 costs USD 39.00 a month.' in page
    assert f'value="{current.content_hash}"' in page
    new_url = reverse("kb:section_edit", args=["t-plans", current.pk])
    assert f'action="{new_url}"' in page
    assert editor.post(new_url, {"text": mine, "base_hash": current.content_hash, "action": "save"}).status_code == 302
    assert section_of("Fibre 600").text == mine
    # An old link to the retired section leads to the live one.
    assert editor.get(url)["Location"] == reverse("kb:section_edit", args=["t-plans", section_of("Fibre 600").pk])


def test_history_diff_and_revert(editor, kb):
    editor.post(edit_url(), {"source": PLANS.replace("USD 25.00", "USD 27.00"), "base_version": "1",
                             "action": "save", "note": "price rise"})
    page = text(editor.get(reverse("kb:document_history", args=["t-plans"])))
    assert "price rise" in page and "Imported" in page and "Edited" in page and "Fibre 300" in page
    diff = text(editor.get(reverse("kb:document_history", args=["t-plans"]) + "?version=2", HTTP_HX_REQUEST="true"))
    assert "<h1>" not in diff and "Version 1 → 2" in diff
    assert '<span class="diff-del">-Fibre 300 costs USD 25.00' in diff
    assert '<span class="diff-add">+Fibre 300 costs USD 27.00' in diff
    compare = text(editor.get(reverse("kb:document_history", args=["t-plans"]) + "?a=2&b=1"))
    assert "Version 2 → 1" in compare and '<span class="diff-add">+Fibre 300 costs USD 25.00' in compare
    revert = reverse("kb:document_revert", args=["t-plans", 1])
    assert editor.post(revert).status_code == 302
    assert editor.post(revert).status_code == 302  # a double click
    document = Document.objects.get(slug="t-plans")
    assert document.version == 3 and document.source == PLANS
    assert "reverted to version 1" in text(editor.get(reverse("kb:document_history", args=["t-plans"])))


def test_upload_reports_created_updated_unchanged_and_refuses_an_invalid_file(editor, kb):
    new_doc = PLANS.replace("slug: t-plans", "slug: t-tv").replace("Fibre plans", "TV plans")
    files = [SimpleUploadedFile("tv.md", new_doc.encode()),
             SimpleUploadedFile("trial.md", TRIAL.replace("50%", "40%").encode()),
             SimpleUploadedFile("annual.md", REFUND.encode())]
    assert reverse("kb:document_upload") in text(editor.get(reverse("kb:documents")))
    page = text(editor.post(reverse("kb:document_upload"), {"files": files}))
    assert re.search(r"Created: <a[^>]*>t-tv</a>", page) and re.search(r"Updated: <a[^>]*>t-refund-trial</a>", page)
    assert "Unchanged: t-refund-annual" in page
    assert Document.objects.get(slug="t-refund-trial").version == 2
    count = Document.objects.count()
    bad = [SimpleUploadedFile("ok.md", new_doc.replace("t-tv", "t-tv2").encode()),
           SimpleUploadedFile("broken.md", b"---\nlanguage: xx\n---\n# T\n## A\ntext")]
    response = editor.post(reverse("kb:document_upload"), {"files": bad})
    assert response.status_code == 400 and "Nothing was imported" in text(response) and "broken.md" in text(response)
    assert Document.objects.count() == count


@pytest.mark.parametrize("raw, reason", [
    (PLANS.replace("slug: t-plans", "slug: t-nul").encode() + b"\x00", "contains a NUL character"),
    ("# Tarifas de reconexi\u00f3n\n".encode("latin-1"), "not UTF-8 text"),
])
def test_an_upload_with_nul_bytes_or_not_utf8_is_refused_naming_the_file(editor, kb, raw, reason):
    count = Document.objects.count()
    good = SimpleUploadedFile("good.md", PLANS.replace("slug: t-plans", "slug: t-good").encode())
    response = editor.post(reverse("kb:document_upload"), {"files": [good, SimpleUploadedFile("bad.md", raw)]})
    assert response.status_code == 400
    assert "bad.md" in text(response) and reason in text(response) and "Nothing was imported" in text(response)
    assert Document.objects.count() == count


def test_an_edit_with_a_nul_character_is_refused_and_keeps_the_text(editor, kb):
    source = textarea(text(editor.get(edit_url())), "source").replace("Fibre", "Fi\x00bre", 1)
    response = editor.post(edit_url(), {"source": source, "base_version": "1", "action": "save"})
    assert response.status_code == 400 and "contains a NUL character" in text(response)
    assert Document.objects.get(slug="t-plans").version == 1
    note = editor.post(edit_url(), {"source": source.replace("\x00", ""), "base_version": "1", "note": "a\x00b"})
    assert note.status_code == 400 and "The note contains a NUL character" in text(note)


def test_delete_warns_about_golden_cases_hides_the_document_and_restore_brings_it_back(editor, kb):
    from evals.models import GoldenCase, GoldenSet

    golden_set = GoldenSet.objects.create(name=f"set-{uuid.uuid4().hex[:8]}")
    GoldenCase.objects.create(golden_set=golden_set, case_id="refund-annual-1", query="annual refund?",
                              hits=["t-refund-annual"], must_pass=True)
    GoldenCase.objects.create(golden_set=golden_set, case_id="trial-1", query="trial?", hits=["t-refund-trial"])
    url = reverse("kb:document_delete", args=["t-refund-annual"])
    confirm = text(editor.get(url))
    warning = reverse("evals:document_golden_cases", args=["t-refund-annual"])
    assert f'hx-get="{warning}"' in confirm  # the warning is the evals room's panel, loaded beside the form
    confirm += text(editor.get(warning))
    assert "1 golden case expects this document as a hit" in confirm
    assert "refund-annual-1" in confirm and "trial-1" not in confirm
    query = "I cancelled my annual plan after ten days, do I get all my money back?"
    assert search(query, k=5).results[0].doc == "t-refund-annual"
    assert editor.post(url).status_code == 302
    assert editor.post(url).status_code == 302  # a double click does nothing more
    document = Document.objects.get(slug="t-refund-annual")
    assert list(document.versions.values_list("kind", flat=True)) == ["delete", "import"]
    assert "t-refund-annual" not in {hit.doc for hit in search(query, k=5).results}
    page = text(editor.get(reverse("kb:document", args=["t-refund-annual"])))
    assert "Deleted</strong>" in page and reverse("kb:document_restore", args=["t-refund-annual"]) in page
    assert "<h2>Cancelling within 14 days" not in page
    assert editor.get(edit_url("t-refund-annual")).status_code == 302  # no editing a deleted document
    restore = reverse("kb:document_restore", args=["t-refund-annual"])
    assert editor.post(restore).status_code == 302 and editor.post(restore).status_code == 302
    assert Document.objects.get(slug="t-refund-annual").versions.filter(kind="restore").count() == 1
    assert search(query, k=5).results[0].doc == "t-refund-annual"


def test_progress_polls_while_running_shows_a_failure_and_retry_requeues(editor, kb,
                                                                         django_capture_on_commit_callbacks):
    from kb.editing import document_save, reembed_job_run
    from tests.support.kb_docs import FailingEmbedder

    result = document_save(document=Document.objects.get(slug="t-plans"),
                           source=PLANS.replace("a router", "a new router"), base_version=1,
                           embedder=get_embedder())
    url = reverse("kb:reembed_progress", args=["t-plans"])
    queued = text(editor.get(url, HTTP_HX_REQUEST="true"))
    assert 'hx-trigger="every 1s"' in queued and "Queued" in queued and "0 / 1 chunks" in queued
    with pytest.raises(RuntimeError):
        reembed_job_run(job=result.job, embedder=FailingEmbedder())
    failed = text(editor.get(url, HTTP_HX_REQUEST="true"))
    assert 'hx-trigger="every 1s"' not in failed and "embedding server unreachable" in failed
    retry = reverse("kb:reembed_retry", args=[result.job.pk])
    assert retry in failed
    with django_capture_on_commit_callbacks(execute=True):
        assert editor.post(retry).status_code == 302
    assert ReembedJob.objects.get(pk=result.job.pk).status == "done"
    done = text(editor.get(url, HTTP_HX_REQUEST="true"))
    assert "Done" in done and "1 / 1 chunks" in done and 'hx-trigger="every 1s"' not in done


def test_a_retired_chunk_still_opens_after_an_edit(editor, kb):
    old = Chunk.objects.live().get(document__slug="t-plans", section__heading_path="Fibre 300")
    editor.post(edit_url(), {"source": PLANS.replace("USD 25.00", "USD 28.00"), "base_version": "1",
                             "action": "save"})
    response = editor.get(reverse("kb:chunk", args=[old.pk]))
    assert response.status_code == 200 and "USD 25.00" in text(response)


def test_an_editor_marks_alternatives_in_the_front_matter_and_the_pages_show_them(editor, kb):
    from kb.selectors import document_alternatives

    marked = PLANS.replace("language: en\n", "language: en\nalternatives: [t-other]\nalternative_label: fibre\n")
    partial = text(editor.post(reverse("kb:document_preview", args=["t-plans"]), {"source": marked},
                               HTTP_HX_REQUEST="true"))
    assert "alternative “fibre” of t-other" in partial
    response = editor.post(edit_url(), {"source": marked, "base_version": "1", "action": "save"})
    assert response.status_code == 302
    document = Document.objects.get(slug="t-plans")
    assert (document.alternatives, document.alternative_label, document.version) == (["t-other"], "fibre", 2)
    page = text(editor.get(reverse("kb:document", args=["t-plans"])))
    assert "Alternative “<strong>fibre</strong>” of" in page and reverse("kb:document", args=["t-other"]) in page
    assert "alternatives: [t-other]" in textarea(text(editor.get(edit_url())), "source")
    assert document_alternatives(slugs=["t-plans"]) == {
        "t-plans": {"label": "fibre", "language": "en", "alternatives": ["t-other"]}}
    # Only the label changes: the chunks stay, the document still takes a new version.
    relabelled = marked.replace("alternative_label: fibre", "alternative_label: fibre plans")
    editor.post(edit_url(), {"source": relabelled, "base_version": "2", "action": "save"})
    assert Document.objects.get(slug="t-plans").alternative_label == "fibre plans"


def test_the_sample_refund_documents_are_alternatives_of_one_another(sample_kb):
    from kb.selectors import document_alternatives

    found = document_alternatives(slugs=["reembolso-plan-anual-es"])
    assert found["reembolso-plan-anual-es"]["label"] == "plan anual"
    assert {slug: row["label"] for slug, row in found.items()} == {
        "reembolso-plan-anual-es": "plan anual", "reembolso-plan-prueba-es": "plan de prueba",
        "cancelacion-servicio-es": "plan mensual"}
    assert document_alternatives(slugs=["trial-refund-en", "reconexion-fibra-es"]).keys() == {
        "trial-refund-en", "annual-plan-refund-en"}
