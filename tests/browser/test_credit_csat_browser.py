"""In Chromium: the credit note the bot drafted from a verified duplicate charge, approved by a supervisor, with the
agent notified in the header and offered the words for the customer; then a resolved conversation's satisfaction
answer on the dashboard beside the dial. Every page at 390 px and 1,440 px without sideways scroll."""

import json
import uuid

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import BROWSER_MARKS, SCREENSHOTS, assert_no_sideways_scroll, log_in

pytestmark = BROWSER_MARKS
WIDTHS = (390, 1440)


def at_each_width(page):
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert_no_sideways_scroll(page)


@pytest.fixture
def bot_drafted(small_kb, healthy_billing):
    """A customer charged twice asks the bot why their bill went up; the bot's turn files the credit note."""
    from bot.turn import run_turn
    from bot.writer import TemplateWriter
    from core import clock
    from desk.models import CreditNoteRequest, Message
    from tests.support.billing_sim import AS_OF, client_for, simulator_for
    from tests.support.factories import conversation_start

    simulator = simulator_for(flipped=False)
    customer_id = simulator.data.scenarios["duplicate_charge"][5]
    conversation = conversation_start(name="Cliente cobrado doble", customer_id=customer_id, inbound_at=None)
    message = Message.objects.create(conversation=conversation, direction="in", author="customer", kind="text",
                                     text="¿Por qué mi factura llegó más alta este mes?",
                                     provider_message_id=f"wamid.{uuid.uuid4().hex}")
    with clock.pinned(AS_OF), client_for(simulator, AS_OF) as billing:
        trace = run_turn(message_id=message.pk, writer=TemplateWriter(), billing=billing)
    assert "Registré la solicitud de corrección por 162,40 USD" in trace.final_text
    return conversation, CreditNoteRequest.objects.get(conversation=conversation)


def test_the_bot_drafted_credit_note_is_approved_and_the_agent_told(live_server, browser_page, bot_drafted,
                                                                   make_staff):
    conversation, proposal = bot_drafted
    make_staff("ana", "agent", password="pw-ana-12345")
    make_staff("sol", "supervisor", password="pw-sol-12345")
    page = browser_page

    log_in(page, live_server.url, "sol", "pw-sol-12345", "/desk/credit-notes/")
    row = page.locator(f"#credit-note-{proposal.pk}")
    expect(row).to_contain_text("The bot")
    expect(row).to_contain_text("162.40")
    expect(row).to_contain_text("Charged twice")
    at_each_width(page)
    page.set_viewport_size({"width": 1440, "height": 900})
    row.get_by_role("button", name="Approve and send").click()
    expect(page.locator("#credit-lists")).not_to_contain_text("Pending approval")
    page.get_by_role("button", name="Log out").click()

    log_in(page, live_server.url, "ana", "pw-ana-12345", "/desk/")
    notifications = page.locator("#notifications")
    expect(notifications).to_contain_text("Notifications")
    notifications.locator("summary").click()
    expect(notifications).to_contain_text("Supervisor sol approved the bot's credit note for USD 162,40")
    at_each_width(page)
    page.set_viewport_size({"width": 1440, "height": 900})
    notifications.get_by_role("link").first.click()
    page.wait_for_url(f"**/desk/conversations/{conversation.pk}/**")
    expect(page.locator("#thread")).to_contain_text("Supervisor sol approved the bot's credit note for USD 162,40")
    tell = page.locator(f"#tell-{proposal.pk}")
    expect(tell).to_contain_text("Un supervisor aprobó la corrección de USD 162,40")
    expect(tell).to_contain_text("Take the conversation over to send it.")
    page.get_by_role("button", name="Take over").first.click()
    page.locator("#composer-text").wait_for()
    page.locator(f"#tell-{proposal.pk}").get_by_role("link", name="Put it in the reply").click()
    expect(page.locator("#composer-text")).to_have_value(
        f"Un supervisor aprobó la corrección de USD 162,40 en tu factura {proposal.invoice_id}; la verás reflejada "
        "en tu cuenta.")
    at_each_width(page)
    page.screenshot(path=str(SCREENSHOTS / "desk-bot-credit-note-told.png"), full_page=True)
    # dismissed, the notification leaves the header
    page.locator("#notifications summary").click()
    page.locator("#notifications").get_by_role("button", name="Dismiss").first.click()
    expect(page.locator("#notifications")).to_have_count(0)


def test_a_satisfaction_answer_shows_on_the_dashboard(live_server, browser_page, make_staff, settings,
                                                     django_capture_on_commit_callbacks):
    import httpx

    from core import clock
    from desk import services
    from desk.models import Channel, Satisfaction
    from tests.support.factories import CUSTOMER, SECRET, conversation_start, customer_says, sign
    from tests.support.fake_graph import button_reply, change_value, webhook_body

    settings.WHATSAPP_APP_SECRET = SECRET
    ana = make_staff("ana", "agent", password="pw-ana-12345")
    make_staff("sol", "supervisor", password="pw-sol-12345")
    conversation = conversation_start(name="Cliente WhatsApp", channel=Channel.WHATSAPP, wa_id=CUSTOMER)
    customer_says(conversation, "quiero hablar con una persona")
    services.conversation_take_over(conversation_id=conversation.pk, agent=ana)
    services.agent_reply_send(conversation_id=conversation.pk, agent=ana, text="Hola, soy Ana.")
    customer_says(conversation, "listo, gracias")
    services.conversation_resolve(conversation_id=conversation.pk, agent=ana)
    satisfaction = Satisfaction.objects.get(conversation=conversation)

    tap = button_reply(f"csat:{satisfaction.pk}:good", "Bien", wa_id=CUSTOMER,
                       timestamp=int(clock.now().timestamp()))
    raw = json.dumps(webhook_body(change_value(messages=[tap]))).encode()
    response = httpx.post(f"{live_server.url}/webhooks/whatsapp/", content=raw,
                          headers={"Content-Type": "application/json", "X-Hub-Signature-256": sign(raw)})
    assert response.status_code == 200

    page = browser_page
    log_in(page, live_server.url, "sol", "pw-sol-12345", "/dashboard/")
    card = page.locator("#satisfaction")
    expect(card).to_contain_text("Customer satisfaction")
    expect(card).to_contain_text("Good 100% (1 of 1)")
    expect(card.locator("td[data-label=Agent]", has_text="ana")).to_have_count(1)
    at_each_width(page)
    page.screenshot(path=str(SCREENSHOTS / "dashboard-satisfaction.png"), full_page=True)
    page.goto(f"{live_server.url}/desk/conversations/{conversation.pk}/")
    expect(page.locator("#thread")).to_contain_text("Customer rated the help: Good")
    at_each_width(page)
