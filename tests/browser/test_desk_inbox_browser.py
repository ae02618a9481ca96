"""The agent's working day in Chromium: an unidentified customer escalates; the agent reaches the conversation
with the keyboard, takes it over, links the account by cédula, answers with Ctrl+Enter and proposes a credit
note; another supervisor approves it with the invoice's context beside it; the agent reads the decision. Then
every desk page at 390 px and 1,440 px without sideways scroll."""

import re
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import BROWSER_MARKS, SCREENSHOTS, assert_no_sideways_scroll, log_in

pytestmark = BROWSER_MARKS
CEDULA = "V-26042465"  # the simulator's C-1001


def test_identify_answer_propose_approve_and_read_the_decision(live_server, browser_page, healthy_billing,
                                                              make_staff):
    from billing.answers.money import money_text
    from desk.models import CreditNoteRequest, Message
    from tests.support.factories import escalated

    make_staff("ana", "agent", password="pw-ana-12345")
    make_staff("sol", "supervisor", password="pw-sol-12345")
    escalated(name="Older customer", customer_id="")
    unknown = escalated(name="Cliente sin cuenta", customer_id="", text="me cobraron doble").conversation
    page = browser_page

    log_in(page, live_server.url, "ana", "pw-ana-12345", "/desk/")
    expect(page).to_have_title(re.compile(r"^\(2\) "))  # two escalations wait for an agent
    page.keyboard.press("j")
    page.keyboard.press("j")  # the second row: longest waiting first, so the newer customer
    expect(page.locator("tr.kb-current .customer")).to_have_text("Cliente sin cuenta")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/desk/conversations/{unknown.pk}/")
    page.keyboard.press("t")
    page.locator("#composer-text").wait_for()
    assert "not identified" in page.locator(".conv-head").inner_text()

    page.fill("#identify-q", CEDULA)
    page.get_by_role("button", name="Search billing").click()
    page.get_by_role("button", name="Link C-1001").click()
    expect(page.locator(".conv-head")).to_contain_text("customer C-1001")

    page.keyboard.press("r")
    page.keyboard.type("Hola, ya revisamos su cuenta.")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#thread")).to_contain_text("Hola, ya revisamos su cuenta.")
    assert Message.objects.filter(conversation=unknown, author="agent").count() == 1

    page.select_option("#cn-invoice", index=1)
    page.fill("input[name=amount]", "3.00")
    page.fill("#cn-reason", "Cobro repetido confirmado con el cliente")
    page.get_by_role("button", name="Propose for approval").click()
    expect(page.locator("#credit-notes")).to_contain_text("proposed; a supervisor approves it")
    proposal = CreditNoteRequest.objects.get()
    page.get_by_role("button", name="Log out").click()

    log_in(page, live_server.url, "sol", "pw-sol-12345", "/desk/credit-notes/")
    row = page.locator(f"#credit-note-{proposal.pk}")
    expect(row).to_contain_text(f"Total {proposal.context['total']} {proposal.currency}")
    expect(row).to_contain_text("Cobro repetido confirmado con el cliente")
    page.screenshot(path=str(SCREENSHOTS / "desk-approval-context.png"), full_page=True)
    row.get_by_role("button", name="Approve and send").click()
    expect(page.locator("#credit-lists")).to_contain_text("Sent to billing")
    page.get_by_role("button", name="Log out").click()

    log_in(page, live_server.url, "ana", "pw-ana-12345", f"/desk/conversations/{unknown.pk}/")
    shown = money_text(Decimal("3.00"), proposal.currency, "es")  # the contact's notation: USD 3,00 / Bs. 3,00
    expect(page.locator("#thread")).to_contain_text(f"credit note of {shown}")
    expect(page.locator("#thread")).to_contain_text(f"Supervisor sol approved the credit note for {shown}")
    page.goto(f"{live_server.url}/desk/credit-notes/")
    expect(page.locator(f"#my-credit-note-{proposal.pk}")).to_contain_text("Sent to billing")


NOTIFICATIONS_SPY = """
window.shown = [];
window.Notification = function (title, options) { window.shown.push(title + ": " + options.body); };
window.Notification.permission = "granted";
window.Notification.requestPermission = function () { return Promise.resolve("granted"); };
"""


def test_a_new_escalation_counts_in_the_tab_title_and_notifies(live_server, browser_page, make_staff):
    from tests.support.factories import escalated

    make_staff("ana", "agent", password="pw-ana-12345")
    escalated(name="Primera")
    page = browser_page
    page.add_init_script(NOTIFICATIONS_SPY)  # the browser's notifications, allowed and recorded
    log_in(page, live_server.url, "ana", "pw-ana-12345", "/desk/")
    expect(page).to_have_title(re.compile(r"^\(1\) Desk · TraceDesk"))
    escalated(name="Segunda")
    expect(page).to_have_title(re.compile(r"^\(2\) Desk · TraceDesk"))  # the next poll of the list
    assert page.evaluate("window.shown") == ["TraceDesk: A new escalation is waiting."]


@pytest.mark.parametrize("width", [390, 1440])
def test_every_desk_page_fits_without_sideways_scroll(live_server, browser_page, healthy_billing, make_staff,
                                                      width):
    from desk import credit_notes as cn
    from desk import services
    from tests.support.factories import escalated

    sol = make_staff("sol", "supervisor", password="pw-sol-12345")
    ana = make_staff("ana", "agent", password="pw-ana-12345")
    long_name = "María Fernanda de los Ángeles Rodríguez-Villalobos"
    first = escalated(name=long_name, reason="TOOL_ERROR", wa_id="584125550101",
                      text="mi factura llegó con un cargo repetido " * 6)
    escalated(name="Pedro", reason="UNGROUNDED_OUTPUT")
    done = escalated(name="Resuelto", reason="NO_CONTEXT")
    services.conversation_take_over(conversation_id=done.conversation_id, agent=sol)
    services.conversation_resolve(conversation_id=done.conversation_id, agent=sol)
    cn.credit_note_propose(conversation=first.conversation, agent=ana, invoice_id="F-1001-202610",
                           amount="2.00", currency="", reason="Cargo repetido " * 10)
    page = browser_page
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server.url, "sol", "pw-sol-12345", "/desk/")
    paths = ["/desk/", "/desk/?view=unassigned", "/desk/?view=mine", "/desk/?view=waiting",
             "/desk/?view=resolved", f"/desk/conversations/{first.conversation_id}/",
             f"/desk/contacts/{first.conversation.contact_id}/", "/desk/search/?q=factura",
             "/desk/credit-notes/"]
    for path in paths:
        page.goto(f"{live_server.url}{path}")
        page.locator("main").wait_for()
        assert_no_sideways_scroll(page)
    page.goto(f"{live_server.url}/desk/")
    page.screenshot(path=str(SCREENSHOTS / f"desk-inbox-{width}.png"), full_page=True)
