"""A KB editor closes the loop in Chromium: from the worst demo retrieval failure to a fixed section.

The data is what `make demo` leaves: the whole sample knowledge base, the demo WhatsApp conversations run
through the signed webhook and the bot turn, and a review session in which the downgrade question — answered
from the annual-plan refund policy while proration-en ranked fifth — is coded as a retrieval failure, with
its golden case in the set "demo". The editor goes taxonomy → trace → Open in KB → the proration section's
edit page, types the customer's words, watches the live chunk preview, saves, re-runs the affected golden
cases and sees the demo case at rank 1 with no case worse.

Edits stay in this test: it imports the sample KB into its own (transactional, flushed afterwards)
database, and reverts the document on the way out, so no other test sees the edited section.
"""

import pytest
from django.conf import settings

from tests.browser.conftest import BROWSER_MARKS, SCREENSHOTS, log_in

pytestmark = BROWSER_MARKS

QUERY = "if i downgrade mid month do i get money back for the days left"
FIX = ("Downgrading mid-month gives no money back for the days left: you keep the current plan until the "
       "end of the cycle and the lower price starts on the next invoice.")
SECTION = "Rules that surprise customers"


@pytest.fixture
def sample_kb_of_this_test():
    """Import the whole sample KB (skipped when unchanged); put proration-en back as it was afterwards."""
    from kb.editing import document_revert
    from kb.embeddings import get_embedder
    from kb.models import Document
    from kb.services import documents_import

    documents_import(paths=[settings.KB_SAMPLE_DIR], embedder=get_embedder())
    original = Document.objects.get(slug="proration-en").version
    yield
    document = Document.objects.get(slug="proration-en")
    if document.version != original:  # vectors of the old text are reused: nothing is embedded again
        document_revert(document=document, number=original, embedder=get_embedder())


def _demo(settings):
    """Run the demo's conversations and review seed exactly as `make demo` does."""
    import io

    from django.core.management import call_command

    from demo.management.commands.demo_conversations import REVIEW_SESSION
    from traces.models import ReviewNote, ReviewSession

    settings.WHATSAPP_APP_SECRET = "demo-app-secret"
    settings.OPENAI_API_KEY = settings.OPENAI_BASE_URL = ""  # the template writer: no model server needed
    call_command("demo_conversations", stdout=io.StringIO())
    session = ReviewSession.objects.get(name=REVIEW_SESSION)
    return session, ReviewNote.objects.get(session=session, verdict="fail", stage="retrieval")


def test_an_editor_takes_the_worst_retrieval_failure_to_a_fixed_section_and_its_case_moves_to_rank_1(
        live_server, browser_page, sample_kb_of_this_test, healthy_billing, make_staff, settings):
    from playwright.sync_api import expect

    from evals.models import GoldenCase
    from kb.models import Chunk, Document

    session, note = _demo(settings)
    before_version = Document.objects.get(slug="proration-en").version
    trace = note.trace
    case = GoldenCase.objects.get(golden_set__name="demo", trace=trace)
    assert [row["doc"] for row in trace.retrieval if row.get("kept")][0] != "proration-en"
    make_staff("kim", "kb_editor", "analyst", password="kim-password-1")
    page = browser_page

    log_in(page, live_server.url, "kim", "kim-password-1", f"/traces/sessions/{session.pk}/taxonomy/")

    # Taxonomy → the failing trace → Open in KB.
    notes = page.locator("form[aria-label='Assign'] tbody tr", has_text="Right document not retrieved")
    expect(notes).to_have_count(1)
    notes.locator(f"a[href='/traces/{trace.pk}/']").click()
    page.wait_for_url(f"{live_server.url}/traces/{trace.pk}/")
    page.locator("a.open-in-kb-link").first.click()
    page.wait_for_url(f"{live_server.url}/kb/open/trace/{trace.pk}/")
    expected = page.locator("#expected")
    expect(expected).to_contain_text(f"demo/{case.case_id}")
    expect(page.locator("#best-now")).not_to_have_text("1")
    page.screenshot(path=str(SCREENSHOTS / "kb-open-in-kb.png"), full_page=True)

    # The proration section the customer's question needed → its edit page.
    expected.locator("tr", has_text=SECTION).get_by_role("link", name="Edit section").click()
    page.wait_for_url(f"{live_server.url}/kb/documents/proration-en/sections/*/edit/")
    expect(page.locator("h1")).to_contain_text(SECTION)

    # Type the customer's words; the live preview shows the changed chunk as the retriever will score it.
    text = page.locator("textarea#text")
    text.click()
    text.press("Control+End")
    page.keyboard.type("\n\n" + FIX)
    changed = page.locator("#preview .preview-section", has=page.locator(".status-changed"))
    expect(changed).to_have_count(1)
    expect(changed.locator("pre.chunk-text")).to_contain_text("money back for the days left")
    expect(changed.locator("pre.chunk-text").first).to_contain_text("Proration When You Change Plans")
    changed.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "kb-section-edit.png"), full_page=True)

    # Save → a new version, the changed section re-embedded (eager Celery), the re-run button on the page.
    page.locator("button[name=action][value=save]").click()
    page.wait_for_url(f"{live_server.url}/kb/documents/proration-en/")
    expect(page.locator(".messages")).to_contain_text(f"Saved version {before_version + 1}")
    document = Document.objects.get(slug="proration-en")
    assert document.version == before_version + 1
    fixed = Chunk.objects.live().get(document=document, text__contains="money back for the days left")
    assert fixed.embedding is not None

    page.get_by_role("button", name="Re-run affected cases").click()
    page.wait_for_url(f"{live_server.url}/kb/documents/proration-en/affected/")
    summary = page.locator("#affected-summary")
    expect(summary).to_contain_text("0 worse")
    row = page.locator(f"tr[data-case='{case.case_id}']")
    expect(row.locator(".rank-after")).to_have_text("1")
    expect(row).to_have_class("move-better")
    assert int(row.locator(".rank-before").inner_text()) > 1
    expect(page.locator("tr.move-worse")).to_have_count(0)
    assert page.locator("table.affected-moves tbody tr").count() >= 3  # g027, g028 and the trace's case
    page.screenshot(path=str(SCREENSHOTS / "kb-affected-cases.png"), full_page=True)

    # The trace page's "Open in KB" now finds the expected chunk at rank 1 for this query.
    page.goto(f"{live_server.url}/kb/open/trace/{trace.pk}/")
    expect(page.locator("#best-now")).to_have_text("1")
