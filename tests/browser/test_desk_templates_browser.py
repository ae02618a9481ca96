"""WhatsApp templates and attachments in Chromium, at 390 px and 1440 px without sideways scroll: a template sent
after the 24-hour window reaches the fake Graph API as Meta's template message, and a receipt photo the
customer sent shows as a thumbnail in the thread and on the inbox card."""

import io
import json
from datetime import timedelta

import pytest

from tests.browser.conftest import BROWSER_MARKS, SCREENSHOTS, assert_no_sideways_scroll, log_in

pytestmark = BROWSER_MARKS
WIDTHS = [390, 1440]


@pytest.fixture
def graph(settings, tmp_path):
    from tests.support.fake_graph import FakeGraph

    settings.STORAGES = {**settings.STORAGES, "desk_media": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path)}}}
    with FakeGraph() as fake:
        settings.WHATSAPP_API_BASE_URL = fake.base_url
        settings.WHATSAPP_ACCESS_TOKEN = fake.access_token
        settings.WHATSAPP_PHONE_NUMBER_ID = fake.phone_number_id
        yield fake


@pytest.mark.parametrize("width", WIDTHS)
def test_a_template_sent_after_the_window_reaches_whatsapp_as_a_template_message(
        live_server, browser_page, healthy_billing, make_staff, graph, width):
    from core import clock
    from desk import services
    from desk.models import Channel, Message, MessageTemplate
    from tests.support.factories import CUSTOMER, conversation_start

    MessageTemplate.objects.create(
        name="saldo_pendiente", language="es", category="utility", status="approved",
        body="Hola {{1}}, su factura de {{2}} está lista. Responda a este mensaje si tiene dudas.",
        variable_sources=["customer_name", "amount_due"], buttons=["Pagar ahora"])
    graph.templates = {("saldo_pendiente", "es"): 2}
    ana = make_staff("ana", "agent", password="pw-ana-12345")
    conversation = conversation_start(channel=Channel.WHATSAPP, wa_id=CUSTOMER, name="Marisol Rojas",
                                      customer_id="C-1001", inbound_at=clock.now() - timedelta(hours=30))
    services.conversation_take_over(conversation_id=conversation.pk, agent=ana)
    page = browser_page
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server.url, "ana", "pw-ana-12345", f"/desk/conversations/{conversation.pk}/")

    assert page.locator("#composer-text").count() == 0
    assert "more than 24 hours ago" in page.locator("#window-closed").inner_text()
    assert page.locator("#v1").input_value() == "Marisol Rojas"
    assert page.locator("#v2").input_value().startswith("USD")  # the account panel's invoice total
    page.fill("#v1", "Sra. Marisol")
    page.get_by_text("Hola Sra. Marisol, su factura de").wait_for()  # the preview follows the typing
    assert_no_sideways_scroll(page)
    page.screenshot(path=str(SCREENSHOTS / f"desk-template-composer-{width}.png"), full_page=True)
    page.get_by_role("button", name="Send template").click()
    page.get_by_text("Template queued for WhatsApp.").wait_for()
    page.locator(".template-tag").first.wait_for()

    message = Message.objects.get(conversation=conversation, author="agent")
    assert message.kind == "template" and message.status == "sent"
    (sent,) = [r["body"] for r in graph.requests if r["path"].endswith("/messages")]
    assert sent["type"] == "template" and sent["to"] == CUSTOMER
    assert sent["template"]["name"] == "saldo_pendiente" and sent["template"]["language"] == {"code": "es"}
    (body,) = sent["template"]["components"]
    assert body["type"] == "body" and [p["type"] for p in body["parameters"]] == ["text", "text"]
    assert body["parameters"][0]["text"] == "Sra. Marisol" and body["parameters"][1]["text"].startswith("USD")
    assert "delivery sent" in page.locator(f"#message-{message.pk} .delivery").get_attribute("class")
    assert_no_sideways_scroll(page)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_receipt_photo_shows_as_a_thumbnail_in_the_thread_and_on_the_inbox_card(
        live_server, browser_page, make_staff, graph, settings, client, width):
    from PIL import Image

    from desk.models import Attachment
    from tests.support.factories import SECRET, WEBHOOK_URL, sign
    from tests.support.fake_graph import change_value, inbound_message, webhook_body

    settings.WHATSAPP_APP_SECRET = SECRET
    photo = io.BytesIO()
    Image.new("RGB", (1200, 1600), (240, 240, 230)).save(photo, format="JPEG")
    graph.media["9001"] = (photo.getvalue(), "image/jpeg")
    raw = json.dumps(webhook_body(change_value(messages=[inbound_message(
        "image", wamid="wamid.RECEIPT", image={"id": "9001", "mime_type": "image/jpeg",
                                               "caption": "el recibo del pago"})]))).encode()
    response = client.post(WEBHOOK_URL, data=raw, content_type="application/json", HTTP_X_HUB_SIGNATURE_256=sign(raw))
    assert response.status_code == 200
    attachment = Attachment.objects.get(message__provider_message_id="wamid.RECEIPT")
    assert attachment.state == "stored"  # the download ran after the webhook's commit (Celery eager here)
    make_staff("ana", "agent", password="pw-ana-12345")
    page = browser_page
    page.set_viewport_size({"width": width, "height": 900})

    log_in(page, live_server.url, "ana", "pw-ana-12345", "/desk/")
    card_thumb = page.locator(f"#rows img[src='/desk/files/{attachment.pk}/thumbnail/']")
    card_thumb.wait_for()
    assert page.get_by_text("Customer sent a photo, voice note or file").first.is_visible()
    assert_no_sideways_scroll(page)

    page.goto(f"{live_server.url}/desk/conversations/{attachment.message.conversation_id}/")
    thumb = page.locator(f"#message-{attachment.message_id} img.thumb")
    thumb.wait_for()
    assert page.evaluate("img => img.complete && img.naturalWidth", thumb.element_handle()) == 240
    assert "el recibo del pago" in page.locator(f"#message-{attachment.message_id}").inner_text()
    full = page.locator(f"#message-{attachment.message_id} a.attachment-image").get_attribute("href")
    answer = page.request.get(f"{live_server.url}{full}")
    assert answer.status == 200 and answer.headers["content-type"] == "image/jpeg"
    assert answer.body() == graph.media["9001"][0]
    assert_no_sideways_scroll(page)
    page.screenshot(path=str(SCREENSHOTS / f"desk-receipt-thumbnail-{width}.png"), full_page=True)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_supervisor_adds_a_template_and_the_list_fits(live_server, browser_page, make_staff, width):
    from desk.models import MessageTemplate

    make_staff("sol", "supervisor", password="pw-sol-12345")
    page = browser_page
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server.url, "sol", "pw-sol-12345", "/desk/templates/")
    page.get_by_role("link", name="New template").click()
    page.fill("#id_name", "nota_credito_emitida")
    page.fill("#id_language", "es")
    page.select_option("#id_status", "approved")
    page.fill("#id_body", "Hola {{1}}, emitimos la nota de crédito {{2}} en su cuenta. Gracias.")
    page.fill("#id_buttons_text", "Gracias\nTengo otra duda")
    page.select_option("#id_source_1", "customer_name")
    page.select_option("#id_source_2", "credit_note")
    assert_no_sideways_scroll(page)
    page.get_by_role("button", name="Save").click()
    page.locator("#template-" + str(MessageTemplate.objects.get().pk)).wait_for()
    assert "Approved" in page.locator("table.templates").inner_text()
    assert MessageTemplate.objects.get().variable_sources == ["customer_name", "credit_note"]
    assert_no_sideways_scroll(page)
    page.screenshot(path=str(SCREENSHOTS / f"desk-templates-{width}.png"), full_page=True)
