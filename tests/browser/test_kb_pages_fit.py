"""The knowledge base's pages at a 390 px phone and a 1,440 px desktop: no sideways scroll, and a document's
history keeps "Revert" on screen."""

import pytest

from tests.browser.conftest import BROWSER_MARKS, SCREENSHOTS, assert_no_sideways_scroll, log_in

pytestmark = BROWSER_MARKS
LONG_QUERY = ("¿Por qué me cobraron la reconexión dos veces si ya había pagado la factura completa el día 3 "
              "del mes pasado con pago móvil?")


@pytest.fixture
def kb_pages(small_kb, make_staff):
    """An editor, the small KB with one document edited twice (a history to revert), and a trace to open."""
    from desk.models import Contact, Conversation
    from kb.editing import document_save, document_source
    from kb.embeddings import get_embedder
    from kb.models import Document
    from traces.models import Trace

    make_staff("kim", "kb_editor", password="pw-kim-12345")
    document = Document.objects.get(slug="reconexion-fibra-es")
    for note in ("Typo fixed in the fee table of the reconnection document, long note to wrap on a phone",
                 "Second edit"):
        source = document_source(document) + f"\n\n{note}.\n"
        document = document_save(document=document, source=source, base_version=document.version, note=note,
                                 embedder=get_embedder()).document
    contact = Contact.objects.create(channel="whatsapp", name="Ana Cliente", language="es")
    conversation = Conversation.objects.create(contact=contact, channel="whatsapp")
    trace = Trace.objects.create(
        conversation=conversation, channel="whatsapp", language="es", route="document", outcome="escalated",
        escalation_reason="NO_CONTEXT", query=LONG_QUERY,
        retrieval=[{"rank": 1, "chunk_id": document.sections.first().chunks.first().pk,
                    "doc": "reconexion-fibra-es-with-a-long-slug-for-the-table", "section": "Tarifas y plazos",
                    "vector_score": 0.81, "text_rank": 1, "rrf": 0.03, "kept": True, "prune_reason": "within margin"}])
    return {"document": document, "trace": trace}


@pytest.mark.parametrize("width", [390, 1440])
def test_every_kb_page_fits_without_sideways_scroll(live_server, browser_page, kb_pages, width):
    page = browser_page
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server.url, "kim", "pw-kim-12345", "/kb/")
    slug = kb_pages["document"].slug
    paths = ["/kb/", f"/kb/search/?q={LONG_QUERY}", f"/kb/open/trace/{kb_pages['trace'].pk}/",
             f"/kb/documents/{slug}/history/"]
    for path in paths:
        page.goto(f"{live_server.url}{path}")
        page.locator("main").wait_for()
        page.wait_for_load_state("networkidle")  # the usage panel of /kb/ arrives by htmx
        assert_no_sideways_scroll(page)
    revert = page.get_by_role("button", name="Revert to this version").first
    box = revert.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
    page.screenshot(path=str(SCREENSHOTS / f"kb-history-{width}.png"), full_page=True)
