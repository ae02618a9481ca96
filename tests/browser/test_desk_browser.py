"""An agent works the desk in Debian's Chromium, driven by Playwright, against the live server.

The customer side runs server-side through the web chat's real entry point
(`desk.chat.chat_message_receive` → Celery task, eager here → the bot turn), so what the agent
sees in the browser is what the pipeline wrote to the database.
"""

from datetime import timedelta

from core import clock
from tests.browser.conftest import BROWSER_MARKS, SCREENSHOTS, WAIT_MS, log_in

POLL_WAIT_MS = WAIT_MS

pytestmark = BROWSER_MARKS

def _customer(name, customer_id, language="es"):
    from desk.models import Channel, Contact, Conversation

    contact = Contact.objects.create(channel=Channel.WEBCHAT, name=name, customer_id=customer_id,
                                     language=language)
    return Conversation.objects.create(contact=contact, channel=Channel.WEBCHAT)


def _earlier_escalations():
    """Two customers already waiting, so the queue has more than one reason and colour."""
    from desk.models import Escalation
    from desk.services import conversation_escalate
    from tests.support.factories import customer_says

    for name, reason, summary, text, minutes in [
        ("Pedro Salas", "TOOL_ERROR", "Could not query the billing system (possible outage).",
         "¿cuánto debo?", 22),
        ("Lucía Mendoza", "USER_REQUEST", "The customer asked to speak to a person.",
         "necesito hablar con alguien de facturación", 7),
    ]:
        conversation = _customer(name, "")
        customer_says(conversation, text)
        escalation = conversation_escalate(conversation_id=conversation.pk, reason=reason, summary=summary,
                                           detail=f"Customer wrote: “{text}”")
        waiting_since = clock.now() - timedelta(minutes=minutes)
        Escalation.objects.filter(pk=escalation.pk).update(created_at=waiting_since)


def test_an_agent_takes_over_replies_and_hands_back_without_the_bot_talking_over_them(
        live_server, browser_page, small_kb, healthy_billing, make_staff, settings):
    from django.core.management import call_command
    from playwright.sync_api import expect

    from desk.chat import chat_message_receive
    from desk.models import Escalation, Event, Message
    from traces.models import Trace

    settings.OPENAI_API_KEY = settings.OPENAI_BASE_URL = ""  # the template writer: no model server needed
    make_staff("ana", "agent", password="ana-password-1")
    call_command("canned_replies_seed")
    _earlier_escalations()
    page = browser_page

    log_in(page, live_server.url, "ana", "ana-password-1", "/desk/")
    assert page.locator("tr.escalation").count() == 2
    page.evaluate("window.stillTheSamePage = true")

    # A web-chat customer gets an answer, then asks a billing question the knowledge base cannot answer.
    conversation = _customer("Marisol Rojas", "C-1001")
    chat_message_receive(conversation=conversation, text="cuanto cobran por reconexion de fibra")
    first_answer = Message.objects.get(conversation=conversation, author="bot")
    chat_message_receive(conversation=conversation, text="¿me pueden cobrar la factura en criptomonedas como bitcoin?")
    escalation = Escalation.objects.get(conversation=conversation)
    assert escalation.reason == "NO_CONTEXT"

    # It appears in the open queue without a reload.
    row = page.locator(f"#escalation-{escalation.pk}")
    row.wait_for()
    assert page.evaluate("window.stillTheSamePage") is True
    assert "Nothing relevant found" in row.inner_text() and "criptomonedas" in row.inner_text()
    assert row.locator(".badge.reason").get_attribute("title") == "NO_CONTEXT"  # the code, in the tooltip
    assert "Nothing relevant found" in page.locator("#reason-counts").inner_text()
    page.screenshot(path=str(SCREENSHOTS / "desk-queue.png"), full_page=True)

    # The agent opens it: the reason's summary and the bot's last turn are there.
    row.locator("a.customer").click()
    page.wait_for_url(f"{live_server.url}/desk/conversations/{conversation.pk}/")
    assert "not in the knowledge base" in page.locator("#escalation").inner_text()
    page.locator("#trace-panel .last-turn").wait_for()  # the traces room serves this panel (htmx)
    panel = page.locator("#trace-panel").inner_text().lower()
    assert "route document" in panel and "retrieved chunks" in panel and "full trace" in panel
    assert "escalated: Nothing relevant found" in page.locator("#thread").inner_text()

    # Take over; a canned reply plus the agent's own words go out through the web chat.
    page.click("text=Take over")
    page.locator("text=You have this conversation.").wait_for()
    page.click(".canned a.chip >> text=Saludo")
    composer = page.locator("#composer-text")
    assert composer.input_value().startswith("Hola, soy parte del equipo")
    composer.press("End")
    composer.press_sequentially(" Por ahora no aceptamos criptomonedas.")
    page.click("#composer button[type=submit]")
    agent_line = page.locator("#thread .msg.agent").last
    agent_line.wait_for()
    assert "criptomonedas" in agent_line.inner_text()
    reply = Message.objects.get(conversation=conversation, author="agent")
    assert reply.status == "sent" and reply.text.endswith("Por ahora no aceptamos criptomonedas.")

    # The customer writes again while the agent holds the conversation: the bot stays silent.
    taken = Event.objects.get(conversation=conversation, kind="taken_over")
    chat_message_receive(conversation=conversation, text="gracias, ¿y cuánto cuesta la reconexión?")
    page.locator("#thread >> text=¿y cuánto cuesta la reconexión?").wait_for()
    assert not Message.objects.filter(conversation=conversation, author="bot",
                                      created_at__gte=taken.created_at).exists()
    assert Trace.objects.filter(conversation=conversation).order_by("-pk").first().silenced_at == "gate"
    page.screenshot(path=str(SCREENSHOTS / "desk-conversation.png"), full_page=True)

    # Hand back: the bot answers the next message, and the agent sees it arrive.
    page.click("text=Hand back to the bot")
    page.locator("text=The bot is answering this conversation.").wait_for()
    chat_message_receive(conversation=conversation, text="cuanto cobran por reconexion de fibra")
    answers = Message.objects.filter(conversation=conversation, author="bot").exclude(pk=first_answer.pk)
    assert answers.filter(created_at__gt=taken.created_at).count() == 1
    expect(page.locator("#thread .msg.bot")).to_have_count(3)  # the first answer, the notice, this answer
    thread = page.locator("#thread").inner_text()
    assert "handed back to the bot by ana" in thread
    assert thread.count(answers.get(created_at__gt=taken.created_at).text) == 2  # the same question, answered again


def test_the_agent_reads_what_the_bot_knew_on_the_escalation_card(live_server, browser_page, small_kb,
                                                                  healthy_billing, make_staff, settings):
    from desk.chat import chat_message_receive
    from desk.models import Escalation

    settings.OPENAI_API_KEY = settings.OPENAI_BASE_URL = ""
    make_staff("ana", "agent", password="ana-password-1")
    page = browser_page
    healthy_billing.set_fault("503")  # the billing call fails: no writer runs, the note says what the bot knew
    conversation = _customer("Marisol Rojas", "C-1001")
    chat_message_receive(conversation=conversation, text="¿Por qué mi factura llegó más alta este mes?")
    escalation = Escalation.objects.get(conversation=conversation)
    assert escalation.reason == "TOOL_ERROR"

    log_in(page, live_server.url, "ana", "ana-password-1", f"/desk/conversations/{conversation.pk}/")
    note = page.locator("#escalation #internal-note")
    note.wait_for()
    text = note.inner_text()
    assert "What the bot knew" in text and "Customer: identified as C-1001." in text
    assert "Billing: invoice_change failed — http_503" in text and "The bot wrote no reply." in text
    # The bot's last turn points to the card instead of printing the same note a second time
    page.locator("#trace-panel #last-turn-note-above").wait_for()
    assert page.locator("#trace-panel .internal-note").count() == 0
    assert page.locator("main").inner_text().count("Billing: invoice_change failed — http_503") == 1
    page.screenshot(path=str(SCREENSHOTS / "desk-internal-note.png"), full_page=True)


def test_the_agent_reads_the_figures_and_formulas_of_the_bots_answer(live_server, browser_page, small_kb,
                                                                      healthy_billing, make_staff, settings):
    from desk.chat import chat_message_receive
    from traces.models import Trace

    settings.OPENAI_API_KEY = settings.OPENAI_BASE_URL = ""
    make_staff("ana", "agent", password="ana-password-1")
    page = browser_page
    conversation = _customer("Marisol Rojas", "C-1001")
    chat_message_receive(conversation=conversation, text="¿Por qué mi factura llegó más alta este mes?")
    trace = Trace.objects.get(conversation=conversation)
    assert trace.outcome == "answered"
    delta = next(e for e in trace.evidence if e.get("fact_kind") == "invoice_delta")

    log_in(page, live_server.url, "ana", "ana-password-1", f"/desk/conversations/{conversation.pk}/")
    note = page.locator("#trace-panel .last-turn .internal-note")
    note.wait_for()
    text = note.inner_text()
    # The note gives the agent the root cause with its figure, and each figure with its evidence id: what the
    # customer was told can be checked against billing line by line.
    assert text.startswith("Root cause: a one-off charge on the bill — charge USD 15.00")
    assert f"[{delta['id']}]" in text and "17.40" in text
    assert "[E" not in page.locator("#thread .msg.bot").first.inner_text()  # the customer's copy has no ids
